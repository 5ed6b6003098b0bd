"""Membership: the agent's projects are re-read on a schedule; one granted since makes the live
lane subscribe again, so its events are heard live."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest

from core.intake_status import LaneState
from shell.basecamp.client import BasecampClient
from shell.basecamp.standin.server import StandIn
from shell.clock import SystemClock
from shell.connector import Connector
from shell.intake.live_lane import Membership
from shell.ledger.connection import Ledger, open_ledger
from shell.ledger.intake import read_lane_state
from shell.state.config import StatePaths, load_config
from shell.worker.driver import WorkerCommand
from tests.support.child import wait_until
from tests.support.configured import POLL_SECONDS, configure_connector


@pytest.fixture
def standin() -> Iterator[StandIn]:
    with StandIn(world="demo", feed_delay=30.0, ping_interval=0.3) as running:
        yield running


def test_the_first_read_takes_note_and_later_ones_answer_what_was_granted(
    standin: StandIn, client: BasecampClient
) -> None:
    project = standin.world.projects[2]
    standin.feed.withhold(project.id)
    membership = Membership(client, SystemClock(), timedelta(0))
    assert membership.due()
    assert membership.check(client.deadline_in(10)) == frozenset()
    assert membership.check(client.deadline_in(10)) == frozenset()
    standin.feed.grant(project.id)
    assert membership.check(client.deadline_in(10)) == {project.id}
    assert membership.check(client.deadline_in(10)) == frozenset()
    hourly = Membership(client, SystemClock(), timedelta(hours=1))
    hourly.check(client.deadline_in(10))
    assert not hourly.due()


def test_a_granted_project_is_heard_live_after_the_connector_rereads_its_projects(
    standin: StandIn, tmp_path: Path
) -> None:
    project = standin.world.projects[1]
    standin.feed.withhold(project.id)
    state = configure_connector(standin, tmp_path)
    configuration = load_config(StatePaths.at(state).config)
    # the connector's own budget, under the stand-in's limit: no 429 holds the lane back
    client = BasecampClient(standin.base_url, standin.world.account_id, standin.world.token,
                            "membership tests (tests@example.com)")  # fmt: skip
    with open_ledger(tmp_path / "shadow.sqlite3") as ledger:
        connector = Connector(configuration, ledger, client, SystemClock(), WorkerCommand.configured(None),
                              tmp_path / "sessions", shadow=True, poll_every=timedelta(seconds=POLL_SECONDS),
                              membership_every=timedelta(seconds=1))  # fmt: skip
        connector.start(timedelta(seconds=30))
        runner = threading.Thread(target=connector.run, daemon=True)
        runner.start()
        try:
            lane = connector.live_lane
            assert lane is not None
            wait_until(lambda: _subscriptions_confirmed(ledger) >= 1, timeout=10)  # written after lane.state
            # the first read only takes note: a grant made before it answered would be in the note
            wait_until(lambda: connector.membership._known is not None, timeout=10)
            confirmed = _subscriptions_confirmed(ledger)
            standin.feed.grant(project.id)
            # the second ticket is minted before the new subscription is confirmed (the lane says
            # connecting meanwhile), and the stand-in sends only what is recorded after the
            # confirmation: a mention made in between reaches the poll lane alone, 30 s late here
            wait_until(
                lambda: (
                    standin.live.tickets.minted >= 2
                    and _subscriptions_confirmed(ledger) > confirmed
                    and lane.state is LaneState.connected
                ),
                timeout=10,
            )
            event_id = standin.mention(
                standin.world.people[0], project.recording_ids[0], "in the granted one"
            )

            def recorded() -> list[tuple[int, str]]:
                with ledger.read() as connection:
                    return [
                        (int(row[0]), str(row[1]))
                        for row in connection.execute("SELECT id, lane FROM events")
                    ]

            wait_until(lambda: recorded() == [(event_id, "live")], timeout=5)
            assert lane.failures == 0, "subscribing again is no failure"
        finally:
            connector.stop(timedelta(seconds=5))
            runner.join(timeout=10)


def _subscriptions_confirmed(ledger: Ledger) -> int:
    """How often the lane's subscription was confirmed since the start (``live_lane.connects``)."""
    lane = read_lane_state(ledger)
    return 0 if lane is None else lane.connects
