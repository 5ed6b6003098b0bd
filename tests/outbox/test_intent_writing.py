"""core.message_kinds: which intents a transition calls for, their keys, destinations, bodies and due times."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core import templates
from core.destinations import Destination, MessageKind
from core.edges import AttemptState, RecordState
from core.intent_kinds import IntentKind
from core.message_kinds import (
    GUARD_DELAY,
    KINDS,
    completion_intent,
    completion_key,
    guard_key,
    holding_reply_key,
    intents_for_verdict,
    label,
    still_running_intent,
    still_running_key,
)
from core.snapshots import AttemptSnapshot, RecordSnapshot, SettledEvent, Settlement
from core.states import EventOutcome
from core.text import message_text

NOW = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)
ATTEMPT_ID = "att_0123456789abcdef01234567"


def record(**changes: object) -> RecordSnapshot:
    base = RecordSnapshot(
        event_id=31,
        state=RecordState.admitted,
        reason="",
        bucket_id=7,
        recording_id=500,
        acknowledge=True,
        reply_kind=MessageKind.comment,
        reply_bucket_id=7,
        reply_recording_id=400,
    )
    return replace(base, **changes)  # type: ignore[arg-type]


def blocked(**changes: object) -> RecordSnapshot:
    return record(**({"state": RecordState.blocked, "reason": "no_route"} | changes))


def attempt(*, live: bool = True, stop_reason: str = "failed") -> AttemptSnapshot:
    return AttemptSnapshot(
        attempt_id=ATTEMPT_ID,
        task_id=4,
        state=AttemptState.running if live else AttemptState.ended,
        started_at=NOW - timedelta(minutes=10),
        progress_at=None,
        stop_reason="" if live else stop_reason,
    )


# -- keys -----------------------------------------------------------------------------------


def test_keys_are_one_per_thing_answered_for() -> None:
    assert guard_key(31) == "guard_ack:event:31"
    assert holding_reply_key(31) == "holding_reply:event:31"
    assert still_running_key(ATTEMPT_ID, 2) == f"still_running:attempt:{ATTEMPT_ID}:2"
    assert completion_key(ATTEMPT_ID) == f"completion:attempt:{ATTEMPT_ID}"


def test_intent_kinds() -> None:
    assert [kind.value for kind in IntentKind] == [
        "guard_ack", "holding_reply", "still_running", "completion", "worker_ack", "worker_reply", "worker_note",
    ]


# -- the guard ------------------------------------------------------------------------------


@pytest.mark.parametrize("state", [RecordState.admitted, RecordState.queued])
def test_a_request_admitted_or_queued_arms_the_guard(state: RecordState) -> None:
    (guard,) = intents_for_verdict(record(state=state), NOW)
    assert guard.key == "guard_ack:event:31"
    assert guard.kind is IntentKind.guard_ack
    assert guard.event_id == 31
    assert (guard.task_id, guard.attempt_id, guard.occurrence) == (None, None, 0)
    assert guard.body == "👀 received"


def test_the_guard_boosts_the_events_own_recording_not_the_reply_destination() -> None:
    (guard,) = intents_for_verdict(record(), NOW)
    assert guard.destination == Destination(MessageKind.boost, 7, 500)


def test_the_guard_boosts_any_positive_recording_in_any_bucket_and_nothing_else() -> None:
    (smallest,) = intents_for_verdict(record(recording_id=1, bucket_id=0), NOW)
    assert smallest.destination == Destination(MessageKind.boost, 0, 1)
    assert [i.kind for i in intents_for_verdict(record(recording_id=0), NOW)] == []
    assert [i.kind for i in intents_for_verdict(record(bucket_id=-1), NOW)] == []


def test_a_kinds_label_is_its_tables_and_an_unknown_kind_shows_as_itself() -> None:
    assert label(IntentKind.guard_ack) == KINDS[IntentKind.guard_ack].label
    assert label("retraction_of_tomorrow") == "retraction_of_tomorrow"


def test_the_guard_is_due_thirty_seconds_after_the_verdict() -> None:
    assert timedelta(seconds=30) == GUARD_DELAY
    (guard,) = intents_for_verdict(record(), NOW)
    assert guard.not_before == NOW + timedelta(seconds=30)
    (slow,) = intents_for_verdict(record(), NOW, guard_delay=timedelta(seconds=5))
    assert slow.not_before == NOW + timedelta(seconds=5)


@pytest.mark.parametrize("state", list(RecordState))
def test_a_trigger_that_asks_for_nothing_calls_for_nothing(state: RecordState) -> None:
    assert intents_for_verdict(record(state=state, acknowledge=False), NOW) == ()
    assert intents_for_verdict(blocked(acknowledge=False), NOW) == ()


@pytest.mark.parametrize(
    "state",
    [
        RecordState.seen,
        RecordState.dispatched,
        RecordState.completed,
        RecordState.discarded,
        RecordState.held,
    ],
)
def test_no_guard_for_a_record_not_admitted_or_queued(state: RecordState) -> None:
    assert intents_for_verdict(record(state=state), NOW) == ()


@pytest.mark.parametrize("reason", ["no_route", "out_of_scope", "untrusted_performer"])
def test_nothing_for_a_discarded_record(reason: str) -> None:
    assert intents_for_verdict(record(state=RecordState.discarded, reason=reason), NOW) == ()


@pytest.mark.parametrize("recording_id", [0, -5])
def test_no_guard_without_a_recording_to_boost(recording_id: int) -> None:
    assert intents_for_verdict(record(recording_id=recording_id), NOW) == ()


# -- the holding reply ----------------------------------------------------------------------


def test_a_request_with_no_route_gets_a_holding_reply_at_once() -> None:
    (holding,) = intents_for_verdict(blocked(), NOW)
    assert holding.key == "holding_reply:event:31"
    assert holding.kind is IntentKind.holding_reply
    assert holding.event_id == 31
    assert holding.destination == Destination(MessageKind.comment, 7, 400)
    assert holding.not_before == NOW
    assert holding.body == templates.render(templates.holding_reply(31), MessageKind.comment)
    assert "bin/connect redispatch 31" in holding.body


def test_a_holding_reply_in_a_campfire_is_a_chat_line() -> None:
    (holding,) = intents_for_verdict(
        blocked(reply_kind=MessageKind.chat_line, reply_recording_id=88, reply_bucket_id=9), NOW
    )
    assert holding.destination == Destination(MessageKind.chat_line, 9, 88)
    assert holding.body == "\n".join(templates.holding_reply(31))


@pytest.mark.parametrize(
    "reason", ["read_failed", "throttled", "trust_unverified", "unroutable", "spawn_failed", ""]
)
def test_no_holding_reply_for_other_blocks(reason: str) -> None:
    assert intents_for_verdict(blocked(reason=reason), NOW) == ()


@pytest.mark.parametrize(
    "changes",
    [
        {"reply_kind": None},
        {"reply_kind": MessageKind.boost},
        {"reply_recording_id": 0},
        {"reply_recording_id": -1},
    ],
)
def test_no_holding_reply_without_a_reply_destination(changes: dict[str, object]) -> None:
    assert intents_for_verdict(blocked(**changes), NOW) == ()


# -- the still-running notice ---------------------------------------------------------------


def test_a_live_attempt_gets_its_still_running_notice() -> None:
    intent = still_running_intent(attempt(), record(), 2, NOW)
    assert intent is not None
    assert intent.key == f"still_running:attempt:{ATTEMPT_ID}:2"
    assert intent.kind is IntentKind.still_running
    assert (intent.event_id, intent.task_id, intent.attempt_id) == (None, 4, ATTEMPT_ID)
    assert intent.occurrence == 2
    assert intent.destination == Destination(MessageKind.comment, 7, 400)
    assert intent.not_before == NOW
    assert intent.body == templates.render(
        templates.still_running(attempt(), 2, NOW), MessageKind.comment
    )


def test_an_ended_attempt_gets_no_still_running_notice() -> None:
    assert still_running_intent(attempt(live=False), record(), 1, NOW) is None


@pytest.mark.parametrize("occurrence", [0, -1])
def test_still_running_occurrences_count_from_one(occurrence: int) -> None:
    assert still_running_intent(attempt(), record(), occurrence, NOW) is None


def test_no_still_running_notice_without_a_reply_destination() -> None:
    assert still_running_intent(attempt(), record(reply_kind=None), 1, NOW) is None


# -- the completion notice ------------------------------------------------------------------


def test_an_ended_attempt_with_a_failure_gets_its_completion_notice() -> None:
    events = [SettledEvent(31, EventOutcome.failed, None, Settlement.reported)]
    intent = completion_intent(attempt(live=False), events, record(), NOW)
    assert intent is not None
    assert intent.key == f"completion:attempt:{ATTEMPT_ID}"
    assert intent.kind is IntentKind.completion
    assert (intent.event_id, intent.task_id, intent.attempt_id) == (None, 4, ATTEMPT_ID)
    assert intent.destination == Destination(MessageKind.comment, 7, 400)
    assert intent.not_before == NOW
    lines = templates.completion(attempt(live=False), events)
    assert lines is not None
    assert intent.body == templates.render(lines, MessageKind.comment)


def test_no_completion_notice_when_every_event_succeeded_with_a_reply() -> None:
    events = [SettledEvent(31, EventOutcome.succeeded, 600, Settlement.reported)]
    assert completion_intent(attempt(live=False), events, record(), NOW) is None


def test_no_completion_notice_for_a_live_attempt() -> None:
    events = [SettledEvent(31, EventOutcome.failed, None, Settlement.reported)]
    assert completion_intent(attempt(live=True), events, record(), NOW) is None


def test_no_completion_notice_without_a_reply_destination() -> None:
    events = [SettledEvent(31, EventOutcome.failed, None, Settlement.reported)]
    assert completion_intent(attempt(live=False), events, record(reply_recording_id=0), NOW) is None


# -- whatever the record says ---------------------------------------------------------------

RECORDS = st.builds(
    RecordSnapshot,
    event_id=st.integers(1, 10**12),
    state=st.sampled_from(RecordState),
    reason=st.sampled_from(["", "no_route", "read_failed", "out_of_scope"]),
    bucket_id=st.integers(-2, 50),
    recording_id=st.integers(-2, 50),
    acknowledge=st.booleans(),
    reply_kind=st.none() | st.sampled_from(MessageKind),
    reply_bucket_id=st.integers(-2, 50),
    reply_recording_id=st.integers(-2, 50),
)


@given(RECORDS)
def test_a_verdict_calls_for_at_most_one_intent_and_only_as_the_rules_say(
    snapshot: RecordSnapshot,
) -> None:
    written = intents_for_verdict(snapshot, NOW)
    assert len(written) <= 1
    for intent in written:
        assert snapshot.acknowledge
        assert intent.event_id == snapshot.event_id
        assert intent.destination.recording_id > 0
        assert message_text(intent.body)
        if intent.kind is IntentKind.guard_ack:
            assert snapshot.state in (RecordState.admitted, RecordState.queued)
            assert intent.key == guard_key(snapshot.event_id)
            assert intent.destination.kind is MessageKind.boost
        else:
            assert intent.kind is IntentKind.holding_reply
            assert (snapshot.state, snapshot.reason) == (RecordState.blocked, "no_route")
            assert intent.key == holding_reply_key(snapshot.event_id)
            assert intent.destination.kind is snapshot.reply_kind
