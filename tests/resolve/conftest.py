"""Fixtures for a person's resolutions: a real ledger file in an owner-only directory, intents put
into each state through the ledger (``resolve_world.Intents``), and the CLI driven in-process
through ``shell.cli.resolve.main`` on a fake clock."""

from __future__ import annotations

import os
import shutil
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from shell.cli.resolve import main
from shell.clock import FakeClock
from shell.ledger.connection import Ledger, open_ledger
from tests.resolve.resolve_world import Intents, Ran, Run
from tests.support.ids import set_apart
from tests.support.ledger_world import LedgerWorld

SHORT_BUSY_TIMEOUT = 0.3


@pytest.fixture(scope="session")
def migrated_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One migrated ledger per session; each test's ledger starts as a copy of it."""
    directory = tmp_path_factory.mktemp("resolve-template")
    os.chmod(directory, 0o700)
    template = directory / "template.db"
    set_apart(open_ledger(template, clock=FakeClock())).close()
    return template


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def state_directory(tmp_path: Path) -> Path:
    directory = tmp_path / "state"
    directory.mkdir(mode=0o700)
    return directory


@pytest.fixture
def ledger_path(state_directory: Path, migrated_template: Path) -> Path:
    path = state_directory / "ledger.db"
    shutil.copyfile(migrated_template, path)
    os.chmod(path, 0o600)
    return path


@pytest.fixture
def ledger(ledger_path: Path, clock: FakeClock) -> Iterator[Ledger]:
    with open_ledger(ledger_path, clock=clock) as opened:
        yield opened


@pytest.fixture
def intents(ledger: Ledger) -> Intents:
    return Intents(LedgerWorld(ledger), iter(range(101, 10_000)))


@pytest.fixture
def run(ledger_path: Path, clock: FakeClock, capsys: pytest.CaptureFixture[str]) -> Run:
    """``bin/outbox-resolve --ledger <the test's ledger> ARGS`` in-process, on the fake clock."""

    def running(*argv: str, ledger: Path | None = ledger_path, busy_timeout: float = SHORT_BUSY_TIMEOUT) -> Ran:
        capsys.readouterr()
        prefix = [] if ledger is None else ["--ledger", str(ledger)]
        code = main([*prefix, *argv], clock=clock, busy_timeout=busy_timeout)
        captured = capsys.readouterr()
        return Ran(code, captured.out, captured.err)

    return running


@pytest.fixture
def other_connection(ledger_path: Path) -> Iterator[sqlite3.Connection]:
    """Another process's connection to the same file (a running connector, say)."""
    connection = sqlite3.connect(ledger_path, isolation_level=None, timeout=0)
    yield connection
    if connection.in_transaction:
        connection.execute("ROLLBACK")
    connection.close()
