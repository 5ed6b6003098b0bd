"""The dispatcher's transitions against a real ledger: launch, follow-ups, running, settlement."""

import hashlib

import pytest

from core.settlement import SPAWN_FAILED, RowSettlement
from core.snapshots import Settlement, StopReason
from shell.clock import FakeClock
from shell.ledger import tasks
from shell.ledger.connection import Ledger
from shell.ledger.rules import MoveRefused
from tests.support.ledger_world import PROJECT, LedgerWorld

ROUTED = frozenset({PROJECT})


def launch(ledger: Ledger, event_id: int, work_dir: str = "/srv/work") -> tasks.Launch:
    return LedgerWorld(ledger).launch(event_id, work_dir)


def end(
    ledger: Ledger, attempt_id: str, reason: StopReason, spawn_failed: bool = False
) -> tuple[RowSettlement, ...]:
    with ledger.write() as connection:
        return tasks.end_attempt(
            connection,
            attempt_id,
            reason,
            spawn_failed=spawn_failed,
            now=ledger.clock.now(),
        )


def rows(ledger: Ledger, sql: str, *values: object) -> list[tuple[object, ...]]:
    with ledger.read() as connection:
        return [tuple(row) for row in connection.execute(sql, values)]


def test_a_launch_exposes_the_event_before_anything_starts_and_keeps_only_the_tokens_hash(
    world: LedgerWorld, ledger: Ledger
) -> None:
    world.request(101, recording_id=9)
    launched = launch(ledger, 101)
    assert rows(ledger, "SELECT state FROM attempts") == [("launching",)]
    assert rows(ledger, "SELECT delivery, guard, exposed_attempt_id FROM task_events") == [
        ("exposed", "armed", launched.attempt_id)
    ]
    assert rows(ledger, "SELECT state FROM events") == [("dispatched",)]
    (stored,) = rows(ledger, "SELECT token_sha256 FROM tasks")
    assert stored == (hashlib.sha256(launched.token.encode()).hexdigest(),)
    with ledger.read() as connection:
        dump = "\n".join(connection.iterdump())
    assert launched.token not in dump


def test_a_launch_carries_the_two_values_the_prompt_names_from_its_record(
    world: LedgerWorld, ledger: Ledger
) -> None:
    world.request(101, recording_id=9)
    with ledger.write() as connection:
        connection.execute(
            "UPDATE events SET recording_url = 'https://3.basecamp.com/1/buckets/2/card_tables/cards/9'"
        )
    launched = launch(ledger, 101)
    assert (launched.trigger, launched.recording_url) == (
        "mentioned",
        "https://3.basecamp.com/1/buckets/2/card_tables/cards/9",
    )


def test_one_live_task_per_conversation_and_per_directory(world: LedgerWorld, ledger: Ledger) -> None:
    world.request(101, recording_id=9)
    world.request(102, recording_id=10)
    launch(ledger, 101, work_dir="/srv/a")
    with pytest.raises(tasks.NotStartable):
        launch(ledger, 102, work_dir="/srv/a")
    launch(ledger, 102, work_dir="/srv/b")


def test_the_oldest_record_of_each_free_conversation_starts_first(world: LedgerWorld, ledger: Ledger) -> None:
    world.request(101, recording_id=9)
    world.request(102, recording_id=9)  # same card: same conversation, behind 101
    world.request(103, recording_id=10)
    world.seen(104, recording_id=11)  # never admitted: no snapshot, not startable
    with ledger.read() as connection:
        assert [event for event, _ in tasks.startable_records(connection, ROUTED, 10)] == [101, 103]
        assert tasks.startable_records(connection, frozenset({1}), 10) == [], (
            "an unrouted project never starts"
        )
    launched = launch(ledger, 101)
    assert launched.event_ids == (101, 102), "the conversation's waiting records join its task, in order"
    with ledger.read() as connection:
        assert tasks.startable_records(connection, ROUTED, 10) == [(103, PROJECT)]


def test_a_follow_up_on_the_conversation_joins_the_live_task(world: LedgerWorld, ledger: Ledger) -> None:
    world.request(101, recording_id=9)
    launched = launch(ledger, 101)
    world.request(102, recording_id=9)
    with ledger.write() as connection:
        assert tasks.join_follow_ups(connection, launched.task_id, ledger.clock.now()) == (102,)
    assert rows(ledger, "SELECT event_id, delivery FROM task_events ORDER BY event_id") == [
        (101, "exposed"),
        (102, "admitted"),
    ]
    assert rows(ledger, "SELECT state FROM events WHERE id = 102") == [("dispatched",)]


def test_mark_running_records_the_process_once(world: LedgerWorld, ledger: Ledger) -> None:
    """The second is refused by core.edges from the attempt's real state (running), before SQL."""
    world.request(101)
    launched = launch(ledger, 101)
    with ledger.write() as connection:
        tasks.mark_running(
            connection, launched.attempt_id, pid=10, pgid=10, process_started="123", now=ledger.clock.now()
        )
    with pytest.raises(MoveRefused, match="running"), ledger.write() as connection:
        tasks.mark_running(
            connection, launched.attempt_id, pid=11, pgid=11, process_started="9", now=ledger.clock.now()
        )
    assert rows(ledger, "SELECT state, pid, process_started FROM attempts") == [("running", 10, "123")]


def test_an_exposed_unreported_event_ends_unknown_and_the_task_is_superseded(
    world: LedgerWorld, ledger: Ledger
) -> None:
    world.request(101, recording_id=9)
    world.request(102, recording_id=9)
    launched = launch(ledger, 101)
    settled = end(ledger, launched.attempt_id, StopReason.lost)
    assert [(s.event_id, s.settlement) for s in settled] == [
        (101, Settlement.unknown),
        (102, Settlement.returned),
    ]
    assert rows(ledger, "SELECT id, state FROM events ORDER BY id") == [(101, "completed"), (102, "admitted")]
    assert rows(ledger, "SELECT outcome FROM task_events WHERE event_id = 101") == [("unknown",)]
    assert rows(ledger, "SELECT superseded_at IS NOT NULL, ended_at IS NOT NULL FROM tasks") == [(1, 1)]
    assert rows(ledger, "SELECT kind FROM outbox WHERE kind = 'completion'") == [("completion",)]


def test_a_reported_outcome_stands_through_settlement(world: LedgerWorld, ledger: Ledger) -> None:
    world.request(101)
    launched = launch(ledger, 101)
    world.get_dispatch(launched.task_id, 101)
    world.report(launched.task_id, 101, "succeeded", reply_id=5)
    settled = end(ledger, launched.attempt_id, StopReason.failed)
    assert [s.settlement for s in settled] == [Settlement.reported]
    assert rows(ledger, "SELECT outcome, reply_id FROM task_events") == [("succeeded", 5)]
    assert rows(ledger, "SELECT kind FROM outbox WHERE kind = 'completion'") == []


def test_a_proven_spawn_failure_is_retried_once_then_blocked(
    world: LedgerWorld, ledger: Ledger, clock: FakeClock
) -> None:
    world.request(101)
    first = launch(ledger, 101)
    assert [s.settlement for s in end(ledger, first.attempt_id, StopReason.failed, spawn_failed=True)] == [
        Settlement.withdrawn
    ]
    assert rows(ledger, "SELECT state FROM events") == [("admitted",)]
    clock.advance(5)
    second = launch(ledger, 101)
    assert [s.settlement for s in end(ledger, second.attempt_id, StopReason.failed, spawn_failed=True)] == [
        Settlement.blocked_again
    ]
    assert rows(ledger, "SELECT state, reason FROM events") == [("blocked", SPAWN_FAILED)]
    with ledger.read() as connection:
        body = connection.execute("SELECT body FROM outbox WHERE kind = 'completion'").fetchone()[0]
    assert "could not be started" in body


def test_an_attempt_ends_once(world: LedgerWorld, ledger: Ledger) -> None:
    world.request(101)
    launched = launch(ledger, 101)
    end(ledger, launched.attempt_id, StopReason.finished)
    with pytest.raises(tasks.TransitionRefused):
        end(ledger, launched.attempt_id, StopReason.lost)


def test_the_database_refuses_a_second_live_task_in_one_directory(ledger: Ledger) -> None:
    import sqlite3

    insert = "INSERT INTO tasks (token_sha256, conversation_key, created_at, work_dir) VALUES (?, ?, 'x', '/srv/one')"
    with ledger.write() as connection:  # two dispatchers on one ledger, both past their own check
        connection.execute(insert, ("a" * 64, "recording:a"))
        with pytest.raises(sqlite3.IntegrityError, match="UNIQUE"):
            connection.execute(insert, ("b" * 64, "recording:b"))
