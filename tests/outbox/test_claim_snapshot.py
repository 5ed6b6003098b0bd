"""The claim reads all it must: the hold when nothing is due, and a guard's record and every task
row of its event."""

from __future__ import annotations

from core import notes
from core.edges import DeliveryState, GuardState
from core.intent_kinds import IntentKind
from shell.clock import FakeClock
from shell.ledger.outbox import claim_snapshot, next_due
from shell.outbox import Outbox, SendResult
from tests.support.fake_basecamp import FakeBasecamp
from tests.support.ids import nth_intent
from tests.support.ledger_world import LedgerWorld


def test_a_flush_under_the_hold_with_nothing_due_says_held(world: LedgerWorld, outbox: Outbox) -> None:
    world.hold()
    assert outbox.flush().results == [SendResult.held]
    world.release()
    assert outbox.flush().results == [SendResult.nothing_due]


def _acknowledged(world: LedgerWorld, task_id: int, event_id: int) -> None:
    """A worker acknowledged the event on ``task_id`` while its guard stayed armed (the guard's
    intent still pending: only the claim's read of the task rows stands it down)."""
    with world.ledger.write() as connection:
        connection.execute(
            "UPDATE task_events SET delivery = 'exposed', pulled_at = ? WHERE task_id = ? AND event_id = ?",
            (world.now(), task_id, event_id),
        )
    world.ack(task_id, event_id, 555)


def test_a_guard_whose_event_a_worker_acknowledged_is_canceled_at_claim(
    world: LedgerWorld, outbox: Outbox, basecamp: FakeBasecamp, clock: FakeClock
) -> None:
    world.request(101)
    _acknowledged(world, world.task(101), 101)
    clock.advance(31)
    assert outbox.flush().results[0] is SendResult.canceled
    assert world.outbox() == [(nth_intent(1), "guard_ack", "canceled", notes.NO_LONGER_CALLED_FOR)]
    assert basecamp.post_count() == 0


def test_a_guards_claim_reads_its_record_and_every_task_row_of_its_event(
    world: LedgerWorld, clock: FakeClock
) -> None:
    world.request(101)
    world.task(101)
    world.request(102)  # another event's guard and task row, due later: not the next, not its rows
    world.task(102)
    with world.ledger.write() as connection:  # the other task's row stands down: 101's stays armed
        connection.execute("UPDATE task_events SET guard = 'canceled' WHERE event_id = 102")
    clock.advance(31)
    with world.ledger.write() as connection:
        row = next_due(connection, clock.now())
        assert row is not None
        assert row.kind is IntentKind.guard_ack
        facts = claim_snapshot(connection, row)
    assert facts.record is not None
    assert facts.record.acknowledge
    assert row.event_id == 101
    assert [(found.delivery, found.guard) for found in facts.task_events] == [
        (DeliveryState.admitted, GuardState.armed)
    ]
