"""Fixtures for the ledger's tests: real SQLite files in an owner-only temporary directory.

``insert`` writes one row with defaults that satisfy every CHECK, so a test names only the
columns it is about.
"""

from __future__ import annotations

import hashlib
import itertools
import os
import shutil
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from shell.clock import FakeClock
from shell.ledger.connection import Ledger, open_ledger
from tests.support.ids import set_apart

STAMP = "2026-11-29T12:00:00.000000000Z"
_tokens = itertools.count(1)

Insert = Callable[..., int]


def _token() -> str:
    return hashlib.sha256(str(next(_tokens)).encode()).hexdigest()


DEFAULTS: dict[str, Callable[[], dict[str, Any]]] = {
    "events": lambda: {"state": "admitted", "seen_at": STAMP, "updated_at": STAMP},
    "tasks": lambda: {"token_sha256": _token(), "created_at": STAMP},
    "attempts": lambda: {"seq": 1, "launched_at": STAMP},
    "task_events": lambda: {},
    "outbox": lambda: {
        "kind": "guard_ack",
        "bucket_id": 10,
        "message_kind": "boost",
        "recording_id": 20,
        "body": "Received.",
        "created_at": STAMP,
        "not_before": STAMP,
    },
    "hold_marker": lambda: {"id": 1, "held_by": "ana", "held_at": STAMP},
}


def insert_row(connection: sqlite3.Connection, table: str, **columns: Any) -> int:
    """Insert one row into ``table``: the defaults, overridden by ``columns``; its rowid."""
    values = {**DEFAULTS[table](), **columns}
    names = ", ".join(values)
    marks = ", ".join("?" for _ in values)
    cursor = connection.execute(
        f"INSERT INTO {table} ({names}) VALUES ({marks})", tuple(values.values())
    )
    return int(cursor.lastrowid or 0)


@pytest.fixture
def ledger_directory(tmp_path: Path) -> Path:
    os.chmod(tmp_path, 0o700)
    return tmp_path


@pytest.fixture
def ledger_path(ledger_directory: Path) -> Path:
    return ledger_directory / "connector.db"


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture(scope="session")
def migrated_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One freshly migrated ledger per session; each test's ``ledger`` starts as a copy of it
    (migrating a new file for each of some two hundred tests is most of their time)."""
    directory = tmp_path_factory.mktemp("template")
    os.chmod(directory, 0o700)
    template = directory / "template.db"
    set_apart(open_ledger(template, clock=FakeClock())).close()
    return template


@pytest.fixture
def ledger(ledger_path: Path, clock: FakeClock, migrated_template: Path) -> Iterator[Ledger]:
    """An owner's ledger, migrated, at a fresh path in an owner-only directory."""
    shutil.copyfile(migrated_template, ledger_path)
    os.chmod(ledger_path, 0o600)
    with open_ledger(ledger_path, clock=clock) as opened:
        yield opened


@pytest.fixture
def insert() -> Insert:
    return insert_row
