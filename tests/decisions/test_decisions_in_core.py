"""The decisions the shell once made itself, asked of core with plain values: the settlement's plan,
the waiting rule, the blocked-reset rule, recovery's decision tree and the route preflight."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hypothesis import given
from hypothesis import strategies as st

from core.admission import BLOCKED_RETRY_INTERVAL, BLOCKED_RETRY_WINDOW
from core.configuration import RouteFacts, route_advice, route_problem, route_problems
from core.dispatch import BlockedBefore, LiveWork, OpenRecord, blocked_times, joining, startable
from core.edges import DeliveryState, RecordState
from core.settlement import LiveRow, RecoveryFacts, RecoveryStep, recovery_step, settle, settlement_plan
from core.snapshots import Settlement

NOW = datetime(2026, 12, 3, 10, 0, tzinfo=UTC)

# -- the settlement's plan ------------------------------------------------------------------

live_rows = st.lists(
    st.builds(
        LiveRow,
        event_id=st.integers(1, 10_000),
        delivery=st.sampled_from(DeliveryState),
        exposed_by_this_attempt=st.booleans(),
        pulled=st.booleans(),
        withdrawn_before=st.booleans(),
        record_state=st.sampled_from([RecordState.dispatched, RecordState.discarded, RecordState.held]),
    ),
    unique_by=lambda row: row.event_id,
    max_size=6,
)


def test_a_settlement_plan_completes_an_unknown_row_before_the_supersession_and_withdraws_after() -> None:
    rows = [
        LiveRow(1, DeliveryState.delivered, True, True, False, RecordState.dispatched),  # unknown
        LiveRow(2, DeliveryState.exposed, True, False, False, RecordState.dispatched),  # withdrawn
        LiveRow(3, DeliveryState.admitted, False, False, False, RecordState.dispatched),  # returned
        LiveRow(4, DeliveryState.completed, True, True, False, RecordState.dispatched),  # reported
    ]
    plan = settlement_plan(rows, spawn_failed=True)
    ((unknown,), after) = plan.before, plan.after
    assert (unknown.event_id, unknown.complete_delivery, unknown.withdraw) == (1, True, False)
    assert unknown.record_to is RecordState.completed
    assert [(step.event_id, step.withdraw, step.record_to) for step in after] == [
        (2, True, RecordState.admitted),
        (3, False, RecordState.admitted),
    ]


@given(live_rows, st.booleans())
def test_a_settlement_plan_writes_what_the_settlement_decided_and_nothing_else(
    rows: list[LiveRow], spawn_failed: bool
) -> None:
    plan = settlement_plan(rows, spawn_failed)
    decided = {decision.event_id: decision for decision in settle(rows, spawn_failed)}
    delivery = {row.event_id: row.delivery for row in rows}
    assert plan.settled == settle(rows, spawn_failed)
    assert {step.event_id for step in plan.before} == {
        event for event, decision in decided.items() if decision.settlement is Settlement.unknown
    }
    assert {step.event_id for step in plan.after} == {
        event
        for event, decision in decided.items()
        if decision.settlement in (Settlement.withdrawn, Settlement.blocked_again, Settlement.returned)
    }
    for step in (*plan.before, *plan.after):
        decision = decided[step.event_id]
        assert (step.record_to, step.record_reason, step.delivery) == (
            decision.record_to,
            decision.record_reason,
            delivery[step.event_id],
        )
        assert step.withdraw == (decision.settlement in (Settlement.withdrawn, Settlement.blocked_again))
        assert step.complete_delivery == (
            decision.settlement is Settlement.unknown
            and delivery[step.event_id] in (DeliveryState.exposed, DeliveryState.delivered)
        )


# -- the waiting rule -----------------------------------------------------------------------


def _open(event_id: int, key: str, state: RecordState, *, snapshot: bool = True, on_task: bool = False) -> OpenRecord:
    return OpenRecord(event_id, 7, key, state, snapshot, on_task)


def test_a_task_takes_the_records_waiting_on_its_conversation_oldest_first() -> None:
    work = LiveWork(
        records=(
            _open(9, "c", RecordState.queued),
            _open(3, "c", RecordState.admitted),
            _open(4, "c", RecordState.dispatched),  # on its way already
            _open(5, "c", RecordState.admitted, snapshot=False),  # nothing to hand over
            _open(6, "c", RecordState.queued, on_task=True),  # on a live task row
            _open(2, "other", RecordState.admitted),
        ),
        task_conversations=frozenset({"c"}),
        task_dirs=frozenset(),
    )
    assert [record.event_id for record in joining(work, "c")] == [3, 9]


open_records = st.lists(
    st.builds(
        OpenRecord,
        event_id=st.integers(1, 200),
        bucket_id=st.sampled_from([7, 8]),
        conversation_key=st.sampled_from(["", "a", "b"]),
        state=st.sampled_from([RecordState.admitted, RecordState.queued, RecordState.dispatched]),
        has_snapshot=st.booleans(),
        on_live_task=st.booleans(),
    ),
    unique_by=lambda record: record.event_id,
    max_size=8,
)


@given(open_records)
def test_what_starts_is_what_a_task_on_its_conversation_would_take_first(records: list[OpenRecord]) -> None:
    """One waiting rule: the record ``startable`` picks is the oldest ``joining`` takes."""
    work = LiveWork(tuple(records), frozenset(), frozenset())
    for event_id, _ in startable(work, frozenset({7, 8}), 100):
        (record,) = [record for record in records if record.event_id == event_id]
        assert joining(work, record.conversation_key)[0] == record


# -- the blocked-reset rule -----------------------------------------------------------------


def test_a_record_blocked_again_for_its_reason_keeps_its_window_and_another_reason_starts_one() -> None:
    since = NOW - timedelta(hours=3)
    before = BlockedBefore(RecordState.blocked, "read_failed", since)
    assert blocked_times(before, RecordState.blocked, "read_failed", NOW, None).blocked_at == since
    assert blocked_times(before, RecordState.blocked, "throttled", NOW, None).blocked_at == NOW
    assert blocked_times(before, RecordState.admitted, "", NOW, None) == blocked_times(
        before, RecordState.discarded, "stale", NOW, None
    )
    assert blocked_times(before, RecordState.admitted, "", NOW, None).blocked_at is None


@given(st.integers(1, 400))
def test_a_read_that_keeps_failing_stops_being_retried_when_its_window_closes(tries: int) -> None:
    before = BlockedBefore(RecordState.seen, "", None)
    now = NOW
    for _ in range(tries):
        times = blocked_times(before, RecordState.blocked, "read_failed", now, None)
        if times.next_retry_at is None:
            break
        before = BlockedBefore(RecordState.blocked, "read_failed", times.blocked_at)
        now = times.next_retry_at
    assert times.blocked_at == NOW
    assert now <= NOW + BLOCKED_RETRY_WINDOW
    if tries * BLOCKED_RETRY_INTERVAL > BLOCKED_RETRY_WINDOW + BLOCKED_RETRY_INTERVAL:
        assert times.next_retry_at is None


# -- recovery's decision tree ---------------------------------------------------------------


def test_recovery_marks_holds_or_settles_each_attempt_by_what_it_found() -> None:
    no_process = RecoveryFacts(recorded_process=False, stopped=False)
    assert recovery_step(no_process) is RecoveryStep.mark_left
    found = RecoveryFacts(recorded_process=True, stopped=False)
    assert recovery_step(found) is RecoveryStep.end_group
    assert recovery_step(RecoveryFacts(True, False, group_gone=False)) is RecoveryStep.held
    assert recovery_step(RecoveryFacts(True, False, group_gone=True)) is RecoveryStep.list_replies
    assert recovery_step(RecoveryFacts(True, False, group_gone=True, listed=True)) is RecoveryStep.settle_lost
    assert recovery_step(RecoveryFacts(True, True, group_gone=True, listed=True)) is RecoveryStep.leave_live
    assert recovery_step(RecoveryFacts(False, True)) is RecoveryStep.leave_live


@given(st.booleans(), st.booleans(), st.lists(st.booleans(), min_size=6, max_size=6))
def test_recovery_walked_step_by_step_ends_a_group_only_when_recorded_and_settles_only_unstopped(
    recorded: bool, gone: bool, stops: list[bool]
) -> None:
    """The dispatcher's walk: the stop read afresh before each step (and staying set once set)."""
    facts = RecoveryFacts(recorded, stopped=False)
    taken: list[RecoveryStep] = []
    for index in range(6):
        facts = RecoveryFacts(facts.recorded_process, any(stops[: index + 1]), facts.group_gone, facts.listed)
        step = recovery_step(facts)
        taken.append(step)
        if step is RecoveryStep.end_group:
            facts = RecoveryFacts(facts.recorded_process, facts.stopped, gone, facts.listed)
        elif step is RecoveryStep.list_replies:
            facts = RecoveryFacts(facts.recorded_process, facts.stopped, facts.group_gone, listed=True)
        else:
            break
    last = taken[-1]
    assert last in (RecoveryStep.leave_live, RecoveryStep.mark_left, RecoveryStep.held, RecoveryStep.settle_lost)
    assert (RecoveryStep.end_group in taken) <= recorded
    if last is RecoveryStep.settle_lost:
        assert recorded
        assert gone
        assert not facts.stopped
        assert taken[-2] is RecoveryStep.list_replies
    if last is RecoveryStep.mark_left:
        assert not recorded
        assert taken == [RecoveryStep.mark_left]
    if stops[0]:
        assert taken == [RecoveryStep.leave_live]  # nothing done to it: it stays exactly as it was


# -- the route preflight --------------------------------------------------------------------


def test_the_route_preflight_names_a_directorys_first_problem_in_one_wording() -> None:
    missing = RouteFacts(7, "/w", exists=False, is_directory=False, writable=False)
    a_file = RouteFacts(8, "/f", exists=True, is_directory=False, writable=True)
    readonly = RouteFacts(9, "/r", exists=True, is_directory=True, writable=False)
    good = RouteFacts(10, "/g", exists=True, is_directory=True, writable=True)
    assert route_problem(missing) == "routes.7.directory: /w does not exist"
    assert route_problem(a_file) == "routes.8.directory: /f is not a directory"
    assert route_problem(readonly) == "routes.9.directory: /r is not writable by this user"
    assert route_problem(good) is None
    assert route_problems([missing, good, readonly]) == (route_problem(missing), route_problem(readonly))
    assert "--route 7=DIRECTORY" in route_advice(missing)
    assert "write there" in route_advice(readonly)
