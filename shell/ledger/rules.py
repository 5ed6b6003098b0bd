"""Core's lifecycle tables and vocabularies, held twice: ``asked`` before a row moves, and SQLite
triggers named ``rule_...`` generated from the same tables, so no migration restates them.

Every state the connector writes on its own is ``asked``'s answer; a refused move raises
``MoveRefused`` before any SQL runs. Each lifecycle column has one ``BEFORE UPDATE`` trigger refusing a
change that is not an edge; each table one ``BEFORE INSERT`` trigger refusing a value outside a
column's vocabulary, and a column no edge judges is judged on update too. A value is looked up in one
``|``-joined list (``instr``): an IN list builds a temporary b-tree at every statement, a chain of ORs
is a long expression to parse. ``bring_up_to_date`` writes what the file lacks and drops what an
earlier version wrote by hand (its triggers, and vocabulary CHECKs that would refuse a newer
vocabulary); ``in_force`` is the one read a reopen costs."""

from __future__ import annotations

import functools
import re
import sqlite3
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Any, TypeVar

from returns.result import Failure

from core.destinations import MessageKind
from core.edges import ATTEMPT_EDGES, DELIVERY_EDGES, GUARD_EDGES, INTENT_EDGES, RECORD_EDGES
from core.intake_status import LANES, LaneState, LossState
from core.intent_kinds import IntentKind
from core.message_kinds import KINDS
from core.settlement import LaunchFinding
from core.snapshots import REPLY_KINDS, StopReason
from core.states import AttemptState, DeliveryState, EventOutcome, GuardState, IntentState, RecordState
from shell.ledger.connection import LedgerError

if TYPE_CHECKING:
    from core.edges import Actor, IllegalMove, LifecycleTable

Vocabulary = tuple[tuple[str, tuple[str, ...]], ...]  # some columns of one table, each with its values


@dataclass(frozen=True, slots=True)
class Lifecycle:
    """A lifecycle column and the hand-written trigger its generated rule replaces."""

    table: str
    column: str
    edges: LifecycleTable[Any]
    replaces: str
    companions: tuple[str, ...] = ()


LIFECYCLES = (
    Lifecycle("outbox", "state", INTENT_EDGES, "outbox_state_edges"),
    Lifecycle("events", "state", RECORD_EDGES, "events_state_edges"),
    Lifecycle("task_events", "delivery", DELIVERY_EDGES, "task_events_delivery_moves_forward"),
    Lifecycle("task_events", "guard", GUARD_EDGES, "task_events_guard_settles_once"),
    Lifecycle("attempts", "state", ATTEMPT_EDGES, "attempts_state_moves_forward", ("stop_reason",)),
)


def vocabularies() -> tuple[tuple[str, str, tuple[str, ...]], ...]:
    """Each vocabulary column as (table, column, its values in core's order)."""
    def values(*enums: type[StrEnum] | Iterable[str]) -> tuple[str, ...]:
        return tuple(str(value) for enum in enums for value in enum)

    return (
        ("events", "state", values(RecordState)),
        ("events", "reply_kind", ("", *(kind for kind in values(MessageKind) if kind in REPLY_KINDS))),
        ("events", "lane", tuple(LANES)),
        ("attempts", "state", values(AttemptState)),
        ("attempts", "stop_reason", ("", *values(StopReason))),
        ("attempts", "settled_as", ("", *values(LaunchFinding))),
        ("task_events", "delivery", values(DeliveryState)),
        ("task_events", "guard", values(GuardState)),
        ("task_events", "outcome", values(EventOutcome)),
        ("outbox", "kind", values(IntentKind)),
        ("outbox", "state", values(IntentState)),
        ("outbox", "message_kind", values(MessageKind)),
        ("live_lane", "state", values(LaneState)),
        ("losses", "state", values(LossState)),
    )


def _quote(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def _one_of(expression: str, values: Iterable[str]) -> str:
    """``expression`` is found whole in one ``|``-joined list and holds no ``|``."""
    values = list(values)
    if any("|" in value for value in values):
        raise ValueError(f"a value holds the separator: {values!r}")
    listed = "|" + "|".join(values) + "|"
    return f"(instr({_quote(listed)}, '|' || {expression} || '|') > 0 AND {expression} NOT GLOB '*|*')"


def _words(values: Sequence[str]) -> str:
    shown = [value or repr(value) for value in values]
    return shown[0] if len(shown) == 1 else ", ".join(shown[:-1]) + " or " + shown[-1]


def _lifecycle_trigger(lifecycle: Lifecycle, also: Vocabulary = ()) -> tuple[str, str]:
    """The trigger's name and text; ``also``, the table's vocabulary on update, is judged in it
    first, one trigger fewer for every reopen to parse."""
    column, edges = lifecycle.column, lifecycle.edges
    old, new = f"OLD.{column}", f"NEW.{column}"
    changed = " AND ".join(f"NEW.{name} = OLD.{name}" for name in (column, *lifecycle.companions))
    pair = f"{old} || '>' || {new}"  # the stored OLD holds no '>', so the pair splits one way
    plain = [f"{edge.source}>{edge.target}" for edge in edges.edges if edge.only_with_notes is None]
    allowed = [_one_of(pair, plain)]
    for edge in edges.edges:
        if edge.only_with_notes is not None:
            note = "NEW.note" if edge.notes_written_by_the_move else "OLD.note"
            allowed.append(
                f"({pair} = {_quote(f'{edge.source}>{edge.target}')} AND {_one_of(note, sorted(edge.only_with_notes))})"
            )
    refusals: list[str] = []
    sources = list(dict.fromkeys(str(state) for state in type(edges.edges[0].source)))
    for source in sources:
        out = [edge for edge in edges.edges if str(edge.source) == source]
        targets = [str(edge.target) for edge in out if edge.target != edge.source]
        noted = [str(edge.target) for edge in out if edge.only_with_notes is not None]
        said = f"{edges.name} moves from {source or repr(source)} only to {_words(targets)}" if targets else (
            f"{edges.name} never moves from {source or repr(source)}"
        )
        if noted:
            said += f" (to {_words(noted)} only with the notes its edge names)"
        refusals.append(f"    SELECT RAISE(ABORT, {_quote(said)}) WHERE {old} = {_quote(source)};")
    columns = ", ".join(dict.fromkeys((column, *lifecycle.companions, *(name for name, _ in also))))
    name = f"rule_{lifecycle.table}_{column}_edges"
    when = f"NOT ({changed}) AND NOT (\n       " + "\n    OR ".join(allowed) + ")"
    if also:
        outside, said = _outside(lifecycle.table, also)
        when = f"({when})\n OR {outside}"
        refusals.insert(0, f"    SELECT RAISE(ABORT, {_quote(said)}) WHERE {outside};")
    sql = (
        f"CREATE TRIGGER {name}\nBEFORE UPDATE OF {columns} ON {lifecycle.table}\n"
        f"WHEN {when}\nBEGIN\n" + "\n".join(refusals) + "\nEND"
    )
    return name, sql


def _outside(table: str, columns: Vocabulary) -> tuple[str, str]:
    """The test that a row holds a value outside its columns' vocabularies, and its words."""
    test = " OR ".join(f"NOT {_one_of(f'NEW.{column}', values)}" for column, values in columns)
    return test, f"{table}.{_words([column for column, _ in columns])}: a value core does not name"


def _vocabulary_trigger(table: str, event: str, columns: Vocabulary) -> tuple[str, str]:
    """One table's vocabulary trigger for INSERT, or for UPDATE OF its columns: one refusal for
    the table, each list written once, since every reopen parses the schema's text."""
    when, said = _outside(table, columns)
    name = f"rule_{table}_{'inserts' if event == 'INSERT' else 'updates'}_hold_their_vocabulary"
    on = "INSERT" if event == "INSERT" else "UPDATE OF " + ", ".join(column for column, _ in columns)
    return name, f"CREATE TRIGGER {name}\nBEFORE {on} ON {table}\nWHEN {when}\nBEGIN\n    SELECT RAISE(ABORT, {_quote(said)});\nEND"


URGENCY = "CASE kind " + " ".join(f"WHEN '{kind}' THEN {spec.urgency}" for kind, spec in KINDS.items()) + " END"
"""An intent's urgency, as the kind table gives it (``core.message_kinds``), in SQL."""
CLAIM_ORDER = "rule_outbox_claim_order"
"""The index the outbox's claim reads its order from (``shell.ledger.outbox.next_due``)."""


@functools.cache
def generated() -> dict[str, str]:
    """Every generated trigger and index, name -> its text exactly as ``sqlite_master`` keeps it."""
    judged = {(lifecycle.table, lifecycle.column) for lifecycle in LIFECYCLES}
    by_table: dict[str, list[tuple[str, tuple[str, ...]]]] = {}
    for table, column, values in vocabularies():
        by_table.setdefault(table, []).append((column, values))
    unjudged = {
        table: tuple((column, values) for column, values in columns if (table, column) not in judged)
        for table, columns in by_table.items()
    }
    triggers: dict[str, str] = {}
    for lifecycle in LIFECYCLES:
        triggers.update([_lifecycle_trigger(lifecycle, unjudged.pop(lifecycle.table, ()))])
    for table, columns in by_table.items():
        triggers.update([_vocabulary_trigger(table, "INSERT", tuple(columns))])
        if unjudged.get(table):
            triggers.update([_vocabulary_trigger(table, "UPDATE", unjudged[table])])
    triggers[CLAIM_ORDER] = f"CREATE INDEX {CLAIM_ORDER} ON outbox (state, ({URGENCY}), not_before, id)"
    return triggers


def _rule_triggers(connection: sqlite3.Connection) -> dict[str, str]:
    query = "SELECT name, sql FROM sqlite_master WHERE type IN ('trigger', 'index') AND name GLOB 'rule_*'"
    return {str(name): str(sql) for name, sql in connection.execute(query)}


def _drop(connection: sqlite3.Connection, name: str, sql: str) -> None:
    connection.execute(f"DROP {'INDEX' if sql.startswith('CREATE INDEX') else 'TRIGGER'} IF EXISTS {name}")


def in_force(connection: sqlite3.Connection) -> bool:
    return _rule_triggers(connection) == generated()


def _vocabulary_check(column: str) -> re.Pattern[str]:
    name = re.escape(column)
    return re.compile(
        rf"\s*CHECK\s*\(\s*(?:{name}\s+IN\s*\(\s*'[^)]*\)|\({name} = '[^']*'(?: OR {name} = '[^']*')*\))\s*\)"
    )


def without_vocabulary_checks(table: str, sql: str) -> str:
    """A table's text without the CHECKs that are exactly an earlier migration's test of a vocabulary."""
    for owner, column, _ in vocabularies():
        if owner == table:
            sql = _vocabulary_check(column).sub("", sql)
    return sql


def bring_up_to_date(connection: sqlite3.Connection) -> None:
    wanted = generated()
    held = _rule_triggers(connection)
    if held == wanted:
        return
    tables = sorted({table for table, _, _ in vocabularies()})
    marks = ", ".join("?" for _ in tables)
    rewritten = [
        (new, str(name))
        for name, sql in connection.execute(
            f"SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name IN ({marks})", tables
        )
        if (new := without_vocabulary_checks(str(name), str(sql))) != sql
    ]
    if rewritten:
        connection.execute("PRAGMA writable_schema = ON")
        try:
            connection.executemany("UPDATE sqlite_master SET sql = ? WHERE type = 'table' AND name = ?", rewritten)
        finally:
            connection.execute("PRAGMA writable_schema = RESET")
    for lifecycle in LIFECYCLES:
        connection.execute(f"DROP TRIGGER IF EXISTS {lifecycle.replaces}")
    for name in held.keys() - wanted.keys():
        _drop(connection, name, held[name])
    for name, sql in wanted.items():
        if held.get(name) != sql:
            _drop(connection, name, held.get(name, sql))
            connection.execute(sql)


StateT = TypeVar("StateT", bound=StrEnum)


class MoveRefused(LedgerError):
    def __init__(self, illegal: IllegalMove) -> None:
        super().__init__(str(illegal))
        self.illegal = illegal


def asked(table: LifecycleTable[StateT], source: StateT, target: StateT, actor: Actor, note: str = "") -> StateT:
    """The state to write, as ``table`` allows ``actor`` to move from ``source``."""
    stepped = table.step(source, target, actor, note)
    if isinstance(stepped, Failure):
        raise MoveRefused(stepped.failure())
    return stepped.unwrap()
