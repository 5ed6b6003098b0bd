"""Fixtures most folders share: a fake clock, a real owner-only ledger file on it, and the
ledger world's transitions. A folder's own conftest overrides any of them (the ledger tests
copy a migrated template; the process tests keep real time for their children).

The ledger's ids are set apart (``tests.support.ids``).

Every test gets a machine-wide pair-lock directory of its own (``shell.state.pair_lock.runtime_directory``):
the stand-in's ids are the same in every test and every worktree on this machine, and one test's
connector must not be refused for another's.

Slow tests are collected first (``pytest_collection_modifyitems``, a stable sort): under
pytest-xdist (``bin/test``) each worker takes a long test while many are left, and the short
ones even out the end, instead of a simulation or an end-to-end run starting last."""

from collections.abc import Iterator
from pathlib import Path

import pytest

from shell.clock import FakeClock
from shell.ledger.connection import Ledger, open_ledger
from shell.state.pair_lock import RUNTIME_ENV
from tests.support.ids import set_apart
from tests.support.ledger_world import LedgerWorld


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)


@pytest.fixture(autouse=True)
def runtime_directory(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    directory = tmp_path_factory.mktemp("runtime")
    directory.chmod(0o700)
    monkeypatch.setenv(RUNTIME_ENV, str(directory))
    return directory


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def ledger_path(tmp_path: Path) -> Path:
    directory = tmp_path / "state"
    directory.mkdir(mode=0o700)
    return directory / "ledger.sqlite3"


@pytest.fixture
def ledger(ledger_path: Path, clock: FakeClock) -> Iterator[Ledger]:
    with open_ledger(ledger_path, clock=clock) as opened:
        yield set_apart(opened)


@pytest.fixture
def world(ledger: Ledger) -> LedgerWorld:
    return LedgerWorld(ledger)
