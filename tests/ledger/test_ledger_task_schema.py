"""The record, tasks, task events and attempts at the database: CHECKs, the unique partial
indexes that let only one writer win, and the guard, attempt and supersession triggers."""

from __future__ import annotations

import itertools
import sqlite3
from collections.abc import Callable
from typing import Any

import pytest

from shell.ledger.connection import Ledger

Insert = Callable[..., int]
STAMP = "2026-11-29T12:00:00.000000000Z"
ATTEMPT = "att_" + "0" * 24


def refused(ledger: Ledger, action: Callable[[sqlite3.Connection], object], match: str) -> None:
    with ledger.write() as connection, pytest.raises(sqlite3.IntegrityError, match=match):
        action(connection)


# The record.


@pytest.mark.parametrize(
    "columns",
    [{"state": "routed"}, {"acknowledge": 2}, {"reply_kind": "email"}, {"seen_at": None},
     {"recording_id": "abc"}],
    ids=["state", "acknowledge", "reply_kind", "seen_at", "strict"],
)
def test_a_record_the_checks_refuse(ledger: Ledger, insert: Insert, columns: dict[str, Any]) -> None:
    with ledger.write() as connection, pytest.raises(sqlite3.IntegrityError):
        insert(connection, "events", id=1, **columns)


@pytest.mark.parametrize(
    "state", ["seen", "admitted", "queued", "blocked", "dispatched", "completed", "discarded",
              "held"]
)
def test_every_record_state_is_allowed(ledger: Ledger, insert: Insert, state: str) -> None:
    with ledger.write() as connection:
        insert(connection, "events", id=1, state=state)


# Tasks.


def test_a_task_ends_only_once_superseded(ledger: Ledger, insert: Insert) -> None:
    refused(ledger, lambda connection: insert(connection, "tasks", ended_at=STAMP), "CHECK")
    with ledger.write() as connection:
        insert(connection, "tasks", superseded_at=STAMP, ended_at=STAMP)


@pytest.mark.parametrize("token", ["", "A" * 64, "0" * 63, "g" * 64])
def test_a_task_keeps_a_sha256_hex_digest(ledger: Ledger, insert: Insert, token: str) -> None:
    refused(ledger, lambda connection: insert(connection, "tasks", token_sha256=token), "CHECK")


def test_a_token_hash_belongs_to_one_task(ledger: Ledger, insert: Insert) -> None:
    def twice(connection: sqlite3.Connection) -> None:
        insert(connection, "tasks", token_sha256="a" * 64)
        insert(connection, "tasks", token_sha256="a" * 64)

    refused(ledger, twice, "UNIQUE")


def test_one_live_task_per_conversation(ledger: Ledger, insert: Insert) -> None:
    with ledger.write() as connection:
        first = insert(connection, "tasks", conversation_key="recording:1")
        with pytest.raises(sqlite3.IntegrityError, match="UNIQUE"):
            insert(connection, "tasks", conversation_key="recording:1")
        connection.execute(
            "UPDATE tasks SET superseded_at = ?, ended_at = ? WHERE id = ?", (STAMP, STAMP, first)
        )
        insert(connection, "tasks", conversation_key="recording:1")
        insert(connection, "tasks", conversation_key="")
        insert(connection, "tasks", conversation_key="")


def test_a_superseded_task_still_holds_its_conversation_until_it_ends(
    ledger: Ledger, insert: Insert
) -> None:
    with ledger.write() as connection:
        insert(connection, "tasks", conversation_key="recording:1", superseded_at=STAMP)
        with pytest.raises(sqlite3.IntegrityError, match="UNIQUE"):
            insert(connection, "tasks", conversation_key="recording:1")


@pytest.mark.parametrize(
    ("later", "allowed"),
    [(STAMP, True), ("2026-11-29T13:00:00.000000000Z", False), (None, False)],
    ids=["the same time again", "another time", "cleared"],
)
def test_supersession_is_final(
    ledger: Ledger, insert: Insert, later: str | None, allowed: bool
) -> None:
    with ledger.write() as connection:
        task = insert(connection, "tasks")
        connection.execute("UPDATE tasks SET superseded_at = ? WHERE id = ?", (STAMP, task))
    with ledger.write() as connection:
        if allowed:
            connection.execute("UPDATE tasks SET superseded_at = ? WHERE id = ?", (later, task))
        else:
            with pytest.raises(sqlite3.IntegrityError, match="stays superseded"):
                connection.execute(
                    "UPDATE tasks SET superseded_at = ? WHERE id = ?", (later, task)
                )


# Task events.


def on_a_task(connection: sqlite3.Connection, insert: Insert, event_id: int = 1) -> int:
    insert(connection, "events", id=event_id, state="dispatched")
    return insert(connection, "tasks")


@pytest.mark.parametrize(
    "columns",
    [{"delivery": "pulled"}, {"guard": "maybe"}, {"outcome": "done"}, {"links": "{}"},
     {"links": "not json"}, {"event_id": 404}],
    ids=["delivery", "guard", "outcome", "links-object", "links-not-json", "foreign-key"],
)
def test_a_task_event_the_checks_refuse(
    ledger: Ledger, insert: Insert, columns: dict[str, Any]
) -> None:
    with ledger.write() as connection:
        task = on_a_task(connection, insert)
        with pytest.raises(sqlite3.IntegrityError):
            insert(connection, "task_events", **{"task_id": task, "event_id": 1, **columns})


def test_a_task_event_links_hold_a_json_array(ledger: Ledger, insert: Insert) -> None:
    with ledger.write() as connection:
        task = on_a_task(connection, insert)
        insert(connection, "task_events", task_id=task, event_id=1, links='["https://x/1"]')


def test_one_live_task_per_event(ledger: Ledger, insert: Insert) -> None:
    with ledger.write() as connection:
        first = on_a_task(connection, insert)
        second = insert(connection, "tasks")
        insert(connection, "task_events", task_id=first, event_id=1)
        with pytest.raises(sqlite3.IntegrityError, match="UNIQUE"):
            insert(connection, "task_events", task_id=second, event_id=1)
        connection.execute("UPDATE tasks SET superseded_at = ? WHERE id = ?", (STAMP, first))  # retires its rows
        insert(connection, "task_events", task_id=second, event_id=1)


def test_a_task_event_is_never_deleted(ledger: Ledger, insert: Insert) -> None:
    with ledger.write() as connection:
        task = on_a_task(connection, insert)
        insert(connection, "task_events", task_id=task, event_id=1)
        with pytest.raises(sqlite3.IntegrityError, match="never deleted"):
            connection.execute("DELETE FROM task_events")


GUARDS = ("", "armed", "canceled", "fired", "refused", "abandoned")
GUARD_EDGES = {
    ("armed", "canceled"), ("armed", "fired"), ("fired", "refused"), ("fired", "abandoned"),
}
REACHED_BY = {"canceled": ("canceled",), "fired": ("fired",), "refused": ("fired", "refused"),
              "abandoned": ("fired", "abandoned")}  # fmt: skip


@pytest.mark.parametrize(("source", "target"), list(itertools.product(GUARDS, GUARDS)))
def test_every_pair_of_guards_against_the_settles_once_trigger(
    ledger: Ledger, insert: Insert, source: str, target: str
) -> None:
    with ledger.write() as connection:
        task = on_a_task(connection, insert)
        insert(connection, "task_events", task_id=task, event_id=1, guard="armed" if source in REACHED_BY else source)
        for step in REACHED_BY.get(source, ()):
            connection.execute("UPDATE task_events SET guard = ?", (step,))
        update = "UPDATE task_events SET guard = ?"
        if source == target or (source, target) in GUARD_EDGES:
            connection.execute(update, (target,))
        else:
            with pytest.raises(sqlite3.IntegrityError, match=r"a guard (never moves|moves from \w+ only to)"):
                connection.execute(update, (target,))
        expected = target if source == target or (source, target) in GUARD_EDGES else source
        assert connection.execute("SELECT guard FROM task_events").fetchone() == (expected,)


@pytest.mark.parametrize("guard", ["canceled", "fired"])
def test_a_guard_is_written_empty_or_armed(ledger: Ledger, insert: Insert, guard: str) -> None:
    with ledger.write() as connection:
        task = on_a_task(connection, insert)
        with pytest.raises(sqlite3.IntegrityError, match="written empty or armed"):
            insert(connection, "task_events", task_id=task, event_id=1, guard=guard)


# Attempts.


@pytest.mark.parametrize(
    "columns",
    [{"state": "paused"}, {"stop_reason": "bored", "state": "ended"},
     {"state": "ended"}, {"stop_reason": "finished"}, {"seq": 0}, {"id": "att_XYZ"},
     {"id": "run_" + "0" * 24}, {"id": "att_" + "G" * 24}, {"still_running": -1}],
    ids=["state", "stop_reason", "ended-without-reason", "reason-without-end", "seq", "short-id",
         "prefix", "uppercase", "still_running"],
)
def test_an_attempt_the_checks_refuse(
    ledger: Ledger, insert: Insert, columns: dict[str, Any]
) -> None:
    with ledger.write() as connection:
        task = insert(connection, "tasks")
        with pytest.raises(sqlite3.IntegrityError):
            insert(connection, "attempts", **{"id": ATTEMPT, "task_id": task, **columns})


def test_one_live_attempt_per_task_and_one_number_per_attempt(
    ledger: Ledger, insert: Insert
) -> None:
    with ledger.write() as connection:
        task = insert(connection, "tasks")
        insert(connection, "attempts", id=ATTEMPT, task_id=task, seq=1)
        with pytest.raises(sqlite3.IntegrityError, match="UNIQUE"):
            insert(connection, "attempts", id="att_" + "1" * 24, task_id=task, seq=2)
        connection.execute(
            "UPDATE attempts SET state = 'ended', stop_reason = 'finished' WHERE id = ?", (ATTEMPT,)
        )
        with pytest.raises(sqlite3.IntegrityError, match="UNIQUE"):
            insert(connection, "attempts", id="att_" + "1" * 24, task_id=task, seq=1)
        insert(connection, "attempts", id="att_" + "1" * 24, task_id=task, seq=2)


ATTEMPT_STATES = {"launching": "", "running": "", "ended": "finished"}
ATTEMPT_EDGES = {("launching", "running"), ("launching", "ended"), ("running", "ended")}


@pytest.mark.parametrize(("source", "target"), list(itertools.product(ATTEMPT_STATES, repeat=2)))
def test_every_pair_of_attempt_states_against_the_forward_trigger(
    ledger: Ledger, insert: Insert, source: str, target: str
) -> None:
    with ledger.write() as connection:
        task = insert(connection, "tasks")
        insert(connection, "attempts", id=ATTEMPT, task_id=task, state=source,
               stop_reason=ATTEMPT_STATES[source])
        update = "UPDATE attempts SET state = ?, stop_reason = ?"
        arguments = (target, ATTEMPT_STATES[target])
        if source == target or (source, target) in ATTEMPT_EDGES:
            connection.execute(update, arguments)
        else:
            with pytest.raises(sqlite3.IntegrityError, match=r"an attempt (never moves from|moves from [a-z]+ only to)"):
                connection.execute(update, arguments)


def test_an_ended_attempt_keeps_its_stop_reason(ledger: Ledger, insert: Insert) -> None:
    with ledger.write() as connection:
        task = insert(connection, "tasks")
        insert(connection, "attempts", id=ATTEMPT, task_id=task, state="ended",
               stop_reason="lost")
        with pytest.raises(sqlite3.IntegrityError, match=r"an attempt (never moves from|moves from [a-z]+ only to)"):
            connection.execute("UPDATE attempts SET stop_reason = 'finished'")
        connection.execute("UPDATE attempts SET stop_reason = 'lost', pid = 7")  # a repeat
