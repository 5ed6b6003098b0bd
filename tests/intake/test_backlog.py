"""Intake's backlog: past its pause limit intake stops reading on purpose, both lanes, and reads on
below it, losing nothing."""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from core.decisions import Action
from core.feed import FeedEvent, FeedFilters
from core.intake_status import BacklogLimits, LaneState, backlog_reason, backlog_warns
from shell.basecamp.client import BasecampClient
from shell.basecamp.standin.server import StandIn
from shell.clock import SystemClock
from shell.connector import Connector
from shell.intake.live_lane import LiveLane
from shell.intake.poll_lane import Backlog
from shell.ledger.connection import Ledger, open_ledger
from shell.ledger.decisions import decide
from shell.ledger.intake import Lane, read_lane_state
from shell.ledger.records import insert_seen
from shell.state.config import StatePaths, load_config
from shell.worker.driver import WorkerCommand
from tests.support.child import wait_until
from tests.support.configured import POLL_SECONDS, configure_connector


def seen(ledger: Ledger, *ids: int) -> None:
    events = [
        (
            FeedEvent(event_id, "comment", "created", "comment.created", 1, 2, None, 3, "x"),
            "2026-12-01T12:00:00.000000000Z",
        )
        for event_id in ids
    ]
    with ledger.write() as connection:
        insert_seen(connection, events, Lane.poll, "2026-12-01T12:00:00.000000000Z")


def test_the_limits_pause_at_and_above_and_warn_below() -> None:
    limits = BacklogLimits(warn=2, pause=3)
    assert backlog_reason(2, limits) is None
    assert backlog_reason(3, limits) == "intake paused on purpose: 3 records wait for a worker (pause at 3)"
    assert (backlog_warns(1, limits), backlog_warns(2, limits)) == (False, True)
    with pytest.raises(ValueError, match="warn <= pause"):
        BacklogLimits(warn=5, pause=4)


def test_the_check_pauses_at_the_limit_and_reads_on_below_it_saying_so_once(
    ledger: Ledger, caplog: pytest.LogCaptureFixture
) -> None:
    backlog = Backlog(ledger, BacklogLimits(warn=1, pause=2))
    caplog.set_level(logging.INFO, logger="connector.intake.backlog")
    seen(ledger, 1)
    assert backlog.check() is None
    seen(ledger, 2)
    assert (
        backlog.check()
        == backlog.paused()
        == "intake paused on purpose: 2 records wait for a worker (pause at 2)"
    )
    assert backlog.check() is not None
    with ledger.write() as connection:
        connection.execute("DELETE FROM events WHERE id = 2")
    assert backlog.check() is None
    said = [record.getMessage() for record in caplog.records]
    assert sum("paused on purpose" in line for line in said) == 1
    assert sum("reads again" in line for line in said) == 1
    assert sum("warn at 1" in line for line in said) == 1


def test_the_live_lane_hangs_up_while_paused_records_no_loss_and_comes_back(
    standin: StandIn, ledger: Ledger, client: BasecampClient, filters: FeedFilters
) -> None:
    pause: list[str | None] = [None]
    lost: list[str] = []

    class Losses:
        def lost(self, cause: str, after_id: int | None) -> None:
            lost.append(cause)

        def heard(self, event_id: int) -> None:
            pass

    lane = LiveLane(ledger, client, filters, SystemClock(), lambda event_id: None, stale_after=2.0,
                    losses=Losses(), paused=lambda: pause[0])  # fmt: skip
    stop = threading.Event()
    thread = threading.Thread(target=lane.run, args=(stop,), daemon=True)
    thread.start()
    try:
        wait_until(lambda: lane.state is LaneState.connected, timeout=10)
        pause[0] = "intake paused on purpose: test"
        wait_until(lambda: standin.live.connections() == 0, timeout=5)
        state = read_lane_state(ledger)
        assert state is not None
        assert (state.state, state.why) == (LaneState.down, "intake paused on purpose: test")
        pause[0] = None
        wait_until(lambda: lane.state is LaneState.connected, timeout=10)
        assert (lost, lane.failures) == ([], 0), "a pause on purpose is no loss and no failure"
    finally:
        stop.set()
        thread.join(timeout=5)


@pytest.fixture
def shadow(standin: StandIn, tmp_path: Path) -> Iterator[tuple[Connector, Ledger]]:
    """A shadow connector in this process (it admits and dispatches nothing: admitted records
    wait), pausing at one record."""
    state = configure_connector(standin, tmp_path)
    configuration = load_config(StatePaths.at(state).config)
    clock = SystemClock()
    # the connector's own budget, under the stand-in's limit: no 429 holds the lane back
    client = BasecampClient(standin.base_url, standin.world.account_id, standin.world.token,
                            "backlog tests (tests@example.com)")  # fmt: skip
    with open_ledger(tmp_path / "shadow.sqlite3") as ledger:
        connector = Connector(configuration, ledger, client, clock, WorkerCommand.configured(None),
                              tmp_path / "sessions", shadow=True, poll_every=timedelta(seconds=POLL_SECONDS),
                              backlog_limits=BacklogLimits(warn=1, pause=1))  # fmt: skip
        connector.start(timedelta(seconds=30))
        runner = threading.Thread(target=connector.run, daemon=True)
        runner.start()
        yield connector, ledger
        connector.stop(timedelta(seconds=5))
        runner.join(timeout=10)


def states(ledger: Ledger) -> dict[int, str]:
    with ledger.read() as connection:
        return {int(row[0]): str(row[1]) for row in connection.execute("SELECT id, state FROM events")}


def test_past_the_limit_intake_reads_nothing_and_below_it_reads_on_losing_nothing(
    standin: StandIn, shadow: tuple[Connector, Ledger]
) -> None:
    connector, ledger = shadow
    person, card = standin.world.people[0], standin.world.projects[0].recording_ids[0]
    wait_until(lambda: connector.live_lane is not None and connector.live_lane.state is LaneState.connected)
    first = standin.mention(person, card, "first")
    wait_until(lambda: states(ledger).get(first) == "admitted", timeout=10)
    wait_until(
        lambda: connector.live_lane is not None and connector.live_lane.state is LaneState.down, timeout=10
    )
    waiting = standin.mention(person, card, "while paused")
    threading.Event().wait(1.5)  # several polls' worth
    assert waiting not in states(ledger), "neither lane read while paused"
    lane = read_lane_state(ledger)
    assert lane is not None
    assert lane.why == "intake paused on purpose: 1 records wait for a worker (pause at 1)"

    decided = decide(ledger, first, Action.discard, "local:tests", datetime.now(UTC), served=frozenset())
    assert decided.unwrap()
    wait_until(lambda: states(ledger).get(waiting) == "admitted", timeout=10)
