"""The outbox at the database: its CHECKs and indexes, the edge trigger (every pair of
states), the receipt's finality, the hold, and the two guard triggers."""

from __future__ import annotations

import itertools
import re
import sqlite3
from collections.abc import Callable
from typing import Any

import pytest

from core import notes
from core.message_kinds import guard_key
from shell.ledger.connection import Ledger

Insert = Callable[..., int]

STATES = ("pending", "sending", "sent", "indeterminate", "canceled", "abandoned")
EDGES = {
    ("pending", "sending"),
    ("pending", "canceled"),
    ("sending", "sent"),
    ("sending", "indeterminate"),
    ("sending", "canceled"),
    ("sending", "pending"),  # only with a cause proving nothing was created (migration 8)
    ("indeterminate", "sent"),
    ("indeterminate", "abandoned"),
    ("indeterminate", "pending"),
}
EDGE_REFUSAL = "an outbox intent (moves from [a-z]+ only to|never moves from)"  # the generated rule's words
STAMP = "2026-11-29T12:00:00.000000000Z"
FIXED_WIDTH = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z$")
_receipts = itertools.count(1000)


def intent_in(connection: sqlite3.Connection, insert: Insert, state: str, **columns: Any) -> int:
    """An intent written straight into ``state`` with what that state's CHECKs need."""
    if state not in ("pending", "canceled"):
        columns.setdefault("sending_at", STAMP)
    if state == "sent":
        columns.setdefault("receipt_id", next(_receipts))
    columns.setdefault("intent_key", f"test:{next(_receipts)}")
    return insert(connection, "outbox", state=state, **columns)


def move(connection: sqlite3.Connection, intent_id: int, state: str, note: str | None = None) -> None:
    """Move an intent, writing what the target state's CHECKs need (the edge trigger decides).
    A sending intent moved to pending writes a cause proving nothing was created, unless told."""
    if note is None:
        note = notes.NOT_CONNECTED if state == "pending" else ""
    connection.execute(
        "UPDATE outbox SET state = ?, sending_at = coalesce(sending_at, ?),"
        " receipt_id = CASE WHEN ? = 'sent' THEN coalesce(receipt_id, ?) ELSE receipt_id END,"
        " note = CASE WHEN state = 'sending' THEN ? ELSE note END"
        " WHERE id = ?",
        (state, STAMP, state, next(_receipts), note, intent_id),
    )


def state_of(connection: sqlite3.Connection, intent_id: int) -> str:
    return str(connection.execute("SELECT state FROM outbox WHERE id = ?", (intent_id,)).fetchone()[0])


@pytest.mark.parametrize(("source", "target"), list(itertools.product(STATES, STATES)))
def test_every_pair_of_outbox_states_against_the_edge_trigger(
    ledger: Ledger, insert: Insert, source: str, target: str
) -> None:
    with ledger.write() as connection:
        intent = intent_in(connection, insert, source)
        if source == target or (source, target) in EDGES:
            move(connection, intent, target)
            assert state_of(connection, intent) == target
        else:
            with pytest.raises(sqlite3.IntegrityError, match=EDGE_REFUSAL):
                move(connection, intent, target)
            assert state_of(connection, intent) == source


def test_a_refused_intent_may_go_back_to_pending(ledger: Ledger, insert: Insert) -> None:
    with ledger.write() as connection:
        intent = intent_in(connection, insert, "canceled", note=notes.REFUSED_NOTE)
        move(connection, intent, "pending")
        assert state_of(connection, intent) == "pending"


@pytest.mark.parametrize("note", sorted(notes.GIVEN_UP_NOTES))
def test_an_intent_given_up_unreached_may_go_back_to_pending(ledger: Ledger, insert: Insert, note: str) -> None:
    with ledger.write() as connection:
        intent = intent_in(connection, insert, "canceled", note=note)
        move(connection, intent, "pending")
        assert state_of(connection, intent) == "pending"


@pytest.mark.parametrize("note", sorted(notes.NOT_CREATED_NOTES))
def test_a_sending_intent_goes_back_to_pending_with_a_cause(ledger: Ledger, insert: Insert, note: str) -> None:
    with ledger.write() as connection:
        intent = intent_in(connection, insert, "sending")
        move(connection, intent, "pending", note)
        assert state_of(connection, intent) == "pending"


@pytest.mark.parametrize("note", ["", notes.REFUSED_NOTE, notes.given_up(notes.RATE_LIMITED), "not created"])
def test_a_sending_intent_without_such_a_cause_never_goes_back_to_pending(
    ledger: Ledger, insert: Insert, note: str
) -> None:
    with ledger.write() as connection:
        intent = intent_in(connection, insert, "sending")
        with pytest.raises(sqlite3.IntegrityError, match=EDGE_REFUSAL):
            move(connection, intent, "pending", note)
        assert state_of(connection, intent) == "sending"


def test_the_edge_rule_judges_the_cause_a_move_writes_and_the_note_a_resend_finds() -> None:
    """Generated from core.edges: sending -> pending reads the note the move writes (its cause),
    canceled -> pending the note the canceled intent carries."""
    from shell.ledger.rules import generated

    trigger = generated()["rule_outbox_state_edges"]
    causes, resendable = ("|".join(sorted(found)) for found in (notes.NOT_CREATED_NOTES, notes.RESENDABLE_NOTES))
    assert f"= 'sending>pending' AND (instr('|{causes}|', '|' || NEW.note || '|')" in trigger
    assert f"= 'canceled>pending' AND (instr('|{resendable}|', '|' || OLD.note || '|')" in trigger
    assert trigger.count("note || '|'") == 2


# The receipt.


def test_a_receipt_never_changes(ledger: Ledger, insert: Insert) -> None:
    with ledger.write() as connection:
        intent = intent_in(connection, insert, "sent", receipt_id=7)
        connection.execute("UPDATE outbox SET receipt_id = 7 WHERE id = ?", (intent,))  # a repeat
        with pytest.raises(sqlite3.IntegrityError, match="receipt never changes"):
            connection.execute("UPDATE outbox SET receipt_id = 8 WHERE id = ?", (intent,))


def test_a_receipt_never_clears(ledger: Ledger, insert: Insert) -> None:
    with ledger.write() as connection:
        intent = intent_in(connection, insert, "sent")
        with pytest.raises(sqlite3.IntegrityError, match="receipt never changes"):
            connection.execute("UPDATE outbox SET receipt_id = NULL WHERE id = ?", (intent,))


def test_a_receipt_belongs_to_one_intent_per_message_kind(ledger: Ledger, insert: Insert) -> None:
    with ledger.write() as connection:
        intent_in(connection, insert, "sent", receipt_id=7, message_kind="boost")
        intent_in(connection, insert, "sent", receipt_id=7, message_kind="comment")
        with pytest.raises(sqlite3.IntegrityError, match="UNIQUE"):
            intent_in(connection, insert, "sent", receipt_id=7, message_kind="boost")


# The table's CHECKs and the one-intent-per-key index.


@pytest.mark.parametrize(
    "columns",
    [
        {"kind": "retraction"},
        {"state": "lost"},
        {"state": "lost", "sending_at": STAMP},  # no such state, whatever else the row holds
        {"message_kind": "email"},
        {"recording_id": 0},
        {"body": ""},
        {"intent_key": ""},
        {"state": "sent", "sending_at": STAMP},  # sent without a receipt
        {"state": "sending", "sending_at": STAMP, "receipt_id": 5},  # a receipt, not sent
        {"state": "sending"},  # sending without a sending time
        {"state": "indeterminate"},
        {"state": "abandoned"},
        {"bucket_id": "not a number"},  # STRICT
    ],
    ids=lambda columns: ",".join(f"{name}={value}" for name, value in columns.items()),
)
def test_an_intent_the_checks_refuse(
    ledger: Ledger, insert: Insert, columns: dict[str, Any]
) -> None:
    with ledger.write() as connection, pytest.raises(sqlite3.IntegrityError):
        insert(connection, "outbox", **{"intent_key": "k", **columns})


@pytest.mark.parametrize("state", ["pending", "canceled"])
def test_pending_and_canceled_need_no_sending_time(
    ledger: Ledger, insert: Insert, state: str
) -> None:
    with ledger.write() as connection:
        insert(connection, "outbox", intent_key="k", state=state)


def test_a_second_intent_for_a_key_is_refused(ledger: Ledger, insert: Insert) -> None:
    with ledger.write() as connection:
        insert(connection, "outbox", intent_key="guard_ack:event:1")
        with pytest.raises(sqlite3.IntegrityError, match="UNIQUE"):
            insert(connection, "outbox", intent_key="guard_ack:event:1")


def test_an_intent_must_name_a_real_event(ledger: Ledger, insert: Insert) -> None:
    with ledger.write() as connection, pytest.raises(sqlite3.IntegrityError, match="FOREIGN"):
        insert(connection, "outbox", intent_key="k", event_id=404)


def test_an_intent_is_never_deleted(ledger: Ledger, insert: Insert) -> None:
    with ledger.write() as connection:
        intent = insert(connection, "outbox", intent_key="k")
        with pytest.raises(sqlite3.IntegrityError, match="never deleted"):
            connection.execute("DELETE FROM outbox WHERE id = ?", (intent,))


# The hold.


def test_nothing_moves_to_sending_under_a_hold(ledger: Ledger, insert: Insert) -> None:
    with ledger.write() as connection:
        intent = intent_in(connection, insert, "pending")
        insert(connection, "hold_marker")
        with pytest.raises(sqlite3.IntegrityError, match="the connector is held"):
            move(connection, intent, "sending")
        connection.execute("DELETE FROM hold_marker")
        move(connection, intent, "sending")
        assert state_of(connection, intent) == "sending"


@pytest.mark.parametrize(
    ("source", "target"),
    [("pending", "canceled"), ("sending", "sent"), ("sending", "indeterminate"),
     ("indeterminate", "pending")],
)
def test_a_hold_stops_only_the_move_to_sending(
    ledger: Ledger, insert: Insert, source: str, target: str
) -> None:
    with ledger.write() as connection:
        intent = intent_in(connection, insert, source)
        insert(connection, "hold_marker")
        move(connection, intent, target)
        assert state_of(connection, intent) == target


@pytest.mark.parametrize(
    "columns", [{"id": 2}, {"held_by": ""}], ids=["a second marker", "held by nobody"]
)
def test_the_hold_marker_checks(ledger: Ledger, insert: Insert, columns: dict[str, Any]) -> None:
    with ledger.write() as connection, pytest.raises(sqlite3.IntegrityError):
        insert(connection, "hold_marker", **columns)


# The guard triggers.


def guarded_event(connection: sqlite3.Connection, insert: Insert, event_id: int = 1) -> int:
    """An event with a task; the task's id."""
    insert(connection, "events", id=event_id, state="dispatched", acknowledge=1)
    return insert(connection, "tasks", conversation_key=f"recording:{event_id}")


def guard_of(connection: sqlite3.Connection, task_id: int, event_id: int = 1) -> str:
    row = connection.execute(
        "SELECT guard FROM task_events WHERE task_id = ? AND event_id = ?", (task_id, event_id)
    ).fetchone()
    return str(row[0])


def test_get_dispatch_cancels_the_pending_guard(ledger: Ledger, insert: Insert) -> None:
    with ledger.write() as connection:
        task = guarded_event(connection, insert)
        guarded_event(connection, insert, event_id=2)
        intent = intent_in(connection, insert, "pending", intent_key=guard_key(1), event_id=1)
        other = intent_in(connection, insert, "pending", intent_key=guard_key(2), event_id=2)
        insert(connection, "task_events", task_id=task, event_id=1, guard="armed")
        connection.execute("UPDATE task_events SET guard = 'canceled' WHERE event_id = 1")
        row = connection.execute(
            "SELECT state, note, finished_at FROM outbox WHERE id = ?", (intent,)
        ).fetchone()
        assert row[:2] == ("canceled", notes.CANCELED_BY_GET_DISPATCH)
        assert FIXED_WIDTH.match(row[2])
        assert state_of(connection, other) == "pending"


@pytest.mark.parametrize(
    "path", [("sending",), ("sending", "sent"), ("sending", "indeterminate"), ("canceled",)]
)
def test_get_dispatch_leaves_a_guard_that_is_no_longer_pending(
    ledger: Ledger, insert: Insert, path: tuple[str, ...]
) -> None:
    with ledger.write() as connection:
        task = guarded_event(connection, insert)
        intent = intent_in(connection, insert, "pending", intent_key=guard_key(1), event_id=1)
        insert(connection, "task_events", task_id=task, event_id=1, guard="armed")
        for state in path:
            move(connection, intent, state)
        connection.execute("UPDATE task_events SET guard = 'canceled' WHERE event_id = 1")
        assert state_of(connection, intent) == path[-1]


@pytest.mark.parametrize(
    ("intent_state", "guard"),
    [("pending", "armed"), ("canceled", "armed"), ("sending", "fired"), ("sent", "fired"),
     ("indeterminate", "fired"), ("abandoned", "fired"), (None, "armed")],
)
def test_a_task_created_after_the_guard_went_out_is_told_it_fired(
    ledger: Ledger, insert: Insert, intent_state: str | None, guard: str
) -> None:
    with ledger.write() as connection:
        task = guarded_event(connection, insert)
        if intent_state is not None:
            intent_in(connection, insert, intent_state, intent_key=guard_key(1), event_id=1)
        insert(connection, "task_events", task_id=task, event_id=1, guard="armed")
        assert guard_of(connection, task) == guard


def test_an_unguarded_task_event_is_left_unguarded(ledger: Ledger, insert: Insert) -> None:
    with ledger.write() as connection:
        task = guarded_event(connection, insert)
        intent_in(connection, insert, "sent", intent_key=guard_key(1), event_id=1)
        insert(connection, "task_events", task_id=task, event_id=1)
        assert guard_of(connection, task) == ""
