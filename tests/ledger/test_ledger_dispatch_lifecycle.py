"""The dispatch lifecycle at the database (migration 3, with 1's guard, attempt and supersession
triggers): every pair of every table, and each structural trigger, on a real SQLite file.

The table-driven test takes its answers from core/edges.py: a row is brought to the source
state by the table's own edges (each step a legal write, with the task, task-event and attempt
rows it needs), then written to the target state. The database must accept exactly the pairs
the core table has, and refuse every other with its table's message. The one difference is
core.edges' self-pair: writing the state a row already has is not a move, and a trigger sees
changes only, so a self-pair the core refuses (a delivery exposed -> exposed) leaves the
database row as it was, unrefused and unchanged.
"""

from __future__ import annotations

import functools
import itertools
import sqlite3
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

import pytest
from returns.result import Success

from core.edges import (
    ATTEMPT_EDGES,
    DELIVERY_EDGES,
    GUARD_EDGES,
    RECORD_EDGES,
    TASK_EDGES,
    Actor,
    AttemptState,
    DeliveryState,
    GuardState,
    LifecycleTable,
    RecordState,
    TaskState,
)
from shell.ledger.connection import Ledger

STAMP = "2026-11-29T12:00:00.000000000Z"
LATER = "2026-11-29T12:05:00.000000000Z"
EVENT = 1
Insert = Callable[..., int]


# Building rows the legal way.


@dataclass
class Rows:
    """The rows one case works on, built by legal writes on one connection."""

    connection: sqlite3.Connection
    insert: Insert
    tasks: int = 0

    def record(self, event_id: int = EVENT, state: str = "admitted", conversation: str = "") -> int:
        """A record brought to ``state`` along the record table's own edges."""
        self.insert(self.connection, "events", id=event_id, state="seen", conversation_key=conversation)
        for target in path(RECORD_EDGES, [RecordState.seen], RecordState(state))[1:]:
            move_record(self, event_id, target)
        return event_id

    def task(self, conversation: str = "") -> int:
        self.tasks += 1
        return self.insert(self.connection, "tasks", conversation_key=conversation)

    def join(self, task_id: int, event_id: int = EVENT, guard: str = "") -> None:
        """The dispatcher's join: the row first (the record is admitted, queued or dispatched)."""
        self.connection.execute(
            "INSERT INTO task_events (task_id, event_id, conversation_key, guard)"
            " SELECT ?, id, conversation_key, ? FROM events WHERE id = ?",
            (task_id, guard, event_id),
        )

    def dispatch(self, event_id: int = EVENT, guard: str = "") -> int:
        """A new live task carrying the record, then the record moved to dispatched."""
        task_id = self.task()
        self.join(task_id, event_id, guard)
        self.set("events", "state = 'dispatched'", "id = ?", event_id)
        return task_id

    def expose(self, task_id: int, event_id: int = EVENT, *, pulled: bool = True) -> None:
        pulled_at = STAMP if pulled else None
        self.set(
            "task_events", "delivery = 'exposed', exposed_at = ?, pulled_at = ?",
            "task_id = ? AND event_id = ?", STAMP, pulled_at, task_id, event_id,
        )

    def supersede(self, task_id: int) -> None:
        self.set("tasks", "superseded_at = ?, ended_at = ?", "id = ?", STAMP, STAMP, task_id)

    def live_task(self, event_id: int = EVENT) -> int | None:
        row = self.connection.execute(
            "SELECT te.task_id FROM task_events te JOIN tasks t ON t.id = te.task_id"
            " WHERE te.event_id = ? AND te.retired_at IS NULL AND t.superseded_at IS NULL",
            (event_id,),
        ).fetchone()
        return None if row is None else int(row[0])

    def set(self, table: str, assignments: str, where: str, *values: Any) -> None:
        cursor = self.connection.execute(f"UPDATE {table} SET {assignments} WHERE {where}", values)
        assert cursor.rowcount == 1

    def one(self, sql: str, *values: Any) -> Any:
        return self.connection.execute(sql, values).fetchone()[0]


def path(table: LifecycleTable[Any], starts: list[Any], goal: Any) -> list[Any]:
    """The shortest walk along ``table``'s edges from an insert state to ``goal``."""
    walks = deque([start] for start in starts)
    seen = set(starts)
    while walks:
        walk = walks.popleft()
        if walk[-1] == goal:
            return walk
        for edge in table.edges:
            if edge.source == walk[-1] and edge.target not in seen:
                seen.add(edge.target)
                walks.append([*walk, edge.target])
    raise AssertionError(f"{table.name}: {goal} cannot be reached from {starts}")


# Each table: how a row is made, moved and read at the database, and what its edges refuse.


def move_record(rows: Rows, event_id: int, target: RecordState) -> None:
    """A record's move as its writer makes it: a dispatch joins a live task first, a redispatch
    supersedes the old task and joins a new one, a return from dispatched supersedes first."""
    state = rows.one("SELECT state FROM events WHERE id = ?", event_id)
    live = rows.live_task(event_id)
    if target is RecordState.dispatched and state in ("admitted", "queued", "dispatched"):
        if live is not None and state == "dispatched":
            rows.supersede(live)  # a redispatch: the old task goes, a new one carries it
        if live is None or state == "dispatched":
            rows.join(rows.task(), event_id)
    elif state == "dispatched" and target in (RecordState.admitted, RecordState.blocked) and live:
        rows.supersede(live)  # never exposed: its task is superseded, the record returned
    elif state == "completed" and target in (RecordState.admitted, RecordState.discarded):
        decide(rows, event_id, target, live)  # a person's decision after the outcome settled
        return
    elif state == "dispatched" and target is RecordState.discarded:
        discard_unhanded(rows, event_id)  # a follow-up its task never handed out
        return
    rows.set("events", "state = ?", "id = ?", str(target), event_id)


def discard_unhanded(rows: Rows, event_id: int) -> None:
    """A person's discard of a dispatched record no worker was handed: the decision row first."""
    rows.connection.execute(
        "INSERT INTO decisions (action, event_id, decided_by, decided_at, from_state, from_revision, to_state)"
        " SELECT 'discard', id, 'local:test', ?, state, revision, 'discarded' FROM events WHERE id = ?",
        (STAMP, event_id),
    )
    rows.set("events", "state = 'discarded', reason = 'by_operator'", "id = ?", event_id)


def decide(rows: Rows, event_id: int, target: RecordState, live: int | None) -> None:
    """A person's decision out of completed, as ``shell.ledger.decisions`` writes it: the task has
    ended, the outcome settled unknown, the decision row first, then the move it names."""
    if live is not None:
        rows.supersede(live)
    rows.set("task_events", "outcome = 'unknown'", "event_id = ?", event_id)
    action = "redispatch" if target is RecordState.admitted else "discard"
    rows.connection.execute(
        "INSERT INTO decisions (action, event_id, decided_by, decided_at, from_state, from_outcome,"
        " from_revision, to_state) SELECT ?, id, 'local:test', ?, state, 'unknown', revision, ?"
        " FROM events WHERE id = ?",
        (action, STAMP, str(target), event_id),
    )
    reason = "by_operator" if target is RecordState.discarded else ""
    rows.set("events", "state = ?, reason = ?", "id = ?", str(target), reason, event_id)


@dataclass(frozen=True)
class Table:
    lifecycle: LifecycleTable[Any]
    states: type[StrEnum]
    make: Callable[[Rows, Any], Callable[[Any], None]]  # builds the row; returns its mover
    read: str  # SQL reading the state of the one row
    refusals: Callable[[Any], str]  # the message refusing a pair not in the table, by source


def make_record(rows: Rows, state: RecordState) -> Callable[[RecordState], None]:
    rows.record(EVENT, state)
    return lambda target: move_record(rows, EVENT, target)


RECORD_REFUSALS = {  # the generated rule's words (shell.ledger.rules), one per source state
    "seen": "a record moves from seen only to admitted, queued, blocked or discarded",
    "blocked": "a record moves from blocked only to admitted, queued or discarded",
    "admitted": "a record moves from admitted only to dispatched, queued, blocked, discarded or held",
    "queued": "a record moves from queued only to dispatched, blocked, discarded or held",
    "dispatched": "a record moves from dispatched only to admitted, blocked, completed or discarded",
    "held": "a record moves from held only to admitted, queued, blocked or discarded",
    "completed": "a record moves from completed only to admitted or discarded",
    "discarded": "a record never moves from discarded",
}


def make_task(rows: Rows, state: TaskState) -> Callable[[TaskState], None]:
    task_id = rows.task()
    if state is TaskState.superseded:
        rows.supersede(task_id)

    def move(target: TaskState) -> None:
        stamp = STAMP if target is TaskState.superseded else None  # a repeat writes what it has
        rows.set("tasks", "superseded_at = ?", "id = ?", stamp, task_id)

    return move


DELIVERY_WRITES = {
    DeliveryState.admitted: "delivery = 'admitted'",
    DeliveryState.exposed: f"delivery = 'exposed', exposed_at = '{STAMP}', pulled_at = '{STAMP}'",
    DeliveryState.delivered: f"delivery = 'delivered', delivered_at = '{STAMP}'",
    DeliveryState.completed: f"delivery = 'completed', outcome = 'succeeded', completed_at = '{STAMP}'",
}


def make_delivery(rows: Rows, state: DeliveryState) -> Callable[[DeliveryState], None]:
    rows.record(EVENT, "dispatched")
    task_id = rows.live_task()
    assert task_id is not None

    def move(target: DeliveryState) -> None:
        rows.set("task_events", DELIVERY_WRITES[target], "task_id = ? AND event_id = ?", task_id, EVENT)

    for target in path(DELIVERY_EDGES, [DeliveryState.admitted], state)[1:]:
        move(target)
    return move


def make_guard(rows: Rows, state: GuardState) -> Callable[[GuardState], None]:
    walk = path(GUARD_EDGES, [GuardState.unarmed, GuardState.armed], state)
    rows.record(EVENT, "admitted")
    task_id = rows.task()
    rows.join(task_id, EVENT, guard=str(walk[0]))

    def move(target: GuardState) -> None:
        rows.set("task_events", "guard = ?", "task_id = ? AND event_id = ?", str(target), task_id, EVENT)

    for target in walk[1:]:
        move(target)
    return move


def make_attempt(rows: Rows, state: AttemptState) -> Callable[[AttemptState], None]:
    task_id = rows.task()
    attempt_id = "att_" + "0" * 24
    rows.insert(rows.connection, "attempts", id=attempt_id, task_id=task_id)

    def move(target: AttemptState) -> None:
        stop_reason = "finished" if target is AttemptState.ended else ""
        rows.set("attempts", "state = ?, stop_reason = ?", "id = ?", str(target), stop_reason, attempt_id)

    for target in path(ATTEMPT_EDGES, [AttemptState.launching], state)[1:]:
        move(target)
    return move


DELIVERY_REFUSALS = {
    "admitted": "a delivery moves from admitted only to exposed",
    "exposed": "a delivery moves from exposed only to delivered or completed",
    "delivered": "a delivery moves from delivered only to completed",
    "completed": "a delivery never moves from completed",
}

GUARD_REFUSALS = {
    "": "a guard never moves from ''",
    "armed": "a guard moves from armed only to canceled or fired",
    "canceled": "a guard never moves from canceled",
    "fired": "a guard moves from fired only to refused or abandoned",
    "refused": "a guard never moves from refused",
    "abandoned": "a guard never moves from abandoned",
}
ATTEMPT_REFUSALS = {
    "launching": "an attempt moves from launching only to running or ended",
    "running": "an attempt moves from running only to ended",
    "ended": "an attempt never moves from ended",
}

TABLES: dict[str, Table] = {
    "record": Table(
        RECORD_EDGES, RecordState, make_record, f"SELECT state FROM events WHERE id = {EVENT}",
        lambda source: RECORD_REFUSALS[source],
    ),
    "task": Table(
        TASK_EDGES, TaskState, make_task,
        "SELECT CASE WHEN superseded_at IS NULL THEN 'live' ELSE 'superseded' END FROM tasks",
        lambda source: "a superseded task stays superseded",
    ),
    "delivery": Table(
        DELIVERY_EDGES, DeliveryState, make_delivery, "SELECT delivery FROM task_events",
        lambda source: DELIVERY_REFUSALS[source],
    ),
    "guard": Table(
        GUARD_EDGES, GuardState, make_guard, "SELECT guard FROM task_events",
        lambda source: GUARD_REFUSALS[source],
    ),
    "attempt": Table(
        ATTEMPT_EDGES, AttemptState, make_attempt, "SELECT state FROM attempts",
        lambda source: ATTEMPT_REFUSALS[source],
    ),
}


def core_allows(table: LifecycleTable[Any], source: Any, target: Any) -> bool:
    """Whether any actor may take the pair: the database holds pairs, not movers."""
    return any(isinstance(table.step(source, target, actor), Success) for actor in Actor)


EVERY_PAIR = [
    pytest.param(name, source, target, id=f"{name}:{source or 'unarmed'}->{target or 'unarmed'}")
    for name, table in TABLES.items()
    for source, target in itertools.product(table.states, table.states)
]


def test_every_pair_of_every_table_is_tried() -> None:
    assert len(EVERY_PAIR) == 64 + 4 + 16 + 36 + 9 == 129


@pytest.mark.parametrize(("name", "source", "target"), EVERY_PAIR)
def test_every_pair_of_every_table_against_the_database(
    ledger: Ledger, insert: Insert, name: str, source: StrEnum, target: StrEnum
) -> None:
    table = TABLES[name]
    with ledger.write() as connection:
        move = table.make(Rows(connection, insert), source)
    with ledger.read() as connection:
        assert connection.execute(table.read).fetchone()[0] == source
        before = connection.execute(f"SELECT * FROM {table_of(name)}").fetchall()

    allowed = core_allows(table.lifecycle, source, target)
    if allowed or source == target:
        with ledger.write():
            move(target)
        with ledger.read() as connection:
            assert connection.execute(table.read).fetchone()[0] == target
            if not allowed:  # a self-pair the core refuses: not a move, and nothing changed
                assert connection.execute(f"SELECT * FROM {table_of(name)}").fetchall() == before
    else:
        with pytest.raises(sqlite3.IntegrityError) as refusal, ledger.write():
            move(target)
        assert str(refusal.value) == table.refusals(source)
        with ledger.read() as connection:
            assert connection.execute(table.read).fetchone()[0] == source


def table_of(name: str) -> str:
    return {"record": "events", "task": "tasks", "delivery": "task_events", "guard": "task_events",
            "attempt": "attempts"}[name]


# The structural triggers, one test each.


Writing = Callable[[], AbstractContextManager[Rows]]


@pytest.fixture
def rows(ledger: Ledger, insert: Insert) -> Writing:
    """``with rows() as r:``: one write transaction, and a ``Rows`` on it."""

    @contextmanager
    def writing() -> Iterator[Rows]:
        with ledger.write() as connection:
            yield Rows(connection, insert)

    return writing


def refused(rows: Writing, message: str, action: Callable[[Rows], object]) -> None:
    with pytest.raises(sqlite3.IntegrityError) as refusal, rows() as r:
        action(r)
    assert str(refusal.value) == message


def moving(table: str, assignments: str, where: str, *values: Any) -> Callable[[Rows], None]:
    """The one UPDATE a refusal test expects refused."""
    return lambda r: r.set(table, assignments, where, *values)


def read(ledger: Ledger, sql: str, *values: Any) -> list[tuple[Any, ...]]:
    with ledger.read() as connection:
        return [tuple(row) for row in connection.execute(sql, values)]


def test_events_state_edges(ledger: Ledger, rows: Writing) -> None:
    with rows() as r:
        r.record(EVENT, "seen")
    refused(rows, RECORD_REFUSALS["seen"], lambda r: r.set("events", "state = 'completed'", "id = 1"))
    with rows() as r:
        r.set("events", "state = 'seen'", "id = 1")  # a repeat
        r.set("events", "state = 'blocked', reason = 'no_route'", "id = 1")
        r.set("events", "state = 'blocked', reason = 'throttled'", "id = 1")  # still blocked
    refused(rows, RECORD_REFUSALS["blocked"], lambda r: r.set("events", "state = 'seen'", "id = 1"))
    assert read(ledger, "SELECT state, reason FROM events") == [("blocked", "throttled")]


@pytest.mark.parametrize("state", ["completed", "discarded"])
def test_events_terminal_is_terminal(ledger: Ledger, rows: Writing, state: str) -> None:
    with rows() as r:
        r.record(EVENT, state)
        r.set("events", "state = ?, reason = 'again'", "id = 1", state)  # a repeat is no move
    for target in RecordState:
        if target != state:
            # an edge of core's (a person's decision out of completed) is the terminal trigger's
            # to refuse without its decision row; any other pair, the generated edge rule's
            edge = RECORD_EDGES.edge(RecordState(state), target) is not None
            refused(
                rows, "a completed or discarded record is terminal: its state never changes" if edge
                else RECORD_REFUSALS[state],
                moving("events", "state = ?", "id = 1", str(target)),
            )
    assert read(ledger, "SELECT state FROM events") == [(state,)]


def test_events_dispatched_while_on_a_live_task(ledger: Ledger, rows: Writing) -> None:
    message = "a record is dispatched only while a live task carries it: join it to a live task first"
    with rows() as r:
        r.record(1, "admitted")
        r.record(2, "queued")
        first = r.task()
    # The record first, the row after: refused. Onto no task at all: refused.
    refused(rows, message, lambda r: r.set("events", "state = 'dispatched'", "id = 1"))
    refused(rows, message, lambda r: r.set("events", "state = 'dispatched'", "id = 2"))
    # The dispatcher's order, the row on a live task and then the record: allowed.
    with rows() as r:
        r.join(first, 1)
        r.set("events", "state = 'dispatched'", "id = 1")
        r.join(first, 2)
        r.set("events", "state = 'dispatched'", "id = 2")
        r.supersede(first)
    # A redispatch with the old task superseded and no new one: refused. Onto a new task: allowed.
    refused(rows, message, lambda r: r.set("events", "state = 'dispatched'", "id = 1"))
    with rows() as r:
        r.join(r.task(), 1)
        r.set("events", "state = 'dispatched'", "id = 1")
    # Record 2 stays dispatched without a live task, waiting for an outcome; it may complete.
    with rows() as r:
        r.set("events", "state = 'completed'", "id = 2")
    assert read(ledger, "SELECT id, state FROM events ORDER BY id") == [(1, "dispatched"), (2, "completed")]


@pytest.mark.parametrize("target", ["admitted", "blocked"])
def test_events_handed_work_settles_first(ledger: Ledger, rows: Writing, target: str) -> None:
    message = "a record whose instruction was exposed to a worker leaves dispatched only to completed"
    with rows() as r:
        r.record(1, "admitted")
        r.record(2, "admitted")
        r.record(3, "admitted")
        task_id = r.task()
        for event_id in (1, 2, 3):
            r.join(task_id, event_id)
            r.set("events", "state = 'dispatched'", "id = ?", event_id)
        r.expose(task_id, 1)  # handed to a worker
        r.expose(task_id, 2, pulled=False)  # exposed at launch, then withdrawn below
        r.supersede(task_id)
        r.set("task_events", "withdrawn_at = ?", "event_id = 2", STAMP)
    refused(rows, message, lambda r: r.set("events", "state = ?", "id = 1", target))
    with rows() as r:
        r.set("events", "state = ?", "id = 2", target)  # withdrawn: its one automatic retry
        r.set("events", "state = ?", "id = 3", target)  # never exposed: returned
        r.set("events", "state = 'completed'", "id = 1")  # settled
    assert read(ledger, "SELECT state FROM events ORDER BY id") == [("completed",), (target,), (target,)]


def test_task_events_join_live_tasks_only(ledger: Ledger, rows: Writing) -> None:
    with rows() as r:
        for event_id, state in enumerate(RecordState, start=1):
            r.record(event_id, state)
        live, superseded = r.task(), r.task()
        r.supersede(superseded)
    refused(
        rows, "a record joins only a live task: this task is superseded or missing",
        lambda r: r.join(superseded, 2),
    )
    refused(rows, "a record joins only a live task: this task is superseded or missing", lambda r: r.join(99, 2))
    for event_id, state in enumerate(RecordState, start=1):
        if state in (RecordState.admitted, RecordState.queued, RecordState.dispatched):
            if state is not RecordState.dispatched:  # a dispatched record already has its live row
                with rows() as r:
                    r.join(live, event_id)
        else:
            refused(
                rows, "only an admitted, queued or dispatched record joins a task",
                functools.partial(Rows.join, task_id=live, event_id=event_id),
            )
    assert read(ledger, "SELECT event_id FROM task_events WHERE task_id = ? ORDER BY event_id", live) == [
        (2,), (3,)
    ]


def test_task_events_do_not_move(ledger: Ledger, rows: Writing) -> None:
    message = "a task event never moves to another task or another record"
    with rows() as r:
        r.record(1, "admitted")
        r.record(2, "admitted")
        first, second = r.task(), r.task()
        r.join(first, 1)
    refused(rows, message, lambda r: r.set("task_events", "task_id = ?", "event_id = 1", second))
    refused(rows, message, lambda r: r.set("task_events", "event_id = 2", "event_id = 1"))
    with rows() as r:
        r.set("task_events", "task_id = ?, event_id = 1", "event_id = 1", first)  # unchanged: no move
    assert read(ledger, "SELECT task_id, event_id FROM task_events") == [(first, 1)]


def test_task_events_conversation_does_not_move(ledger: Ledger, rows: Writing) -> None:
    with rows() as r:
        r.record(1, "admitted", conversation="recording:7")
        task_id = r.task("recording:7")
        r.join(task_id, 1)
        r.set("events", "conversation_key = ''", "id = 1")  # retention may clear the record's
    refused(
        rows, "a task event keeps the conversation it joined with",
        lambda r: r.set("task_events", "conversation_key = ''", "event_id = 1"),
    )
    with rows() as r:
        r.set("task_events", "conversation_key = 'recording:7'", "event_id = 1")
    assert read(ledger, "SELECT conversation_key FROM task_events") == [("recording:7",)]


def test_task_events_delivery_moves_forward(ledger: Ledger, rows: Writing) -> None:
    with rows() as r:
        r.record(1, "dispatched")
    refused(rows, DELIVERY_REFUSALS["admitted"], lambda r: r.set("task_events", DELIVERY_WRITES[DeliveryState.completed], "event_id = 1"))
    with rows() as r:
        r.set("task_events", DELIVERY_WRITES[DeliveryState.exposed], "event_id = 1")
    refused(rows, DELIVERY_REFUSALS["exposed"], lambda r: r.set("task_events", "delivery = 'admitted'", "event_id = 1"))
    with rows() as r:
        r.set("task_events", DELIVERY_WRITES[DeliveryState.delivered], "event_id = 1")
        r.set("task_events", DELIVERY_WRITES[DeliveryState.completed], "event_id = 1")
    refused(rows, DELIVERY_REFUSALS["completed"], lambda r: r.set("task_events", "delivery = 'exposed'", "event_id = 1"))
    assert read(ledger, "SELECT delivery, outcome FROM task_events") == [("completed", "succeeded")]


def test_task_events_exposure_comes_first(ledger: Ledger, rows: Writing) -> None:
    with rows() as r:
        r.record(1, "admitted")
        r.record(2, "admitted")
        task_id = r.task()
        for event_id in (1, 2):
            r.join(task_id, event_id)
            r.set("events", "state = 'dispatched'", "id = ?", event_id)
            r.expose(task_id, event_id, pulled=False)  # the dispatcher's launch exposure
    refused(
        rows, "a worker acknowledges only an instruction it pulled: this one was never pulled",
        lambda r: r.set("task_events", "delivery = 'delivered', ack_id = 5", "event_id = 1"),
    )
    refused(
        rows, "an instruction no worker pulled is completed only by the settlement, outcome unknown",
        lambda r: r.set("task_events", "delivery = 'completed', outcome = 'succeeded'", "event_id = 1"),
    )
    with rows() as r:
        # The settlement of an exposure no worker pulled: row first, then the record.
        r.set("task_events", "delivery = 'completed', outcome = 'unknown'", "event_id = 1")
        r.set("events", "state = 'completed'", "id = 1")
        # get_dispatch, then the worker acknowledges and completes what it pulled.
        r.set("task_events", "pulled_at = ?", "event_id = 2", STAMP)
        r.set("task_events", "delivery = 'delivered', ack_id = 5", "event_id = 2")
        r.set("task_events", "delivery = 'completed', outcome = 'succeeded'", "event_id = 2")
    assert read(ledger, "SELECT delivery, outcome, ack_id FROM task_events ORDER BY event_id") == [
        ("completed", "unknown", None), ("completed", "succeeded", 5)
    ]


def test_task_events_acknowledgement_settles_once(ledger: Ledger, rows: Writing) -> None:
    only_with_the_move = "an acknowledgement id is written only with the move from exposed to delivered"
    never_changes = "an acknowledgement id never changes once recorded"
    with rows() as r:
        r.record(1, "admitted")
        r.record(2, "admitted")
        task_id = r.task()
        for event_id in (1, 2):
            r.join(task_id, event_id)
            r.set("events", "state = 'dispatched'", "id = ?", event_id)
    where = "event_id = 1"
    refused(rows, only_with_the_move, lambda r: r.set("task_events", "ack_id = 5", where))  # admitted
    with rows() as r:
        r.expose(task_id, 1)
    refused(rows, only_with_the_move, lambda r: r.set("task_events", "ack_id = 5", where))  # left exposed
    refused(
        rows, only_with_the_move,
        lambda r: r.set("task_events", "delivery = 'completed', outcome = 'succeeded', ack_id = 5", where),
    )
    with rows() as r:
        r.set("task_events", "delivery = 'delivered', ack_id = 5", where)
        r.set("task_events", "ack_id = 5", where)  # the same id: no change
    refused(rows, never_changes, lambda r: r.set("task_events", "ack_id = 6", where))
    refused(rows, never_changes, lambda r: r.set("task_events", "ack_id = NULL", where))
    # Delivered without an id (the worker reported none): the id is never written later.
    with rows() as r:
        r.expose(task_id, 2)
        r.set("task_events", "delivery = 'delivered'", "event_id = 2")
    refused(rows, only_with_the_move, lambda r: r.set("task_events", "ack_id = 7", "event_id = 2"))
    assert read(ledger, "SELECT event_id, delivery, ack_id FROM task_events ORDER BY event_id") == [
        (1, "delivered", 5), (2, "delivered", None)
    ]


def test_tasks_supersession_retires_its_events(ledger: Ledger, rows: Writing) -> None:
    with rows() as r:
        r.record(1, "admitted")
        r.record(2, "admitted")
        r.record(3, "admitted")
        old, task_id, other = r.task(), r.task(), r.task()
        r.join(old, 1)
        r.supersede(old)  # row (old, 1) retired at STAMP
        r.join(task_id, 1)
        r.join(task_id, 2)
        r.join(other, 3)
        r.set("tasks", "superseded_at = ?", "id = ?", LATER, task_id)
    assert read(ledger, "SELECT task_id, event_id, retired_at FROM task_events ORDER BY task_id, event_id") == [
        (old, 1, STAMP), (task_id, 1, LATER), (task_id, 2, LATER), (other, 3, None)
    ]


def test_task_events_retirement_follows_supersession(ledger: Ledger, rows: Writing) -> None:
    with rows() as r:
        r.record(1, "admitted")
        task_id = r.task()
        r.join(task_id, 1)
    refused(
        rows, "a task event is retired only by its task's supersession: supersede the task instead",
        lambda r: r.set("task_events", "retired_at = ?", "event_id = 1", STAMP),
    )
    with rows() as r:
        r.supersede(task_id)
        r.set("task_events", "retired_at = ?", "event_id = 1", STAMP)  # the same stamp: no change
    for stamp in (LATER, None):
        refused(
            rows, "a task event is retired once, and never brought back",
            moving("task_events", "retired_at = ?", "event_id = 1", stamp),
        )
    assert read(ledger, "SELECT retired_at FROM task_events") == [(STAMP,)]


def test_task_events_withdrawn_is_final(ledger: Ledger, rows: Writing) -> None:
    message = "a withdrawn task event is final: its withdrawal and delivery never change"
    with rows() as r:
        r.record(1, "admitted")
        task_id = r.dispatch(1)
        r.expose(task_id, 1, pulled=False)
        r.supersede(task_id)
        r.set("task_events", "withdrawn_at = ?", "event_id = 1", STAMP)
        r.set("events", "state = 'admitted'", "id = 1")
    for change in ("withdrawn_at = NULL", f"withdrawn_at = '{LATER}'",
                   "delivery = 'completed', outcome = 'unknown'"):
        refused(rows, message, moving("task_events", change, "event_id = 1"))
    with rows() as r:
        r.set("task_events", "withdrawn_at = ?, links = '[1]'", "event_id = 1", STAMP)  # no change of either
    assert read(ledger, "SELECT delivery, withdrawn_at, retired_at FROM task_events") == [
        ("exposed", STAMP, STAMP)
    ]
