"""Fixtures for the worker's dispatch tools: real SQLite files in an owner-only directory."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from shell.clock import FakeClock
from shell.ledger.connection import Ledger, open_ledger
from tests.dispatch_tools.world import DispatchWorld
from tests.support.ids import set_apart


@pytest.fixture(scope="session")
def migrated_ledger(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One freshly migrated ledger per session; each test's ledger starts as a copy of it."""
    directory = tmp_path_factory.mktemp("dispatch-template")
    os.chmod(directory, 0o700)
    template = directory / "template.db"
    set_apart(open_ledger(template, clock=FakeClock())).close()
    return template


@pytest.fixture
def ledger_path(tmp_path: Path, migrated_ledger: Path) -> Path:
    directory = tmp_path / "state"
    directory.mkdir(mode=0o700)
    path = directory / "connector.db"
    shutil.copyfile(migrated_ledger, path)
    os.chmod(path, 0o600)
    return path


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def ledger(ledger_path: Path, clock: FakeClock) -> Iterator[Ledger]:
    with open_ledger(ledger_path, clock=clock) as opened:
        yield opened


@pytest.fixture
def world(ledger: Ledger) -> DispatchWorld:
    return DispatchWorld(ledger)
