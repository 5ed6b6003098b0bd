"""core.message_kinds' claim rules: at claim time an intent is claimed only while it is still called for."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.destinations import MessageKind
from core.edges import AttemptState, DeliveryState, GuardState, RecordState
from core.intent_kinds import IntentKind
from core.message_kinds import Cancel, Claim, ClaimDecision, ClaimFacts, HoldBack, decide_claim
from core.snapshots import AttemptSnapshot, RecordSnapshot, TaskEventSnapshot

NO_LONGER = Cancel("no longer called for")
ATTEMPT_ENDED = Cancel("the attempt ended before the notice went out")


def decided(
    kind: IntentKind,
    record: RecordSnapshot | None = None,
    task_events: Iterable[TaskEventSnapshot] = (),
    attempt: AttemptSnapshot | None = None,
) -> ClaimDecision:
    """``decide_claim`` with the facts its kind's snapshot reads."""
    return decide_claim(kind, ClaimFacts(record, tuple(task_events), attempt))


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


def row(
    delivery: DeliveryState = DeliveryState.admitted, guard: GuardState = GuardState.armed
) -> TaskEventSnapshot:
    return TaskEventSnapshot(event_id=31, delivery=delivery, guard=guard)


def attempt(state: AttemptState) -> AttemptSnapshot:
    return AttemptSnapshot(
        attempt_id="att_0123456789abcdef01234567",
        task_id=4,
        state=state,
        started_at=datetime(2026, 11, 29, 12, 0, tzinfo=UTC),
        progress_at=None,
        stop_reason="lost" if state is AttemptState.ended else "",
    )


# -- the guard ------------------------------------------------------------------------------


@pytest.mark.parametrize("state", [RecordState.admitted, RecordState.queued, RecordState.dispatched])
def test_a_guard_still_called_for_is_claimed_and_fires_its_task_rows(state: RecordState) -> None:
    decision = decided(IntentKind.guard_ack, record=record(state=state))
    assert decision == Claim(fires_guard=True)


@pytest.mark.parametrize(
    "rows",
    [
        (),
        (row(DeliveryState.admitted, GuardState.armed),),
        (row(DeliveryState.exposed, GuardState.armed),),
        (row(DeliveryState.exposed, GuardState.fired),),
        (row(DeliveryState.admitted, GuardState.unarmed),),
    ],
)
def test_a_guard_waits_through_rows_nobody_acknowledged(rows: tuple[TaskEventSnapshot, ...]) -> None:
    decision = decided(
        IntentKind.guard_ack, record=record(state=RecordState.dispatched), task_events=rows
    )
    assert decision == Claim(fires_guard=True)


def test_a_guard_whose_record_vanished_is_canceled() -> None:
    assert decided(IntentKind.guard_ack, record=None) == NO_LONGER


def test_a_guard_for_a_record_that_asks_for_nothing_is_canceled() -> None:
    assert decided(IntentKind.guard_ack, record=record(acknowledge=False)) == NO_LONGER


@pytest.mark.parametrize(
    "state",
    [
        RecordState.seen,
        RecordState.blocked,
        RecordState.completed,
        RecordState.discarded,
        RecordState.held,
    ],
)
def test_a_guard_for_a_record_that_moved_on_is_canceled(state: RecordState) -> None:
    assert decided(IntentKind.guard_ack, record=record(state=state)) == NO_LONGER


def test_a_guard_a_worker_canceled_by_get_dispatch_is_canceled() -> None:
    rows = (row(DeliveryState.exposed, GuardState.canceled),)
    decision = decided(
        IntentKind.guard_ack, record=record(state=RecordState.dispatched), task_events=rows
    )
    assert decision == NO_LONGER


@pytest.mark.parametrize("delivery", [DeliveryState.delivered, DeliveryState.completed])
def test_a_guard_for_an_event_a_worker_acknowledged_is_canceled(delivery: DeliveryState) -> None:
    # One retired row acknowledged, one live row armed: the event has been acknowledged.
    rows = (row(delivery, GuardState.armed), row(DeliveryState.admitted, GuardState.armed))
    decision = decided(
        IntentKind.guard_ack, record=record(state=RecordState.dispatched), task_events=rows
    )
    assert decision == NO_LONGER


@pytest.mark.parametrize("delivery", list(DeliveryState))
@pytest.mark.parametrize("state", [RecordState.dispatched, RecordState.completed, RecordState.admitted])
def test_a_guard_whose_claim_fired_a_row_is_called_for_while_its_record_stands(
    delivery: DeliveryState, state: RecordState
) -> None:
    # Retried after its claim: the row it told "acknowledged" was pulled, acknowledged, completed since.
    rows = (row(delivery, GuardState.fired), row(DeliveryState.exposed, GuardState.canceled))
    assert decided(IntentKind.guard_ack, record=record(state=state), task_events=rows) == Claim(fires_guard=True)


@pytest.mark.parametrize("gone", [None, record(state=RecordState.discarded)])
def test_a_fired_guard_whose_record_is_gone_or_discarded_is_canceled(gone: RecordSnapshot | None) -> None:
    rows = (row(DeliveryState.exposed, GuardState.fired),)
    assert decided(IntentKind.guard_ack, record=gone, task_events=rows) == NO_LONGER


# -- the holding reply ----------------------------------------------------------------------


def test_a_holding_reply_still_blocked_for_no_route_is_claimed() -> None:
    decision = decided(
        IntentKind.holding_reply, record=record(state=RecordState.blocked, reason="no_route")
    )
    assert decision == Claim(fires_guard=False)


@pytest.mark.parametrize(
    ("state", "reason"),
    [
        (RecordState.admitted, ""),
        (RecordState.dispatched, ""),
        (RecordState.blocked, "read_failed"),
        (RecordState.discarded, "no_route"),
        (RecordState.held, ""),
    ],
)
def test_a_holding_reply_stands_down_when_the_record_moved_on(state: RecordState, reason: str) -> None:
    decision = decided(IntentKind.holding_reply, record=record(state=state, reason=reason))
    assert decision == NO_LONGER


def test_a_holding_reply_whose_record_vanished_is_canceled() -> None:
    assert decided(IntentKind.holding_reply, record=None) == NO_LONGER


# -- the still-running notice ---------------------------------------------------------------


@pytest.mark.parametrize("state", [AttemptState.launching, AttemptState.running])
@pytest.mark.parametrize("outstanding", [DeliveryState.admitted, DeliveryState.exposed, DeliveryState.delivered])
def test_a_still_running_notice_for_a_live_attempt_with_work_outstanding_is_claimed(
    state: AttemptState, outstanding: DeliveryState
) -> None:
    rows = [row(DeliveryState.completed), row(outstanding)]
    assert decided(IntentKind.still_running, attempt=attempt(state), task_events=rows) == Claim()


def test_a_still_running_notice_stands_down_once_every_instruction_was_reported() -> None:
    """The worker reported everything; its process has yet to exit."""
    rows = [row(DeliveryState.completed), row(DeliveryState.completed)]
    decision = decided(IntentKind.still_running, attempt=attempt(AttemptState.running), task_events=rows)
    assert decision == Cancel("every instruction was reported before the notice went out")


def test_a_still_running_notice_is_not_posted_after_the_attempt_ended() -> None:
    decision = decided(IntentKind.still_running, attempt=attempt(AttemptState.ended))
    assert decision == ATTEMPT_ENDED


def test_a_still_running_notice_with_no_attempt_is_canceled() -> None:
    assert decided(IntentKind.still_running, attempt=None) == ATTEMPT_ENDED


# -- the completion notice ------------------------------------------------------------------


def test_a_completion_notice_is_always_claimed_and_fires_no_guard() -> None:
    assert decided(IntentKind.completion) == Claim(fires_guard=False)
    assert decided(IntentKind.completion, record=record(state=RecordState.completed)) == Claim()


def test_only_a_guard_claim_marks_guards_fired() -> None:
    decisions = [
        decided(IntentKind.holding_reply, record=record(state=RecordState.blocked, reason="no_route")),
        decided(IntentKind.still_running, attempt=attempt(AttemptState.running), task_events=[row()]),
        decided(IntentKind.completion),
    ]
    assert all(decision == Claim(fires_guard=False) for decision in decisions)


# -- whatever the snapshot says -------------------------------------------------------------

ROWS = st.lists(
    st.builds(
        TaskEventSnapshot,
        event_id=st.just(31),
        delivery=st.sampled_from(DeliveryState),
        guard=st.sampled_from(GuardState),
    ),
    max_size=4,
)


@given(
    st.none() | st.builds(record, state=st.sampled_from(RecordState), acknowledge=st.booleans()),
    ROWS,
)
def test_a_guard_is_claimed_exactly_when_the_rule_says(
    snapshot: RecordSnapshot | None, rows: list[TaskEventSnapshot]
) -> None:
    fired = any(r.guard == "fired" for r in rows)
    called_for = (
        snapshot is not None
        and snapshot.acknowledge
        and snapshot.state in ("admitted", "queued", "dispatched")
        and not any(r.guard in ("canceled", "refused") or r.delivery in ("delivered", "completed") for r in rows)
    ) or (fired and snapshot is not None and snapshot.state != "discarded")
    decision = decided(IntentKind.guard_ack, record=snapshot, task_events=rows)
    assert decision == (Claim(fires_guard=True) if called_for else NO_LONGER)


def test_a_resent_guard_whose_rows_were_refused_is_canceled_the_worker_answering() -> None:
    rows = (row(DeliveryState.exposed, GuardState.refused),)
    assert decided(IntentKind.guard_ack, record=record(state=RecordState.dispatched), task_events=rows) == NO_LONGER


# -- a worker's words and the completion notice, in the order written -----------------------

IN_ORDER = (IntentKind.worker_ack, IntentKind.worker_note, IntentKind.worker_reply, IntentKind.completion)


@given(kind=st.sampled_from(IN_ORDER), waiting=st.booleans())
def test_a_word_or_completion_waits_while_an_earlier_word_of_its_task_has_not_landed(
    kind: IntentKind, waiting: bool
) -> None:
    decision = decide_claim(kind, ClaimFacts(earlier_words_waiting=waiting))
    assert decision == (HoldBack() if waiting else Claim(fires_guard=False))


@given(kind=st.sampled_from(sorted(set(IntentKind) - set(IN_ORDER))))
def test_the_connectors_other_notices_never_wait_for_a_workers_words(kind: IntentKind) -> None:
    assert not isinstance(decide_claim(kind, ClaimFacts(earlier_words_waiting=True)), HoldBack)
