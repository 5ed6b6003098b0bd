"""Migration 14: every table CHECK that names a list of three or more values names them as
comparisons joined by OR (SQLite builds a temporary b-tree for such an IN list at every write that
checks it). The same rule: each column still allows exactly its list, and refuses anything else."""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from shell.clock import FakeClock
from shell.ledger.connection import Ledger, open_ledger
from shell.ledger.schema import MIGRATIONS, split_statements

Insert = Callable[..., int]
STAMP = "2026-11-29T12:00:00.000000000Z"
ATTEMPT = "att_" + "0" * 24

LISTS: dict[tuple[str, str], tuple[str, ...]] = {
    ("events", "state"): ("seen", "admitted", "queued", "blocked", "dispatched", "completed", "discarded", "held"),
    ("events", "reply_kind"): ("", "comment", "chat_line"),
    ("events", "lane"): ("poll", "live", "repair"),
    ("attempts", "state"): ("launching", "running", "ended"),
    ("attempts", "stop_reason"): ("", "finished", "failed", "deadline", "shutdown", "lost"),
    ("attempts", "settled_as"): ("", "ran", "did_not_run"),
    ("task_events", "delivery"): ("admitted", "exposed", "delivered", "completed"),
    ("task_events", "guard"): ("", "armed", "canceled", "fired"),
    ("task_events", "outcome"): ("", "succeeded", "failed", "unknown"),
    ("outbox", "kind"): (
        "guard_ack", "holding_reply", "still_running", "completion", "worker_ack", "worker_reply", "worker_note",
    ),  # migration 15 adds the worker's three
    ("outbox", "state"): ("pending", "sending", "sent", "indeterminate", "canceled", "abandoned"),
    ("outbox", "message_kind"): ("boost", "comment", "chat_line"),
    ("live_lane", "state"): ("connecting", "connected", "down"),
    ("losses", "state"): ("open", "repaired", "unrecovered"),
}
"""Each column whose CHECK named three or more values, and those values, as the migrations wrote them."""

_IN_LIST = re.compile(r"\w+\s+IN\s*\(\s*'[^']*'\s*,\s*'[^']*'\s*,[^)]*\)")


def _table_sql(ledger: Ledger, table: str) -> str:
    with ledger.read() as connection:
        row = connection.execute("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?", (table,)).fetchone()
    return str(row[0])


def test_no_table_check_names_a_list_of_three_or_more_values(ledger: Ledger) -> None:
    with ledger.read() as connection:
        tables = connection.execute("SELECT name, sql FROM sqlite_master WHERE type = 'table'").fetchall()
    assert [(name, found) for name, sql in tables if sql for found in _IN_LIST.findall(sql)] == []


@pytest.mark.parametrize(("table", "column"), list(LISTS), ids=[f"{t}.{c}" for t, c in LISTS])
def test_each_rewritten_check_allows_exactly_its_list(ledger: Ledger, table: str, column: str) -> None:
    """The CHECK as the migrated ledger holds it, asked of each listed value, of NULL (which a CHECK
    lets pass) and of values it never named."""
    chain = re.search(rf"\({column} = '[^)]*'\)", _table_sql(ledger, table))
    assert chain is not None, f"{table}.{column}: no comparisons joined by OR"
    allowed = LISTS[(table, column)]
    with ledger.read() as connection:

        def passes(value: str | None) -> object:
            return connection.execute(f"SELECT {chain[0]} FROM (SELECT ? AS {column})", (value,)).fetchone()[0]

        assert [passes(value) for value in allowed] == [1] * len(allowed)
        assert passes(None) is None
        assert [passes(value) for value in ("bogus", allowed[-1] + " ", allowed[-1].upper() + "X")] == [0, 0, 0]


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
        with ledger.write() as connection, pytest.raises(sqlite3.IntegrityError, match="CHECK"):
            refusal(connection)


def test_the_migration_leaves_the_schema_unwritable(ledger_path: Path) -> None:
    """Migration 14 writes table texts through writable_schema, then RESET (off): the connection
    that migrated a new file goes on with the schema unwritable. So does every later migration
    that writes through it (15): each is checked as it ends, so a later RESET hides no earlier one."""
    with open_ledger(ledger_path, clock=FakeClock()) as fresh, fresh.read() as connection:
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
