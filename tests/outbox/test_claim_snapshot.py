"""The claim's reads, folded for speed (``bin/bench outbox``), still read all they must: the hold
when nothing is due, and the task rows of a guard's event beside its record, in one statement."""

from __future__ import annotations

from core import notes
from shell.clock import FakeClock
from shell.outbox import Outbox, SendResult
from tests.support.fake_basecamp import FakeBasecamp
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
    assert world.outbox() == [(1, "guard_ack", "canceled", notes.NO_LONGER_CALLED_FOR)]
    assert basecamp.post_count() == 0


def test_a_guard_with_no_armed_task_row_is_claimed_without_asking_the_task_rows_again(
    world: LedgerWorld, outbox: Outbox, basecamp: FakeBasecamp, clock: FakeClock
) -> None:
    """The claim's snapshot already holds every task row of the guard's event: with none armed,
    marking them fired has nothing to mark, and no statement asks again."""
    world.request(101)
    clock.advance(31)
    statements: list[str] = []
    with world.ledger.read() as connection:
        connection.set_trace_callback(statements.append)
    try:
        assert outbox.flush().results[0] is SendResult.sent
    finally:
        with world.ledger.read() as connection:
            connection.set_trace_callback(None)
    assert basecamp.post_count() == 1
    assert [sql for sql in statements if sql.startswith("SELECT task_id, guard FROM task_events")] == []
