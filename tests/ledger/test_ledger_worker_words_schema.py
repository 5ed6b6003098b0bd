"""Migration 15: a worker's words in the outbox, held at the database."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from shell.clock import FakeClock
from shell.ledger.connection import open_ledger

STAMP = "2026-11-29T12:00:00.000000000Z"


def test_a_workers_words_name_the_task_row_they_report_on(tmp_path: Path) -> None:
    with open_ledger(tmp_path / "ledger.sqlite3", clock=FakeClock()) as ledger, ledger.write() as connection:
        with pytest.raises(sqlite3.IntegrityError, match="name the task row"):
            connection.execute(
                "INSERT INTO outbox (intent_key, kind, event_id, task_id, bucket_id, message_kind, recording_id,"
                " body, created_at, not_before) VALUES ('worker_ack:task:1:event:1', 'worker_ack', NULL, NULL, 1,"
                " 'boost', 2, 'on it', ?, ?)",
                (STAMP, STAMP),
            )
        with pytest.raises(sqlite3.IntegrityError, match=r"outbox\.kind.*: a value core does not name"):
            connection.execute(
                "INSERT INTO outbox (intent_key, kind, bucket_id, message_kind, recording_id, body, created_at,"
                " not_before) VALUES ('x', 'worker_shout', 1, 'boost', 2, 'on it', ?, ?)",
                (STAMP, STAMP),
            )
