"""A person's redispatch and discard on a real ledger file: one transaction with the decision row,
the record's move and its notices; and the terminal trigger that lets nothing else move a
completed record."""

from __future__ import annotations

import sqlite3
from dataclasses import replace
from datetime import datetime

import pytest
from returns.result import Failure, Result, Success

from core.decisions import Action, DecisionRefused
from core.edges import RECORD_EDGES, RecordState
from core.notes import DISCARDED_BY_PERSON
from core.snapshots import StopReason
from shell.clock import FakeClock
from shell.ledger import decisions as ledger_decisions
from shell.ledger import tasks
from shell.ledger.connection import Ledger
from shell.ledger.decisions import Decided, UnknownEvent
from shell.ledger.rules import MoveRefused
from shell.ledger.worker_calls import DispatchLedger
from tests.support.ids import nth_intent
from tests.support.ledger_world import PROJECT, LedgerWorld

EVENT = 501
BY = "local:ada"


def decide(ledger: Ledger, event_id: int, action: Action, by: str, now: datetime) -> Result[Decided, DecisionRefused]:
    """A decision under a configuration that routes the world's project."""
    return ledger_decisions.decide(ledger, event_id, action, by, now, served=frozenset({PROJECT}))


def settle_unreported(world: LedgerWorld, event_id: int = EVENT) -> str:
    """A worker launched for the event, gone without a report: the settlement ends it unknown."""
    launched = world.launch(event_id)
    clock = world.ledger.clock
    with world.ledger.write() as connection:
        tasks.end_attempt(
            connection, launched.attempt_id, StopReason.failed, spawn_failed=False, now=clock.now()
        )
    return launched.attempt_id


def record(ledger: Ledger, event_id: int = EVENT) -> tuple[object, ...]:
    with ledger.read() as connection:
        return tuple(connection.execute(
            "SELECT state, reason, next_retry_at IS NOT NULL FROM events WHERE id = ?", (event_id,)
        ).fetchone())


def decisions_of(ledger: Ledger) -> list[tuple[object, ...]]:
    with ledger.read() as connection:
        return [tuple(row) for row in connection.execute(
            "SELECT action, event_id, decided_by, from_state, from_outcome, to_state FROM decisions ORDER BY id"
        )]


def test_an_unknown_outcome_is_admitted_again_and_the_dispatcher_starts_a_new_attempt(world: LedgerWorld) -> None:
    world.request(EVENT)
    first = settle_unreported(world)
    assert record(world.ledger) == ("completed", "", False)

    decided = decide(world.ledger, EVENT, Action.redispatch, BY, world.ledger.clock.now()).unwrap()

    assert decided.plan.to_state == "admitted"
    assert record(world.ledger) == ("admitted", "", False)
    assert decisions_of(world.ledger) == [("redispatch", EVENT, BY, "completed", "unknown", "admitted")]
    with world.ledger.read() as connection:
        assert tasks.startable_records(connection, frozenset({PROJECT}), 10) == [(EVENT, PROJECT)]
    second = world.launch(EVENT)
    assert second.attempt_id != first
    with world.ledger.read() as connection:
        guards = connection.execute("SELECT kind, state FROM outbox WHERE kind = 'guard_ack'").fetchall()
    assert guards == [("guard_ack", "pending")], "a redispatch writes no second guard acknowledgement"


def test_a_failure_reported_by_the_worker_may_be_redispatched_a_success_may_not(world: LedgerWorld) -> None:
    for event_id, outcome in ((EVENT, "failed"), (EVENT + 1, "succeeded")):
        world.request(event_id)
        launched = world.launch(event_id)
        world.get_dispatch(launched.task_id, event_id)
        world.report(launched.task_id, event_id, outcome)
        with world.ledger.write() as connection:
            tasks.end_attempt(connection, launched.attempt_id, StopReason.finished, spawn_failed=False,
                              now=world.ledger.clock.now())
    assert isinstance(decide(world.ledger, EVENT, Action.redispatch, BY, world.ledger.clock.now()), Success)
    refusal = decide(world.ledger, EVENT + 1, Action.redispatch, BY, world.ledger.clock.now()).failure()
    assert refusal.reason == f"Event {EVENT + 1} succeeded; a success is never run again"
    assert record(world.ledger, EVENT + 1) == ("completed", "", False)


def test_a_completed_record_whose_task_still_runs_is_live_to_a_discard(world: LedgerWorld) -> None:
    world.request(EVENT)
    launched = world.launch(EVENT)
    world.get_dispatch(launched.task_id, EVENT)
    world.report(launched.task_id, EVENT, "failed")  # reported, but its worker has not exited
    refusal = decide(world.ledger, EVENT, Action.discard, BY, world.ledger.clock.now()).failure()
    assert "is live" in refusal.reason
    assert decisions_of(world.ledger) == []


@pytest.mark.parametrize("reported", ["failed", None], ids=["completed-failed", "dispatched"])
def test_a_redispatch_of_a_live_task_is_authorized_at_once_and_admitted_when_the_task_ends(
    world: LedgerWorld, reported: str | None
) -> None:
    world.request(EVENT)
    launched = world.launch(EVENT, running_pid=4242)
    world.get_dispatch(launched.task_id, EVENT)
    if reported is not None:
        world.report(launched.task_id, EVENT, reported)
    before = record(world.ledger)
    done = decide(world.ledger, EVENT, Action.redispatch, BY, world.ledger.clock.now()).unwrap()
    assert done.plan.stop_task == launched.task_id
    assert done.plan.summary == f"Event {EVENT} authorized; admitted when its task {launched.task_id} ends"
    assert done.worker is not None
    assert (done.worker.attempt_id, done.worker.pid) == (launched.attempt_id, 4242)
    assert record(world.ledger) == before, "nothing moves while the task runs"
    again = decide(world.ledger, EVENT, Action.redispatch, BY, world.ledger.clock.now()).failure()
    assert again.already
    with world.ledger.read() as connection:
        assert connection.execute("SELECT token_retired_at IS NOT NULL FROM tasks").fetchone() == (1,)
    # the replaced task's token is retired: the worker's tools are refused
    assert isinstance(DispatchLedger(world.ledger, launched.token, None).check_token(), Failure)
    with world.ledger.write() as connection:
        tasks.end_attempt(connection, launched.attempt_id, StopReason.failed, spawn_failed=False,
                          now=world.ledger.clock.now())
    assert record(world.ledger) == ("admitted", "", False)
    assert decisions_of(world.ledger) == [
        ("redispatch", EVENT, BY, before[0], "" if reported is None else reported, "admitted"),
        ("redispatch", EVENT, BY, "completed", reported or "unknown", "admitted"),
    ]
    with world.ledger.read() as connection:
        assert tasks.startable_records(connection, frozenset({PROJECT}), 4) == [(EVENT, PROJECT)]


def test_a_pending_redispatch_lapses_when_the_worker_succeeds(world: LedgerWorld) -> None:
    world.request(EVENT)
    launched = world.launch(EVENT, running_pid=4242)
    world.get_dispatch(launched.task_id, EVENT)
    decide(world.ledger, EVENT, Action.redispatch, BY, world.ledger.clock.now()).unwrap()
    world.report(launched.task_id, EVENT, "succeeded")  # written as if before the token retired
    with world.ledger.write() as connection:
        tasks.end_attempt(connection, launched.attempt_id, StopReason.finished, spawn_failed=False,
                          now=world.ledger.clock.now())
    assert record(world.ledger) == ("completed", "", False), "a success is never run again"


def test_a_blocked_record_is_offered_back_to_admission_now(world: LedgerWorld, clock: FakeClock) -> None:
    world.seen(EVENT)
    world.verdict(EVENT, "blocked", "read_failed")
    decide(world.ledger, EVENT, Action.redispatch, BY, clock.now()).unwrap()
    with world.ledger.read() as connection:
        assert connection.execute("SELECT id FROM events WHERE state = 'blocked' AND next_retry_at <= ?",
                                  (world.now(),)).fetchall() == [(EVENT,)]
    assert record(world.ledger) == ("blocked", "read_failed", True)


def test_a_discard_cancels_the_pending_guard_and_says_who(world: LedgerWorld) -> None:
    world.request(EVENT)
    decided = decide(world.ledger, EVENT, Action.discard, BY, world.ledger.clock.now()).unwrap()
    assert record(world.ledger) == ("discarded", "by_operator", False)
    assert world.outbox() == [(nth_intent(1), "guard_ack", "canceled", DISCARDED_BY_PERSON)]
    assert decided.canceled_intents == (nth_intent(1),)
    assert decisions_of(world.ledger) == [("discard", EVENT, BY, "admitted", "", "discarded")]
    again = decide(world.ledger, EVENT, Action.discard, "local:bo", world.ledger.clock.now()).failure()
    assert again.already
    assert len(decisions_of(world.ledger)) == 1


def test_a_record_a_person_discarded_keeps_no_content(world: LedgerWorld) -> None:
    """Content is kept only on a record that may still run: a discard drops the snapshot."""
    world.request(EVENT)
    with world.ledger.read() as connection:
        assert connection.execute("SELECT snapshot FROM events WHERE id = ?", (EVENT,)).fetchone()[0] is not None
    decide(world.ledger, EVENT, Action.discard, BY, world.ledger.clock.now()).unwrap()
    with world.ledger.read() as connection:
        assert connection.execute("SELECT state, snapshot FROM events WHERE id = ?", (EVENT,)).fetchone() == (
            "discarded",
            None,
        )


def test_a_discard_cancels_a_blocked_records_holding_reply(world: LedgerWorld) -> None:
    world.seen(EVENT)
    world.verdict(EVENT, "blocked", "no_route")
    decide(world.ledger, EVENT, Action.discard, BY, world.ledger.clock.now()).unwrap()
    assert world.outbox() == [(nth_intent(1), "holding_reply", "canceled", DISCARDED_BY_PERSON)]


def test_a_discard_of_an_unknown_outcome_cancels_its_pending_completion_notice(world: LedgerWorld) -> None:
    world.request(EVENT)
    settle_unreported(world)
    kinds = {kind: state for _, kind, state, _ in world.outbox()}
    assert kinds["completion"] == "pending"
    decide(world.ledger, EVENT, Action.discard, BY, world.ledger.clock.now()).unwrap()
    assert {kind: (state, note) for _, kind, state, note in world.outbox()}["completion"] == (
        "canceled", DISCARDED_BY_PERSON,
    )


def test_a_notice_already_being_sent_is_reported_not_touched(world: LedgerWorld) -> None:
    world.seen(EVENT)
    world.verdict(EVENT, "blocked", "no_route")
    with world.ledger.write() as connection:
        connection.execute("UPDATE outbox SET state = 'sending', sending_at = ?", (world.now(),))
    decided = decide(world.ledger, EVENT, Action.discard, BY, world.ledger.clock.now()).unwrap()
    assert (decided.canceled_intents, decided.sending_intents) == ((), (nth_intent(1),))
    assert world.outbox() == [(nth_intent(1), "holding_reply", "sending", "")]


def test_a_completion_notice_naming_another_live_record_stays(world: LedgerWorld) -> None:
    world.request(EVENT)
    world.seen(EVENT + 1, recording_id=1_000_000 + EVENT)  # a follow-up on the same card
    world.verdict(EVENT + 1, "queued")
    settle_unreported(world)  # the first ends unknown; the follow-up, never exposed, is returned
    assert record(world.ledger, EVENT + 1) == ("admitted", "", False)
    decide(world.ledger, EVENT, Action.discard, BY, world.ledger.clock.now()).unwrap()
    completion = [state for _, kind, state, _ in world.outbox() if kind == "completion"]
    assert completion == ["pending"], "the task also carried a record that is not discarded"


def test_an_unknown_event_is_named(ledger: Ledger) -> None:
    with pytest.raises(UnknownEvent):
        decide(ledger, 999, Action.redispatch, BY, ledger.clock.now())


def decide_by_hand(world: LedgerWorld, action: str, made_at_revision: str, to_state: str, target: str) -> None:
    """A decision row written by hand, then the record moved to ``target``, in one transaction."""
    with world.ledger.write() as connection:
        connection.execute(
            "INSERT INTO decisions (action, event_id, decided_by, decided_at, from_state, from_outcome,"
            f" from_revision, to_state) SELECT ?, id, ?, ?, 'completed', 'unknown', {made_at_revision}, ?"
            " FROM events WHERE id = ?",
            (action, BY, world.now(), to_state, EVENT),
        )
        connection.execute("UPDATE events SET state = ? WHERE id = ?", (target, EVENT))


def test_the_ledger_moves_a_completed_record_only_under_a_decision_at_its_revision(world: LedgerWorld) -> None:
    world.request(EVENT)
    settle_unreported(world)
    terminal = "a completed or discarded record is terminal: its state never changes"
    with pytest.raises(sqlite3.IntegrityError, match=terminal), world.ledger.write() as connection:
        connection.execute("UPDATE events SET state = 'admitted' WHERE id = ?", (EVENT,))
    with pytest.raises(sqlite3.IntegrityError, match=terminal):  # made at an older revision: stale
        decide_by_hand(world, "redispatch", "revision - 1", "admitted", "admitted")
    with pytest.raises(sqlite3.IntegrityError, match=terminal):  # not the move it decided
        decide_by_hand(world, "discard", "revision", "discarded", "admitted")
    assert record(world.ledger) == ("completed", "", False)
    decide_by_hand(world, "redispatch", "revision", "admitted", "admitted")
    assert record(world.ledger) == ("admitted", "", False)


def test_a_decision_row_never_changes(world: LedgerWorld) -> None:
    world.request(EVENT)
    decide(world.ledger, EVENT, Action.discard, BY, world.ledger.clock.now()).unwrap()
    with pytest.raises(sqlite3.IntegrityError, match="never changes"), world.ledger.write() as connection:
        connection.execute("UPDATE decisions SET decided_by = 'someone else'")
    with pytest.raises(sqlite3.IntegrityError, match="never deleted"), world.ledger.write() as connection:
        connection.execute("DELETE FROM decisions")


def test_a_blocked_record_is_offered_at_the_moment_of_the_decision(world: LedgerWorld, clock: FakeClock) -> None:
    world.seen(EVENT)
    world.verdict(EVENT, "blocked", "read_failed")
    clock.advance(300)
    decide(world.ledger, EVENT, Action.redispatch, BY, clock.now()).unwrap()
    with world.ledger.read() as connection:
        (offered,) = connection.execute("SELECT next_retry_at FROM events WHERE id = ?", (EVENT,)).fetchone()
    assert offered == world.now()


def test_the_ledger_refuses_a_decision_over_a_record_a_live_task_carries(world: LedgerWorld) -> None:
    world.request(EVENT)
    launched = world.launch(EVENT)
    world.get_dispatch(launched.task_id, EVENT)
    world.report(launched.task_id, EVENT, "unknown")  # completed, its worker still running
    with pytest.raises(sqlite3.IntegrityError, match="terminal"):
        decide_by_hand(world, "redispatch", "revision", "admitted", "admitted")
    assert record(world.ledger) == ("completed", "", False)


def test_the_ledger_refuses_a_decision_that_misstates_the_outcome(world: LedgerWorld) -> None:
    world.request(EVENT)
    launched = world.launch(EVENT)
    world.get_dispatch(launched.task_id, EVENT)
    world.report(launched.task_id, EVENT, "succeeded")
    with world.ledger.write() as connection:
        tasks.end_attempt(connection, launched.attempt_id, StopReason.finished, spawn_failed=False,
                          now=world.ledger.clock.now())
    with pytest.raises(sqlite3.IntegrityError, match="terminal"):  # it says unknown; it succeeded
        decide_by_hand(world, "redispatch", "revision", "admitted", "admitted")
    assert record(world.ledger) == ("completed", "", False)


def discard_by_hand(world: LedgerWorld) -> None:
    """A discard decision row written by hand, then the dispatched record discarded, in one transaction."""
    with world.ledger.write() as connection:
        connection.execute(
            "INSERT INTO decisions (action, event_id, decided_by, decided_at, from_state, from_revision, to_state)"
            " SELECT 'discard', id, ?, ?, state, revision, 'discarded' FROM events WHERE id = ?",
            (BY, world.now(), EVENT),
        )
        connection.execute("UPDATE events SET state = 'discarded', reason = 'by_operator' WHERE id = ?", (EVENT,))


def test_the_ledger_discards_a_dispatched_record_only_if_no_worker_was_handed_it(world: LedgerWorld) -> None:
    world.request(EVENT)
    world.launch(EVENT)  # exposed at launch: a worker may have seen it
    with pytest.raises(sqlite3.IntegrityError, match="only if no worker was handed it"):
        discard_by_hand(world)
    refusal = decide(world.ledger, EVENT, Action.discard, BY, world.ledger.clock.now()).failure()
    assert "is live" in refusal.reason
    assert record(world.ledger) == ("dispatched", "", False)


def test_the_redispatch_a_task_end_applies_is_asked_of_core_before_the_task_ends(
    world: LedgerWorld, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Migration 0009's trigger writes the move; core.edges is asked for it first, like every other
    move of the ledger's: a table without that edge stops the task's end."""
    world.request(EVENT)
    launched = world.launch(EVENT, running_pid=4242)
    world.get_dispatch(launched.task_id, EVENT)
    decide(world.ledger, EVENT, Action.redispatch, BY, world.ledger.clock.now()).unwrap()
    taken = (RecordState.completed, RecordState.admitted)
    without = [edge for edge in RECORD_EDGES.edges if (edge.source, edge.target) != taken]
    monkeypatch.setattr(tasks, "RECORD_EDGES", replace(RECORD_EDGES, edges=tuple(without)))
    refused = pytest.raises(MoveRefused, match="never moves from completed to admitted")
    with refused, world.ledger.write() as connection:
        tasks.end_attempt(connection, launched.attempt_id, StopReason.failed, spawn_failed=False,
                          now=world.ledger.clock.now())
    assert record(world.ledger) == ("dispatched", "", False), "the whole end rolled back"
