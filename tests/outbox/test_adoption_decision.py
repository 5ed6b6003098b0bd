"""core.adoption: reconciliation adopts exactly one unowned, non-worker, rival-free match, or none."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.adoption import (
    RIVAL_STATES,
    Adopt,
    Indeterminate,
    Neighbour,
    Rival,
    decide_adoption,
    rivals,
    worker_message_ids,
)
from core.destinations import ListedMessage, MessageKind
from core.edges import DeliveryState, GuardState
from core.snapshots import TaskEventSnapshot
from core.text import message_text

AGENT = 1000
SINCE = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)
AFTER = SINCE + timedelta(minutes=3)
GUARD = "👀 received"
NOTICE = "<div>Task 4 ended: the worker failed.<br>Event 9: failed.</div>"


def listed(
    identifier: int, content: str, *, creator: int = AGENT, created_at: datetime = AFTER
) -> ListedMessage:
    return ListedMessage(identifier, created_at, creator, message_text(content))


def adopt(
    body: str,
    messages: list[ListedMessage],
    *,
    owned: frozenset[int] = frozenset(),
    workers: frozenset[int] = frozenset(),
    rivals: tuple[Rival, ...] = (),
    intent_id: int = 1,
) -> Adopt | Indeterminate:
    return decide_adoption(
        intent_id=intent_id,
        body=body,
        listed=messages,
        since=SINCE,
        agent_id=AGENT,
        owned_receipts=owned,
        worker_messages=workers,
        rivals=rivals,
    )


def test_exactly_one_match_is_adopted_among_a_workers_words_and_a_person_quoting_it() -> None:
    messages = [
        listed(10, GUARD),  # the worker's own acknowledgement, same words
        listed(11, GUARD, creator=77),  # a person quoting it
        listed(12, GUARD),  # the guard's boost
        listed(13, "thanks"),
    ]
    assert adopt(GUARD, messages, workers=frozenset({10})) == Adopt(12)


def test_a_stored_comment_wrapped_by_basecamp_still_matches() -> None:
    stored = NOTICE.replace("<div>", '<div dir="auto">', 1)
    assert adopt(NOTICE, [listed(40, stored)]) == Adopt(40)


def test_two_matches_are_indeterminate() -> None:
    assert adopt(GUARD, [listed(12, GUARD), listed(13, GUARD)]) == Indeterminate(
        "2 matching messages at the destination"
    )


def test_no_match_is_indeterminate() -> None:
    assert adopt(GUARD, [listed(13, "thanks")]) == Indeterminate(
        "0 matching messages at the destination"
    )


def test_the_body_matters() -> None:
    assert adopt(NOTICE, [listed(12, GUARD)]) == Indeterminate(
        "0 matching messages at the destination"
    )


def test_a_message_listed_twice_is_one_candidate() -> None:
    assert adopt(GUARD, [listed(12, GUARD), listed(12, GUARD)]) == Adopt(12)


def test_a_match_another_intent_owns_is_not_a_candidate() -> None:
    messages = [listed(12, GUARD), listed(13, GUARD)]
    assert adopt(GUARD, messages, owned=frozenset({12})) == Adopt(13)
    assert adopt(GUARD, messages, owned=frozenset({12, 13})) == Indeterminate(
        "0 matching messages at the destination"
    )


def test_a_workers_own_message_is_never_adopted() -> None:
    assert adopt(GUARD, [listed(10, GUARD)], workers=frozenset({10})) == Indeterminate(
        "0 matching messages at the destination"
    )


def test_another_persons_message_is_never_adopted() -> None:
    assert adopt(GUARD, [listed(12, GUARD, creator=77)]) == Indeterminate(
        "0 matching messages at the destination"
    )


def test_a_message_from_before_the_listing_window_is_never_adopted() -> None:
    old = listed(12, GUARD, created_at=SINCE - timedelta(seconds=1))
    assert adopt(GUARD, [old]) == Indeterminate("0 matching messages at the destination")
    assert adopt(GUARD, [listed(12, GUARD, created_at=SINCE)]) == Adopt(12)


@pytest.mark.parametrize("rival_body", [GUARD, f"<div>{GUARD}</div>", f"  {GUARD}\n"])
def test_a_rival_with_the_same_words_makes_it_indeterminate(rival_body: str) -> None:
    decision = adopt(GUARD, [listed(12, GUARD)], rivals=(Rival(8, rival_body),))
    assert decision == Indeterminate("intent 8 could claim the same message")


def test_a_rival_with_other_words_does_not_block_adoption() -> None:
    assert adopt(GUARD, [listed(12, GUARD)], rivals=(Rival(8, NOTICE),)) == Adopt(12)


def test_the_intent_is_not_its_own_rival() -> None:
    assert adopt(GUARD, [listed(12, GUARD)], rivals=(Rival(1, GUARD),), intent_id=1) == Adopt(12)


def test_the_count_is_decided_before_rivals() -> None:
    decision = adopt(GUARD, [listed(12, GUARD), listed(13, GUARD)], rivals=(Rival(8, GUARD),))
    assert decision == Indeterminate("2 matching messages at the destination")


@pytest.mark.parametrize("body", ["", "   ", "<div></div>", "<div><br></div>"])
def test_a_body_with_no_words_never_adopts(body: str) -> None:
    assert adopt(body, [listed(12, ""), listed(13, "<p></p>")]) == Indeterminate(
        "the body has no words to match"
    )


# -- the worker's own messages --------------------------------------------------------------

ROWS = [
    TaskEventSnapshot(1, DeliveryState.completed, GuardState.armed, ack_id=10, reply_id=20),
    TaskEventSnapshot(2, DeliveryState.completed, GuardState.fired, ack_id=None, reply_id=21,
                      adopted_reply_id=None),
    TaskEventSnapshot(3, DeliveryState.completed, GuardState.unarmed, ack_id=11,
                      adopted_reply_id=30),
]


def test_at_a_boost_destination_the_workers_messages_are_its_acknowledgements() -> None:
    assert worker_message_ids(MessageKind.boost, ROWS) == {10, 11}


@pytest.mark.parametrize("kind", [MessageKind.comment, MessageKind.chat_line])
def test_at_a_reply_destination_the_workers_messages_are_acknowledgements_and_replies(
    kind: MessageKind,
) -> None:
    assert worker_message_ids(kind, ROWS) == {10, 11, 20, 21, 30}


def test_a_comment_id_equal_to_a_boost_id_does_not_block_a_guard() -> None:
    # Ids are scoped by kind: reply 20 is a comment; a boost 20 is another message.
    workers = worker_message_ids(MessageKind.boost, ROWS)
    assert adopt(GUARD, [listed(20, GUARD)], workers=workers) == Adopt(20)


# -- whatever the listing says --------------------------------------------------------------

WORDS = st.sampled_from([GUARD, "thanks", NOTICE, "<div>👀 received</div>", ""])
IDS = st.integers(1, 12)
MESSAGES = st.lists(
    st.builds(
        listed,
        IDS,
        WORDS,
        creator=st.sampled_from([AGENT, 77]),
        created_at=st.sampled_from([SINCE - timedelta(minutes=1), SINCE, AFTER]),
    ),
    max_size=12,
)
ID_SETS = st.frozensets(IDS, max_size=4)
RIVALS = st.lists(st.builds(Rival, st.integers(1, 5), WORDS), max_size=3).map(tuple)


@given(WORDS, MESSAGES, ID_SETS, ID_SETS, RIVALS)
def test_an_adoption_only_ever_names_the_one_eligible_message(
    body: str,
    messages: list[ListedMessage],
    owned: frozenset[int],
    workers: frozenset[int],
    rivals: tuple[Rival, ...],
) -> None:
    words = message_text(body)
    eligible = {
        message.id
        for message in messages
        if words
        and message.text == words
        and message.creator_id == AGENT
        and message.created_at >= SINCE
        and message.id not in owned
        and message.id not in workers
    }
    rival_matches = any(r.intent_id != 1 and message_text(r.body) == words for r in rivals)
    decision = adopt(body, messages, owned=owned, workers=workers, rivals=rivals)
    match decision:
        case Adopt(receipt_id):
            assert eligible == {receipt_id}
            assert receipt_id in {message.id for message in messages}
            assert receipt_id not in owned
            assert receipt_id not in workers
            assert not rival_matches
        case Indeterminate(_):
            assert len(eligible) != 1 or rival_matches


def test_ten_thousand_listed_messages_are_decided_well_under_fifty_milliseconds() -> None:
    messages = [listed(identifier, f"reply number {identifier}") for identifier in range(1, 10_000)]
    messages.append(listed(10_000, NOTICE))
    owned = frozenset(range(1, 5_000))
    workers = frozenset(range(5_000, 9_000))
    rivals = tuple(Rival(identifier, f"notice {identifier}") for identifier in range(2, 50))
    fastest = float("inf")
    for _ in range(5):
        started = time.perf_counter()
        decision = adopt(NOTICE, messages, owned=owned, workers=workers, rivals=rivals)
        fastest = min(fastest, time.perf_counter() - started)
        assert decision == Adopt(10_000)
    assert fastest < 0.050


def test_ten_thousand_matching_messages_are_decided_well_under_fifty_milliseconds() -> None:
    messages = [listed(identifier, GUARD) for identifier in range(1, 10_001)]
    fastest = float("inf")
    for _ in range(5):
        started = time.perf_counter()
        decision = adopt(GUARD, messages, owned=frozenset({1}), workers=frozenset({2}))
        fastest = min(fastest, time.perf_counter() - started)
        assert decision == Indeterminate("9998 matching messages at the destination")
    assert fastest < 0.050


def test_rivals_are_the_other_intents_at_the_destination_that_may_have_a_message_there() -> None:
    neighbours = [
        Neighbour(1, "sending", "mine"),
        *(Neighbour(n, state, f"body {n}") for n, state in enumerate(RIVAL_STATES, start=2)),
        Neighbour(9, "canceled", "refused"),
        Neighbour(10, "sent", "sent without a receipt"),
    ]
    assert rivals(1, neighbours) == [Rival(n, f"body {n}") for n in range(2, 2 + len(RIVAL_STATES))]
    assert set(RIVAL_STATES) == {"pending", "sending", "indeterminate", "abandoned"}
