"""Fixtures for the sender's tests: a real ledger file, a fake clock, a Basecamp with behaviour."""

from collections.abc import Iterator
from pathlib import Path

import pytest

from shell.clock import FakeClock
from shell.ledger import Ledger, open_ledger
from shell.outbox import Outbox, OutboxOptions
from tests.support.fake_basecamp import AGENT_ID, FakeBasecamp
from tests.support.ledger_world import LedgerWorld


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
        yield opened


@pytest.fixture
def world(ledger: Ledger) -> LedgerWorld:
    return LedgerWorld(ledger)


@pytest.fixture
def basecamp(clock: FakeClock) -> FakeBasecamp:
    return FakeBasecamp(clock)


@pytest.fixture
def outbox(ledger: Ledger, basecamp: FakeBasecamp) -> Outbox:
    return Outbox(ledger, basecamp, AGENT_ID, OutboxOptions())
