"""Fixtures for the dispatcher's tests: a real ledger file, a fake clock, the world's transitions."""

from collections.abc import Iterator
from pathlib import Path

import pytest

from shell.clock import FakeClock
from shell.ledger import Ledger, open_ledger
from tests.support.ledger_world import LedgerWorld


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def ledger(tmp_path: Path, clock: FakeClock) -> Iterator[Ledger]:
    directory = tmp_path / "state"
    directory.mkdir(mode=0o700)
    with open_ledger(directory / "ledger.sqlite3", clock=clock) as opened:
        yield opened


@pytest.fixture
def world(ledger: Ledger) -> LedgerWorld:
    return LedgerWorld(ledger)
