"""Migration 15: a worker's words in the outbox, held at the database."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

import pytest

from shell.clock import FakeClock
from shell.ledger.connection import open_ledger

MIGRATIONS = Path(__file__).resolve().parents[2] / "shell" / "ledger" / "migrations"
STAMP = "2026-11-29T12:00:00.000000000Z"


def test_every_migration_that_writes_the_schema_ends_it_unwritable() -> None:
    """Migrations 14 and 15 replace table texts through writable_schema: each ends with RESET, so
    none leaves it to a later one (a later migration's RESET would hide the first's omission)."""
    writing = 0
    for path in sorted(MIGRATIONS.glob("*.sql")):
        pragmas = re.findall(r"PRAGMA\s+writable_schema\s*=\s*(\w+)", path.read_text(), re.IGNORECASE)
        if pragmas:
            writing += 1
            assert pragmas[-1].upper() == "RESET", f"{path.name} leaves writable_schema {pragmas[-1]}"
    assert writing >= 2


def test_a_workers_words_name_the_task_row_they_report_on(tmp_path: Path) -> None:
    with open_ledger(tmp_path / "ledger.sqlite3", clock=FakeClock()) as ledger, ledger.write() as connection:
        with pytest.raises(sqlite3.IntegrityError, match="name the task row"):
            connection.execute(
                "INSERT INTO outbox (intent_key, kind, event_id, task_id, bucket_id, message_kind, recording_id,"
                " body, created_at, not_before) VALUES ('worker_ack:task:1:event:1', 'worker_ack', NULL, NULL, 1,"
                " 'boost', 2, 'on it', ?, ?)",
                (STAMP, STAMP),
            )
        with pytest.raises(sqlite3.IntegrityError, match="CHECK"):
            connection.execute(
                "INSERT INTO outbox (intent_key, kind, bucket_id, message_kind, recording_id, body, created_at,"
                " not_before) VALUES ('x', 'worker_shout', 1, 'boost', 2, 'on it', ?, ?)",
                (STAMP, STAMP),
            )
