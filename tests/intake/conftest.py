"""Fixtures for intake's tests: a real stand-in on 127.0.0.1, a real ledger file, a real client."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from core.feed import FeedFilters
from shell.basecamp.client import BasecampClient
from shell.basecamp.standin.server import StandIn
from shell.clock import SystemClock
from shell.intake.poll_lane import FeedReader, Intake
from shell.ledger.connection import Ledger, open_ledger
from tests.support.ids import set_apart

MakeIntake = Callable[..., Intake]


@pytest.fixture
def standin() -> Iterator[StandIn]:
    with StandIn(world="demo", feed_page_size=2) as running:
        yield running


@pytest.fixture
def ledger_path(tmp_path: Path) -> Path:
    os.chmod(tmp_path, 0o700)
    return tmp_path / "connector.db"


@pytest.fixture
def ledger(ledger_path: Path) -> Iterator[Ledger]:
    with open_ledger(ledger_path) as opened:
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
def filters() -> FeedFilters:
    return FeedFilters.of(exclude_performers=["self"], actor_types=["person"])


@pytest.fixture
def make_intake(ledger: Ledger, client: BasecampClient, filters: FeedFilters) -> MakeIntake:
    def make(
        reader: FeedReader | None = None,
        on: Ledger | None = None,
        with_filters: FeedFilters | None = None,
        **options: object,
    ) -> Intake:
        return Intake(
            on or ledger,
            reader or client,
            with_filters or filters,
            SystemClock(),
            **options,  # type: ignore[arg-type]
        )

    return make
