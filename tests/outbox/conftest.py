"""Fixtures for the sender's tests: a real ledger file, a fake clock, a Basecamp with behaviour."""

import pytest

from shell.clock import FakeClock
from shell.ledger.connection import Ledger
from shell.outbox import Outbox, OutboxOptions
from tests.support.fake_basecamp import AGENT_ID, FakeBasecamp


@pytest.fixture
def basecamp(clock: FakeClock) -> FakeBasecamp:
    return FakeBasecamp(clock)


@pytest.fixture
def outbox(ledger: Ledger, basecamp: FakeBasecamp) -> Outbox:
    return Outbox(ledger, basecamp, AGENT_ID, OutboxOptions())
