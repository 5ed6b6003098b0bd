"""The connector's turns with the inbox lane, in process against the stand-in: the inbox is read at
the start, every few turns after, and at once when the account lane's position goes stale (410):
what was addressed meanwhile is recorded in that very turn."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest

from shell.basecamp.client import BasecampClient
from shell.basecamp.standin.server import StandIn
from shell.cli.run import USER_AGENT
from shell.clock import SystemClock
from shell.connector import Connector
from shell.intake.inbox_lane import DEFAULT_EVERY_POLLS
from shell.ledger.connection import Ledger, open_ledger
from shell.state.config import StatePaths, load_config
from shell.worker.driver import WorkerCommand
from tests.support.configured import configure_connector


@pytest.fixture
def standin() -> Iterator[StandIn]:
    with StandIn(world="demo", feed_delay=3600) as running:  # the feed holds back what is new
        yield running


def connector(standin: StandIn, tmp_path: Path, ledger: Ledger) -> Connector:
    configuration = load_config(StatePaths.at(tmp_path / "state").config)
    client = BasecampClient(standin.base_url, standin.world.account_id, standin.world.token, USER_AGENT)
    return Connector(configuration, ledger, client, SystemClock(), WorkerCommand.configured(None),
                     tmp_path / "sessions", shadow=True, live=False)  # fmt: skip


def lanes(ledger: Ledger) -> list[tuple[int, str]]:
    with ledger.read() as connection:
        return [(int(row[0]), str(row[1])) for row in connection.execute("SELECT id, lane FROM events")]


def test_the_account_lanes_410_asks_the_inbox_in_the_same_turn(standin: StandIn, tmp_path: Path) -> None:
    configure_connector(standin, tmp_path)
    with open_ledger(tmp_path / "state" / "ledger.sqlite3") as ledger:
        running = connector(standin, tmp_path, ledger)
        running.start(timedelta(seconds=30))
        reads = sum(1 for request in standin.requests() if "inbox.json" in request.path)
        assert reads == 1, "the start reads the inbox after the feed"
        running.intake_turn()
        asked = standin.mention(standin.world.people[0], standin.world.projects[0].recording_ids[0], "hi")
        standin.feed.begin_epoch()
        running.intake_turn()
        assert lanes(ledger) == [(asked, "inbox")]


def test_the_inbox_is_read_every_sixth_turn(standin: StandIn, tmp_path: Path) -> None:
    configure_connector(standin, tmp_path)
    with open_ledger(tmp_path / "state" / "ledger.sqlite3") as ledger:
        running = connector(standin, tmp_path, ledger)
        running.start(timedelta(seconds=30))
        for _ in range(2 * DEFAULT_EVERY_POLLS):
            running.intake_turn()
        assert sum(1 for request in standin.requests() if "inbox.json" in request.path) == 3


def test_a_mention_made_once_the_start_is_over_is_seen_by_the_first_turn(tmp_path: Path) -> None:
    """The start's own feed read fixes the position: a first read after it would take what was
    already there as history."""
    with StandIn(world="demo") as standin:
        configure_connector(standin, tmp_path)
        with open_ledger(tmp_path / "state" / "ledger.sqlite3") as ledger:
            running = connector(standin, tmp_path, ledger)
            running.start(timedelta(seconds=30))
            asked = standin.mention(standin.world.people[0], standin.world.projects[0].recording_ids[0], "hi")
            running.intake_turn()
            assert asked in [event_id for event_id, _ in lanes(ledger)]
