"""The adopted-reply rule (core.settlement): exactly one agent reply after delivery and before the next acknowledgement,
neither the worker's own nor a lifecycle message (by receipt, or by the words of a non-canceled intent)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hypothesis import given
from hypothesis import strategies as st

from core.destinations import ListedMessage
from core.settlement import (
    AdoptionRow,
    LifecycleMessages,
    choose_reply,
    is_candidate,
    may_become_candidate,
    next_acknowledgement,
)
from core.states import EventOutcome

AGENT, SOMEONE = 1049715901, 1049715902
DELIVERED = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
ROW = AdoptionRow(101, EventOutcome.unknown, DELIVERED)
NOTHING = LifecycleMessages(frozenset(), frozenset())


def reply(message_id: int, after: float, text: str = "done: the login page is fixed", creator: int = AGENT) -> ListedMessage:
    return ListedMessage(message_id, DELIVERED + timedelta(seconds=after), creator, text)


def choose(listed: list[ListedMessage], **overrides: object) -> int | None:
    options: dict[str, object] = {
        "agent_id": AGENT, "next_ack_at": None, "workers_own": frozenset(), "lifecycle": NOTHING,
    }
    options.update(overrides)
    return choose_reply(ROW, listed, **options)  # type: ignore[arg-type]


def test_the_one_reply_after_delivery_is_adopted() -> None:
    assert choose([reply(7, 60)]) == 7


def test_a_reply_at_or_before_delivery_is_not_adopted() -> None:
    assert choose([reply(7, 0)]) is None
    assert choose([reply(8, -5)]) is None
    assert choose([reply(8, -5), reply(9, 0.001)]) == 9


def test_a_reply_after_the_next_acknowledgement_is_not_adopted() -> None:
    assert choose([reply(7, 60)], next_ack_at=DELIVERED + timedelta(seconds=60)) is None
    assert choose([reply(7, 59)], next_ack_at=DELIVERED + timedelta(seconds=60)) == 7


def test_two_replies_adopt_neither() -> None:
    assert choose([reply(7, 60), reply(8, 90, "and the tests")]) is None


def test_someone_elses_message_is_not_the_agents_reply() -> None:
    assert choose([reply(7, 60, creator=SOMEONE)]) is None


def test_the_workers_own_acknowledgement_is_not_its_reply() -> None:
    assert choose([reply(7, 60, "👀"), reply(8, 70)], workers_own=frozenset({7})) == 8


def test_a_lifecycle_message_is_never_adopted_by_receipt_or_by_words() -> None:
    notice = "Still working on this."
    assert choose([reply(7, 60, notice), reply(8, 70)], lifecycle=LifecycleMessages(frozenset({7}), frozenset())) == 8
    assert choose([reply(7, 60, notice), reply(8, 70)], lifecycle=LifecycleMessages(frozenset(), frozenset({notice}))) == 8


def test_only_an_unknown_delivered_row_without_a_reply_is_a_candidate() -> None:
    assert is_candidate(ROW)
    assert not is_candidate(AdoptionRow(101, EventOutcome.succeeded, DELIVERED))
    assert not is_candidate(AdoptionRow(101, EventOutcome.unknown, None))
    assert not is_candidate(AdoptionRow(101, EventOutcome.unknown, DELIVERED, reply_id=5))
    assert not is_candidate(AdoptionRow(101, EventOutcome.unknown, DELIVERED, adopted_reply_id=5))
    assert choose_reply(
        AdoptionRow(101, EventOutcome.unknown, DELIVERED, reply_id=5), [reply(7, 60)],
        agent_id=AGENT, next_ack_at=None, workers_own=frozenset(), lifecycle=NOTHING,
    ) is None


def test_only_a_row_that_may_become_a_candidate_is_listed_for() -> None:
    """Before the settlement: a delivered row with no reported outcome and no reply will be left
    unknown, so it is listed for; a reported one, an undelivered one or one with a reply is not."""
    assert may_become_candidate(AdoptionRow(101, EventOutcome.none, DELIVERED))
    assert may_become_candidate(ROW)
    assert not may_become_candidate(AdoptionRow(101, EventOutcome.succeeded, DELIVERED))
    assert not may_become_candidate(AdoptionRow(101, EventOutcome.failed, DELIVERED))
    assert not may_become_candidate(AdoptionRow(101, EventOutcome.none, None))
    assert not may_become_candidate(AdoptionRow(101, EventOutcome.none, DELIVERED, reply_id=5))
    assert not may_become_candidate(AdoptionRow(101, EventOutcome.none, DELIVERED, adopted_reply_id=5))


def test_the_next_acknowledgement_is_the_earliest_later_one_on_the_task() -> None:
    rows = [
        ROW,
        AdoptionRow(102, EventOutcome.succeeded, DELIVERED + timedelta(seconds=300)),
        AdoptionRow(103, EventOutcome.unknown, DELIVERED + timedelta(seconds=120)),
        AdoptionRow(104, EventOutcome.unknown, DELIVERED - timedelta(seconds=120)),
        AdoptionRow(105, EventOutcome.unknown, None),
    ]
    assert next_acknowledgement(ROW, rows) == DELIVERED + timedelta(seconds=120)
    assert next_acknowledgement(rows[1], rows) is None


def test_an_acknowledgement_at_the_same_instant_is_not_after_the_rows_own() -> None:
    assert next_acknowledgement(ROW, [ROW, AdoptionRow(102, EventOutcome.unknown, DELIVERED)]) is None


messages = st.lists(
    st.builds(
        ListedMessage,
        st.integers(1, 40),
        st.integers(-600, 600).map(lambda seconds: DELIVERED + timedelta(seconds=seconds)),
        st.sampled_from([AGENT, SOMEONE]),
        st.sampled_from(["done", "Still working on this.", "👀", "fixed it"]),
    ),
    max_size=8,
    unique_by=lambda message: message.id,  # a listing names each message once
)


@given(
    messages,
    st.one_of(st.none(), st.integers(1, 600).map(lambda seconds: DELIVERED + timedelta(seconds=seconds))),
    st.frozensets(st.integers(1, 40), max_size=5),
    st.frozensets(st.integers(1, 40), max_size=5),
    st.frozensets(st.sampled_from(["Still working on this.", "👀"])),
)
def test_an_adopted_reply_is_the_one_message_every_filter_lets_through(
    listed: list[ListedMessage],
    next_ack_at: datetime | None,
    worker: frozenset[int],
    receipts: frozenset[int],
    words: frozenset[str],
) -> None:
    chosen = choose(listed, next_ack_at=next_ack_at, workers_own=worker, lifecycle=LifecycleMessages(receipts, words))
    passing = {
        message.id
        for message in listed
        if message.creator_id == AGENT
        and message.created_at > DELIVERED
        and (next_ack_at is None or message.created_at < next_ack_at)
        and message.id not in worker | receipts
        and message.text not in words
    }
    if len(passing) == 1:
        assert chosen == next(iter(passing))
    else:
        assert chosen is None
    if chosen is not None:
        (adopted,) = [message for message in listed if message.id == chosen]
        assert adopted.creator_id == AGENT
        assert adopted.text not in words
        assert chosen not in worker | receipts
