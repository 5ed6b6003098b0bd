"""Migrations: numbered files applied once each, even by two processes opening a fresh ledger
at once; and the two ways a time is stamped (Python's, SQL's) have the same fixed width."""

from __future__ import annotations

import re
import sqlite3
import subprocess
import sys
import time
from datetime import timedelta
from pathlib import Path

from core.timestamps import format_timestamp
from shell.clock import FakeClock, SystemClock
from shell.ledger import connection as ledger_module
from shell.ledger.connection import (
    MIGRATIONS,
    SCHEMA_VERSION,
    SQL_NOW,
    Ledger,
    blank_ledger,
    open_ledger,
    split_statements,
)

FIXED_WIDTH = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z$")
PROJECT = Path(ledger_module.__file__).resolve().parents[2]

OPENER = """
import sys
from shell.ledger.connection import open_ledger
ledger_path, ready = sys.argv[1:]
open(ready, "w").close()
open_ledger(ledger_path).close()
"""


def test_the_schema_version_is_the_highest_migration_number() -> None:
    files = sorted((PROJECT / "shell" / "ledger" / "migrations").glob("[0-9][0-9][0-9][0-9]_*.sql"))
    assert [migration.name for migration in MIGRATIONS] == [file.name for file in files]
    assert SCHEMA_VERSION == int(files[-1].name[:4]) == len(files)


def test_each_migration_is_recorded_once_with_the_time_it_was_applied(
    ledger_path: Path, clock: FakeClock
) -> None:
    with open_ledger(ledger_path, clock=clock) as ledger, ledger.read() as connection:
        recorded = connection.execute("SELECT version, applied_at FROM schema_migrations")
        assert recorded.fetchall() == [
            (version, format_timestamp(clock.now())) for version in range(1, SCHEMA_VERSION + 1)
        ]


def test_two_processes_migrating_a_fresh_ledger_apply_each_migration_once(
    ledger_directory: Path,
) -> None:
    """The test holds the write lock on a fresh (WAL, unmigrated) file while four openers
    start, so all of them read version 0 before any can migrate; then lets them race."""
    ledger_path = ledger_directory / "connector.db"
    ledger_path.write_bytes(blank_ledger())  # a new ledger, as the owner creates it
    ledger_path.chmod(0o600)
    gate = sqlite3.connect(ledger_path, isolation_level=None)
    gate.execute("PRAGMA journal_mode = WAL")
    gate.execute("BEGIN IMMEDIATE")
    readies = [ledger_directory / f"ready-{number}" for number in range(4)]
    openers = [
        subprocess.Popen(
            [sys.executable, "-c", OPENER, str(ledger_path), str(ready)],
            cwd=PROJECT,
            stderr=subprocess.PIPE,
            text=True,
        )
        for ready in readies
    ]
    deadline = time.monotonic() + 20
    while not all(ready.exists() for ready in readies) and time.monotonic() < deadline:
        time.sleep(0.005)
    time.sleep(0.3)  # each opener is now waiting on the gate's lock
    gate.execute("ROLLBACK")
    gate.close()
    for opener in openers:
        _, errors = opener.communicate(timeout=20)
        assert opener.returncode == 0, errors
    with open_ledger(ledger_path) as ledger, ledger.read() as connection:
        versions = connection.execute("SELECT version FROM schema_migrations ORDER BY version")
        assert [row[0] for row in versions] == list(range(1, SCHEMA_VERSION + 1))


def test_a_script_splits_into_whole_statements_triggers_included() -> None:
    script = """
    -- a comment; with a semicolon
    CREATE TABLE t (x TEXT DEFAULT 'a;b');
    CREATE TRIGGER t_guard BEFORE DELETE ON t BEGIN
        SELECT RAISE(ABORT, 'no');
        SELECT 1;
    END;
    -- a closing comment
    """
    statements = split_statements(script)
    assert len(statements) == 3
    assert statements[1].startswith("CREATE TRIGGER")
    assert statements[1].endswith("END;")
    assert statements[2] == "-- a closing comment"


def test_the_first_migration_splits_into_its_statements() -> None:
    statements = split_statements(MIGRATIONS[0].sql)
    creates = len(re.findall(r"^CREATE ", MIGRATIONS[0].sql, flags=re.MULTILINE))
    assert len(statements) == creates


# Time stamps.


def test_an_sql_stamp_has_the_fixed_width_of_a_python_stamp(ledger: Ledger) -> None:
    before = format_timestamp(SystemClock().now() - timedelta(seconds=1))
    with ledger.read() as connection:
        stamped = connection.execute(f"SELECT {SQL_NOW}").fetchone()[0]
    after = format_timestamp(SystemClock().now() + timedelta(seconds=1))
    assert FIXED_WIDTH.match(stamped)
    assert FIXED_WIDTH.match(before)
    assert len(stamped) == len(before)
    assert before < stamped < after  # text order is time order across both


def test_the_triggers_stamp_with_the_same_expression() -> None:
    stamps = re.findall(r"strftime\([^)]*\)\s*\|\|\s*'[^']*'", MIGRATIONS[0].sql)
    assert stamps
    assert set(stamps) == {SQL_NOW}


def test_an_up_to_date_ledger_opens_while_another_process_writes(ledger_path: Path) -> None:
    """Nothing to migrate is one read, so a start does not wait on a writer's
    lock (a write transaction per migration did, and gave up after the busy timeout)."""
    open_ledger(ledger_path).close()
    writer = sqlite3.connect(ledger_path, isolation_level=None)
    writer.execute("BEGIN IMMEDIATE")
    try:
        with open_ledger(ledger_path, busy_timeout=0.2) as ledger:
            assert ledger.schema_version() == SCHEMA_VERSION
    finally:
        writer.execute("ROLLBACK")
        writer.close()
