"""``shell.ledger.hold`` on a real SQLite file: one transaction sets the hold (generation, review
tags, held records, their guards canceled), the dispatcher launches nothing and no worker gets its
first instruction while it stands (and the triggers refuse both), and a release clears it."""

from __future__ import annotations

import sqlite3

import pytest

from core.decisions import Action
from core.edges import IntentState
from core.message_kinds import guard_key
from core.notes import CANCELED_BY_HOLD
from core.snapshots import StopReason
from shell.cli.decisions import described
from shell.clock import FakeClock
from shell.ledger import hold, tasks
from shell.ledger.connection import Ledger
from shell.ledger.decisions import decide
from shell.ledger.hold import release, set_hold
from tests.support.ledger_world import PROJECT, LedgerWorld


def states(ledger: Ledger) -> dict[int, tuple[str, int]]:
    with ledger.read() as connection:
        return {row[0]: (row[1], row[2]) for row in connection.execute("SELECT id, state, review FROM events")}


def guard_of(ledger: Ledger, event_id: int) -> tuple[str, str]:
    with ledger.read() as connection:
        return connection.execute(
            "SELECT state, note FROM outbox WHERE intent_key = ?", (guard_key(event_id),)
        ).fetchone()


def test_a_hold_holds_the_waiting_records_and_tags_every_open_one(world: LedgerWorld, ledger: Ledger) -> None:
    world.request(1)  # admitted, its guard pending
    world.request(2, recording_id=1_000_001)  # same conversation as 1: queued behind it
    world.verdict(2, "queued")
    world.seen(3)
    world.seen(4)
    world.verdict(4, "blocked", "summary_unreadable")
    world.request(5)
    world.task(5)
    world.seen(6)
    world.verdict(6, "discarded", "not_addressed")
    done = set_hold(ledger, "local:ana", "cutover", ledger.clock.now())
    assert states(ledger) == {
        1: ("held", 1), 2: ("held", 1), 3: ("seen", 1), 4: ("blocked", 1), 5: ("dispatched", 1),
        6: ("discarded", 0),
    }
    assert guard_of(ledger, 1) == ("canceled", CANCELED_BY_HOLD)
    assert set(done.canceled_intents) == {world_guard(ledger, 1), world_guard(ledger, 2)}
    assert guard_of(ledger, 5)[0] == "pending"  # a task carries it: not held, its guard untouched
    with ledger.read() as connection:
        assert hold.standing(connection) == hold.StandingHold("local:ana", world.now(), "cutover", 1)
        assert connection.execute("SELECT id, held_by, cause, released_at FROM generations").fetchall() == [
            (1, "local:ana", "cutover", None)
        ]


def world_guard(ledger: Ledger, event_id: int) -> int:
    with ledger.read() as connection:
        return int(connection.execute("SELECT id FROM outbox WHERE intent_key = ?", (guard_key(event_id),)).fetchone()[0])


def test_a_second_hold_is_a_new_generation_and_keeps_the_first_setter(
    world: LedgerWorld, ledger: Ledger, clock: FakeClock
) -> None:
    first_at = world.now()
    set_hold(ledger, "local:ana", "cutover", clock.now())
    clock.advance(300)
    again = set_hold(ledger, "local:bob", "still cutting over", clock.now())
    assert (again.generation, again.plan.already) == (2, True)
    with ledger.read() as connection:
        assert hold.standing(connection) == hold.StandingHold("local:ana", first_at, "still cutting over", 2)


def test_nothing_launches_while_the_hold_stands_and_records_admitted_after_it_run_on_release(
    world: LedgerWorld, ledger: Ledger
) -> None:
    set_hold(ledger, "local:ana", "cutover", ledger.clock.now())
    world.request(7)  # admitted after the hold: not held
    assert states(ledger)[7] == ("admitted", 0)
    with ledger.read() as connection:
        assert tasks.startable_records(connection, frozenset({PROJECT}), 4) == []
    with pytest.raises(tasks.NotStartable, match="held"):
        world.launch(7)
    released = release(ledger, "local:bob", ledger.clock.now())
    assert released.summary == "Released; 0 held records stay held"
    with ledger.read() as connection:
        assert tasks.startable_records(connection, frozenset({PROJECT}), 4) == [(7, PROJECT)]
        assert connection.execute("SELECT released_by FROM generations").fetchall() == [("local:bob",)]
    assert world.launch(7).event_ids == (7,)


def test_the_ledger_refuses_a_launch_and_a_first_exposure_under_the_hold(world: LedgerWorld, ledger: Ledger) -> None:
    world.request(8)
    task_id = world.task(8)
    set_hold(ledger, "local:ana", "cutover", ledger.clock.now())
    with pytest.raises(sqlite3.IntegrityError, match="nothing is launched"), ledger.write() as connection:
        connection.execute(
            "INSERT INTO attempts (id, task_id, seq, state, launched_at) VALUES (?, ?, 1, 'launching', ?)",
            ("att_" + "0" * 23 + "9", task_id, world.now()),
        )
    with pytest.raises(sqlite3.IntegrityError, match="no instruction is handed out"), ledger.write() as connection:
        connection.execute("UPDATE task_events SET delivery = 'exposed' WHERE task_id = ?", (task_id,))


def test_a_release_with_no_hold_changes_nothing(world: LedgerWorld, ledger: Ledger) -> None:
    world.request(1)
    assert release(ledger, "local:bob", ledger.clock.now()).summary == "No hold stood"
    set_hold(ledger, "local:ana", "cutover", ledger.clock.now())
    assert release(ledger, "local:bob", ledger.clock.now()).summary == "Released; 1 held record stays held"
    assert states(ledger)[1] == ("held", 1)
    assert guard_of(ledger, 1)[0] == str(IntentState.canceled)


def test_a_hold_revokes_a_redispatch_waiting_on_a_live_task_with_a_note(world: LedgerWorld, ledger: Ledger) -> None:
    world.request(7)
    launched = world.launch(7, running_pid=4242)
    world.get_dispatch(launched.task_id, 7)
    world.report(launched.task_id, 7, "failed")  # completed by its worker; the task still runs
    decide(ledger, 7, Action.redispatch, "local:ada", ledger.clock.now(), served=frozenset({PROJECT})).unwrap()
    done = set_hold(ledger, "local:ana", "cutover", ledger.clock.now())
    assert [waiting.event_id for waiting in done.plan.revoke] == [7]
    assert done.summary.endswith(", 1 waiting redispatch revoked")
    decision_id = done.plan.revoke[0].decision_id
    assert described(done, "local:ana")["revoked_redispatches"] == [
        {"decision_id": decision_id, "event_id": 7, "task_id": launched.task_id}
    ], "hold --json names what it revoked"
    with ledger.read() as connection:
        note = connection.execute("SELECT note FROM revoked_redispatches").fetchone()[0]
    assert note == (f"revoked by the hold (generation 1) before task {launched.task_id} ended; "
                    "redispatch event 7 again after `bin/connect release`")
    with ledger.write() as connection:
        tasks.end_attempt(connection, launched.attempt_id, StopReason.failed, spawn_failed=False, now=ledger.clock.now())
    assert states(ledger)[7] == ("completed", 1), "the revoked redispatch is not applied as its task ends"
    release(ledger, "local:ana", ledger.clock.now())
    again = decide(ledger, 7, Action.redispatch, "local:ada", ledger.clock.now(), served=frozenset({PROJECT}))
    assert again.unwrap().plan.to_state == "admitted", "after the release a person redispatches it again"
    assert states(ledger)[7] == ("admitted", 1)


def test_a_redispatch_the_hold_revoked_is_authorized_again_after_release_while_its_task_runs(
    world: LedgerWorld, ledger: Ledger
) -> None:
    world.request(8)
    launched = world.launch(8, running_pid=4242)
    world.get_dispatch(launched.task_id, 8)
    served = frozenset({PROJECT})
    decide(ledger, 8, Action.redispatch, "local:ada", ledger.clock.now(), served=served).unwrap()
    set_hold(ledger, "local:ana", "cutover", ledger.clock.now())
    release(ledger, "local:ana", ledger.clock.now())
    again = decide(ledger, 8, Action.redispatch, "local:ada", ledger.clock.now(), served=served).unwrap()
    assert again.plan.stop_task == launched.task_id, "a new authorization, not the revoked one's 'already'"
    with ledger.write() as connection:
        tasks.end_attempt(connection, launched.attempt_id, StopReason.failed, spawn_failed=False, now=ledger.clock.now())
    assert states(ledger)[8] == ("admitted", 1)
