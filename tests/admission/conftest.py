"""Fixtures for admission's tests: a real stand-in on 127.0.0.1, a real ledger file, a real client."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from core.admission import AdmissionSettings
from core.message_kinds import GUARD_DELAY
from shell.admission import Admission
from shell.basecamp.client import BasecampClient
from shell.basecamp.reads import SummaryReads
from shell.basecamp.standin.server import StandIn
from shell.clock import FakeClock
from shell.ledger.connection import Ledger, open_ledger
from tests.admission.scene import Scene
from tests.support.ids import set_apart


@pytest.fixture
def standin() -> Iterator[StandIn]:
    with StandIn(world="demo") as running:
        yield running


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def ledger(tmp_path: Path, clock: FakeClock) -> Iterator[Ledger]:
    os.chmod(tmp_path, 0o700)
    with open_ledger(tmp_path / "connector.db", clock=clock) as opened:
        yield set_apart(opened)


@pytest.fixture
def client(standin: StandIn) -> BasecampClient:
    return BasecampClient(
        standin.base_url,
        standin.world.account_id,
        standin.world.token,
        "basecamp-connector tests (tests@example.com)",
        requests_per_window=10_000,
    )


@pytest.fixture
def scene(standin: StandIn, ledger: Ledger, clock: FakeClock, client: BasecampClient) -> Scene:
    world = standin.world
    settings = AdmissionSettings(
        agent_id=world.agent.id,
        operator_id=world.people[0].id,
        routed_projects=frozenset({world.projects[0].id, world.projects[1].id}),
    )
    reads = SummaryReads(client, world.agent.id, clock)
    admission = Admission(ledger, reads, settings, GUARD_DELAY, clock)
    return Scene(standin, ledger, clock, client, reads, settings, admission)
