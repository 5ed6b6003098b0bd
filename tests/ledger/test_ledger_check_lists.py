"""The vocabulary columns: no table CHECK names a list of three or more values (SQLite builds a
temporary b-tree for such an IN list at every write that checks it); each column's vocabulary is
a rule generated from core (``shell.ledger.rules``), the values listed here, and nothing else."""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from shell.clock import FakeClock
from shell.ledger import rules
from shell.ledger.connection import MIGRATIONS, Ledger, open_ledger, split_statements
from tests.support.frozen_ledger import build

Insert = Callable[..., int]
STAMP = "2026-11-29T12:00:00.000000000Z"
ATTEMPT = "att_" + "0" * 24

LISTS: dict[tuple[str, str], tuple[str, ...]] = {
    ("events", "state"): ("seen", "admitted", "queued", "blocked", "dispatched", "completed", "discarded", "held"),
    ("events", "reply_kind"): ("", "comment", "chat_line"),
    ("events", "lane"): ("poll", "live", "repair", "inbox"),  # migration 16 adds the inbox
    ("attempts", "state"): ("launching", "running", "ended"),
    ("attempts", "stop_reason"): ("", "finished", "failed", "deadline", "shutdown", "lost"),
    ("attempts", "settled_as"): ("", "ran", "did_not_run"),
    ("task_events", "delivery"): ("admitted", "exposed", "delivered", "completed"),
    ("task_events", "guard"): ("", "armed", "canceled", "fired", "refused", "abandoned"),
    ("task_events", "outcome"): ("", "succeeded", "failed", "unknown"),
    ("outbox", "kind"): (
        "guard_ack", "holding_reply", "still_running", "completion", "worker_ack", "worker_reply", "worker_note",
    ),  # migration 15 adds the worker's three
    ("outbox", "state"): ("pending", "sending", "sent", "indeterminate", "canceled", "abandoned"),
    ("outbox", "message_kind"): ("boost", "comment", "chat_line"),
    ("live_lane", "state"): ("connecting", "connected", "down"),
    ("losses", "state"): ("open", "repaired", "unrecovered"),
}
"""Each column whose CHECK named three or more values, and those values, as the migrations wrote them
(15 and 16 widened two): what the generated vocabularies hold, written down apart from core."""

_IN_LIST = re.compile(r"\w+\s+IN\s*\(\s*'[^']*'\s*,\s*'[^']*'\s*,[^)]*\)")


def _table_sql(ledger: Ledger, table: str) -> str:
    with ledger.read() as connection:
        row = connection.execute("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?", (table,)).fetchone()
    return str(row[0])


def test_no_table_check_names_a_list_of_three_or_more_values(ledger: Ledger) -> None:
    with ledger.read() as connection:
        tables = connection.execute("SELECT name, sql FROM sqlite_master WHERE type = 'table'").fetchall()
    assert [(name, found) for name, sql in tables if sql for found in _IN_LIST.findall(sql)] == []


def test_the_generated_vocabularies_are_the_migrations_lists() -> None:
    assert {(table, column): values for table, column, values in rules.vocabularies()} == LISTS


@pytest.mark.parametrize(("table", "column"), list(LISTS), ids=[f"{t}.{c}" for t, c in LISTS])
def test_no_vocabulary_is_a_check_any_longer(ledger: Ledger, table: str, column: str) -> None:
    """A CHECK cannot be altered: a vocabulary there would need its text edited for each new value."""
    sql = _table_sql(ledger, table)
    assert rules.without_vocabulary_checks(table, sql) == sql
    first, second = (re.escape(f"'{value}'") for value in LISTS[(table, column)][:2])
    assert not re.search(rf"\b{column}\s+IN\s*\(\s*{first},\s*{second}", sql)  # as migration 1 wrote it
    assert not re.search(rf"\b{column} = {first} OR {column} = {second}", sql)  # as migration 14 did


def test_the_checks_no_other_test_writes_against_still_refuse(ledger: Ledger, insert: Insert) -> None:
    """events.lane, attempts.settled_as, live_lane.state and losses.state, through real writes."""
    losses = (
        "INSERT INTO losses (cause, after_id, cursor, state, recorded_at, due_at, window_ends_at)"
        " VALUES ('overflow', 0, 0, ?, ?, ?, ?)"
    )
    lane = "INSERT INTO live_lane (id, state, since, updated_at) VALUES (1, ?, ?, ?)"
    with ledger.write() as connection:
        insert(connection, "events", id=1, lane="repair")
        task = insert(connection, "tasks")
        insert(connection, "attempts", id=ATTEMPT, task_id=task, settled_as="did_not_run")
        connection.execute(losses, ("unrecovered", STAMP, STAMP, STAMP))
        connection.execute(lane, ("down", STAMP, STAMP))
    refusals: list[Callable[[sqlite3.Connection], object]] = [
        lambda connection: insert(connection, "events", id=2, lane="carrier pigeon"),
        lambda connection: insert(connection, "attempts", id="att_" + "1" * 24, task_id=task, seq=2,
                                  settled_as="maybe"),
        lambda connection: connection.execute(losses, ("forgotten", STAMP, STAMP, STAMP)),
        lambda connection: connection.execute("UPDATE live_lane SET state = 'asleep' WHERE id = 1"),
    ]
    for refusal in refusals:
        with ledger.write() as connection, pytest.raises(sqlite3.IntegrityError, match="a value core does not name"):
            refusal(connection)


def test_the_migration_leaves_the_schema_unwritable(ledger_path: Path) -> None:
    """The generated rules remove an older ledger's vocabulary CHECKs through writable_schema, then
    RESET (off): the connection that brought main's ledger up to date goes on with the schema
    unwritable, as does one that made a new file; no migration leaves it writable either (each is
    checked as it ends)."""
    build(ledger_path.with_name("main.sqlite3"))
    for path in (ledger_path.with_name("main.sqlite3"), ledger_path):
        with open_ledger(path, clock=FakeClock()) as opened, opened.read() as connection:
            assert connection.execute("SELECT MAX(version) FROM schema_migrations").fetchone()[0] >= 14
            assert connection.execute("PRAGMA writable_schema").fetchone()[0] == 0
    connection = sqlite3.connect(ledger_path.with_name("one-by-one.sqlite3"), isolation_level=None)
    try:
        for migration in MIGRATIONS:
            connection.execute("BEGIN IMMEDIATE")
            for statement in split_statements(migration.sql):
                connection.execute(statement)
            connection.execute("COMMIT")
            assert connection.execute("PRAGMA writable_schema").fetchone()[0] == 0, migration.version
    finally:
        connection.close()
