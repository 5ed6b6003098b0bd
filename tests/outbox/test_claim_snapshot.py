"""The claim's reads, folded for speed (``bin/bench outbox``), still read all they must: the hold
when nothing is due, and a guard's record and the task rows of its event with its head, in one
statement."""

from __future__ import annotations

import pytest

from core import notes
from core.edges import DeliveryState, GuardState
from core.intents import IntentKind
from shell.clock import FakeClock
from shell.ledger.outbox_due import DueNow, due_now
from shell.outbox import Outbox, SendResult
from shell.outbox_claims import claim_facts
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


def test_a_guards_claim_reads_its_event_in_the_heads_one_statement(
    world: LedgerWorld, outbox: Outbox, basecamp: FakeBasecamp, clock: FakeClock
) -> None:
    """A claim is one read: the head of each kind, and beside a guard's head its record and every
    task row of its event (``shell.ledger.outbox_due`` rule 4) -- no second statement asks them."""
    world.request(101)
    world.task(101)
    world.request(102)  # another event's guard and task row, due later: not the head, not its rows
    world.task(102)
    with world.ledger.write() as connection:  # the other task's row stands down: 101's stays armed
        connection.execute("UPDATE task_events SET guard = 'canceled' WHERE event_id = 102")
    clock.advance(31)
    statements: list[str] = []
    with world.ledger.read() as connection:
        connection.set_trace_callback(statements.append)
    try:
        with world.ledger.write() as connection:
            due = due_now(connection, clock.now(), set())
            assert due.row is not None
            assert due.row.kind is IntentKind.guard_ack
            facts = claim_facts(connection, due.row, due)
    finally:
        with world.ledger.read() as connection:
            connection.set_trace_callback(None)
    reads = [sql for sql in statements if sql.startswith("SELECT")]
    assert len(reads) == 1, reads
    assert facts.record is not None
    assert facts.record.acknowledge
    assert due.row.event_id == 101
    assert [(row.delivery, row.guard) for row in facts.task_events] == [(DeliveryState.admitted, GuardState.armed)]


def test_a_head_read_without_its_events_snapshot_is_refused_not_claimed(world: LedgerWorld, clock: FakeClock) -> None:
    """A claim that reads the event decides only from what its head was read with: a head that
    came without it is a bug, raised, never a claim decided on nothing."""
    world.request(101)
    clock.advance(31)
    with world.ledger.write() as connection:
        due = due_now(connection, clock.now(), set())
        assert due.row is not None
        assert due.facts is not None
        with pytest.raises(ValueError, match="without its event's snapshot"):
            claim_facts(connection, due.row, DueNow(False, due.row))
