"""A SIGTERM that lands while the connector's start settles: ``Connector.run`` stops before any
loop makes a turn, so no worker is launched after a stop was asked for; and one that lands while
the start admits again what a previous process left seen admits no further record and reads no
feed (``shell.connector``; its listings: ``test_sigterm_during_start.py``)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest

from core.log_lines import Transition
from shell.basecamp.client import BasecampClient
from shell.basecamp.standin.server import StandIn
from shell.clock import SystemClock
from shell.connector import Connector
from shell.ledger.connection import open_ledger
from shell.state.config import StatePaths, load_config
from shell.worker.driver import WorkerCommand
from tests.support.configured import configure_connector


@pytest.fixture
def standin() -> Iterator[StandIn]:
    with StandIn() as running:
        yield running


def test_a_stop_asked_for_during_the_start_launches_no_worker(standin: StandIn, tmp_path: Path) -> None:
    state = configure_connector(standin, tmp_path)
    configuration = load_config(StatePaths.at(state).config)
    client = BasecampClient(
        standin.base_url, standin.world.account_id, standin.world.token, "stop-during-start tests"
    )
    with open_ledger(StatePaths.at(state).ledger) as ledger:
        connector = Connector(
            configuration, ledger, client, SystemClock(),
            WorkerCommand.configured(configuration.worker_command, configuration.worker_env),
            state / "sessions", live=False,
        )  # fmt: skip
        connector.start(timedelta(seconds=30))
        standin.mention(standin.world.people[0], standin.world.projects[0].recording_ids[0], "please look")
        connector.intake_turn()  # heard and admitted: the dispatcher's next tick would launch it
        with ledger.read() as connection:
            admitted = connection.execute("SELECT count(*) FROM events WHERE state = 'admitted'").fetchone()[
                0
            ]
        assert admitted == 1
        connector.run(requested=lambda: True, within=timedelta(seconds=10))  # the SIGTERM came during start
        with ledger.read() as connection:
            assert connection.execute("SELECT count(*) FROM attempts").fetchone()[0] == 0


def test_a_stop_during_the_starts_readmission_admits_no_further_record_and_reads_no_feed(
    standin: StandIn, tmp_path: Path
) -> None:
    state = configure_connector(standin, tmp_path)
    configuration = load_config(StatePaths.at(state).config)
    client = BasecampClient(
        standin.base_url, standin.world.account_id, standin.world.token, "stop-during-start tests"
    )
    asked: list[str] = []

    def heard(said: Transition) -> None:  # the first record admitted again; then a SIGTERM lands
        if said.head == "verdict":
            asked.append(said.line)
            time.sleep(0.5)  # the start's watcher looks every REQUEST_CHECK_SECONDS

    with open_ledger(StatePaths.at(state).ledger) as ledger:
        card = standin.world.projects[0].recording_ids[0]
        previous = Connector(
            configuration, ledger, client, SystemClock(), WorkerCommand.configured(None),
            state / "sessions", live=False,
        )  # fmt: skip
        previous.intake.poll_once(time.monotonic() + 30)  # the feed's position
        for text in ("please look", "and at this"):
            standin.mention(standin.world.people[0], card, text)
        previous.intake.poll_once(time.monotonic() + 30)  # seen, never admitted: the process died
        reads = len([r for r in standin.requests() if "events" in r.path])
        connector = Connector(
            configuration, ledger, client, SystemClock(), WorkerCommand.configured(None),
            state / "sessions", live=False, on_event=heard,
        )  # fmt: skip
        connector.start(timedelta(seconds=30), requested=lambda: bool(asked))
        with ledger.read() as connection:
            states = [row[0] for row in connection.execute("SELECT state FROM events ORDER BY id")]
    assert connector.stopped_in == "admit"
    assert len(asked) == 1
    assert sorted(states) == ["admitted", "seen"], "the second is left seen, for the next start"
    assert len([r for r in standin.requests() if "events" in r.path]) == reads, "the feed is not read"
