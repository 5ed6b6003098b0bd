"""Fixtures for the client's tests: a real stand-in on 127.0.0.1 and a client pointed at it."""

from collections.abc import Callable, Iterator

import pytest

from shell.basecamp.client import BasecampClient
from shell.basecamp.standin.server import StandIn
from shell.clock import Clock

MakeClient = Callable[..., BasecampClient]


@pytest.fixture
def standin() -> Iterator[StandIn]:
    with StandIn(world="empty", page_sizes=(2, 2, 2, 2)) as server:
        yield server


@pytest.fixture
def make_client(standin: StandIn) -> MakeClient:
    def make(clock: Clock | None = None, token: str | None = None, **options: object) -> BasecampClient:
        options.setdefault("requests_per_window", 10_000)
        return BasecampClient(
            standin.base_url,
            standin.world.account_id,
            token or standin.world.token,
            "basecamp-connector tests (tests@example.com)",
            clock=clock,
            **options,  # type: ignore[arg-type]
        )

    return make
