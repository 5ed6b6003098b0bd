"""The intents a transition calls for: written in its transaction, one per thing answered for."""

import sqlite3

import pytest

from core.snapshots import StopReason
from core.templates import needs_a_person
from shell.clock import FakeClock
from shell.ledger import tasks
from shell.ledger.connection import Ledger
from tests.support.ledger_world import LedgerWorld


def intents(ledger: Ledger) -> list[tuple[str, str, str]]:
    with ledger.read() as connection:
        return [
            tuple(row)
            for row in connection.execute("SELECT intent_key, kind, not_before FROM outbox ORDER BY id")
        ]  # type: ignore[misc]


def body_of(ledger: Ledger, kind: str) -> str:
    with ledger.read() as connection:
        return str(connection.execute("SELECT body FROM outbox WHERE kind = ?", (kind,)).fetchone()[0])


def test_an_intent_rolls_back_with_its_transition(world: LedgerWorld, ledger: Ledger) -> None:
    world.seen(101)
    with ledger.write() as connection:
        connection.execute(
            "CREATE TRIGGER refuse_intents BEFORE INSERT ON outbox BEGIN SELECT RAISE(ABORT, 'injected'); END"
        )
    with pytest.raises(sqlite3.IntegrityError, match="injected"):
        world.verdict(101, "admitted")
    with ledger.read() as connection:
        assert connection.execute("SELECT state, revision FROM events").fetchone() == ("seen", 0)


def test_a_completion_read_for_an_attempt_not_ended_raises_rolling_its_transition_back(
    world: LedgerWorld, ledger: Ledger
) -> None:
    world.request(101)
    launched = world.launch(101, "/srv")
    with pytest.raises(tasks.TransitionRefused, match="has not ended"), ledger.write() as connection:
        tasks.completion(connection, launched.attempt_id, ledger.clock.now())


def test_a_request_admitted_or_queued_gets_one_guard_due_thirty_seconds_after_the_verdict(
    world: LedgerWorld, ledger: Ledger, clock: FakeClock
) -> None:
    world.seen(101)
    world.seen(102)
    world.verdict(101, "admitted")
    world.verdict(102, "queued")
    world.verdict(102, "queued")  # decided again: still one intent for the thing answered for
    keys = [(key, kind) for key, kind, _ in intents(ledger)]
    assert keys == [("guard_ack:event:101", "guard_ack"), ("guard_ack:event:102", "guard_ack")]
    assert intents(ledger)[0][2] == "2026-11-29T12:00:30.000000000Z"


@pytest.mark.parametrize(
    ("state", "reason", "acknowledge"),
    [("admitted", "", False), ("discarded", "not_addressed", True), ("blocked", "throttled", True)],
)
def test_no_guard_and_no_holding_reply_where_nothing_was_asked_or_nothing_is_owed(
    world: LedgerWorld, ledger: Ledger, state: str, reason: str, acknowledge: bool
) -> None:
    world.seen(101)
    world.verdict(101, state, reason, acknowledge=acknowledge)
    assert intents(ledger) == []


def test_a_request_blocked_for_want_of_a_route_gets_one_holding_reply_at_its_reply_destination(
    world: LedgerWorld, ledger: Ledger
) -> None:
    world.seen(101, reply_kind="chat_line")
    for _ in range(3):  # retried on the schedule, blocked each time
        world.verdict(101, "blocked", "no_route")
    with ledger.read() as connection:
        rows = connection.execute(
            "SELECT intent_key, message_kind, recording_id, not_before FROM outbox"
        ).fetchall()
    assert rows == [("holding_reply:event:101", "chat_line", 1_069_478_985, "2026-11-29T12:00:00.000000000Z")]
    assert "bin/connect redispatch 101" in body_of(ledger, "holding_reply")


def test_still_running_is_one_intent_per_attempt_and_occurrence_and_none_once_ended(
    world: LedgerWorld, ledger: Ledger, clock: FakeClock
) -> None:
    world.request(101)
    task_id = world.task(101)
    attempt_id = world.attempt(task_id)
    world.tick(attempt_id)
    clock.advance(600)
    world.tick(attempt_id)
    world.end_attempt(attempt_id, "deadline")
    world.tick(attempt_id)
    keys = [key for key, kind, _ in intents(ledger) if kind == "still_running"]
    assert keys == [f"still_running:attempt:{attempt_id}:1", f"still_running:attempt:{attempt_id}:2"]
    with ledger.read() as connection:
        counted = connection.execute("SELECT still_running FROM attempts").fetchone()[0]
    assert counted == 2, "an ended attempt's occurrences are not counted on"


def test_a_completion_notice_names_what_needs_a_person_read_back_from_the_rows(
    world: LedgerWorld, ledger: Ledger
) -> None:
    world.request(101)
    world.seen(102)
    world.verdict(102, "queued")
    task_id = world.task(101, 102)
    attempt_id = world.attempt(task_id)
    world.get_dispatch(task_id, 102)
    world.report(task_id, 102, "succeeded")  # no reply reported
    world.end_attempt(attempt_id, "failed")
    body = body_of(ledger, "completion")
    assert "Event 101: unknown" in body
    assert needs_a_person(101) in body
    assert "Event 102: succeeded, with no reply reported." in body
    assert needs_a_person(102) not in body


def test_no_completion_notice_when_every_event_succeeded_with_a_reply(
    world: LedgerWorld, ledger: Ledger
) -> None:
    world.request(101)
    task_id = world.task(101)
    attempt_id = world.attempt(task_id)
    world.get_dispatch(task_id, 101)
    world.report(task_id, 101, "succeeded", reply_id=77)
    world.end_attempt(attempt_id, "finished")
    assert [kind for _, kind, _ in intents(ledger)] == ["guard_ack"]


def test_a_record_blocked_again_for_a_failed_start_is_read_from_the_record(
    world: LedgerWorld, ledger: Ledger
) -> None:
    world.request(101)
    for _ in range(2):  # the worker's program could not be started, twice
        launched = world.launch(101, "/srv")
        with ledger.write() as connection:
            tasks.end_attempt(
                connection,
                launched.attempt_id,
                StopReason.failed,
                spawn_failed=True,
                now=ledger.clock.now(),
            )
    with ledger.read() as connection:
        assert connection.execute("SELECT state, reason FROM events").fetchone() == (
            "blocked",
            "spawn_failed",
        )
    assert "Event 101: the worker could not be started." in body_of(ledger, "completion")
