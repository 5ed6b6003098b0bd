"""No loop of a running connector dies quietly (``shell.connector``, ``shell.intake.live_lane``):
a turn of intake that fails unexpectedly is tried again; membership's unexpected failure waits
for the next interval; the live lane's is one more way to be down, reconnected; and anything
that still escapes a loop's thread ends the connector, naming the loop, so ``run`` exits 1 and
its supervisor starts it again. A real ledger and a real stand-in; the failures are injected."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path

import pytest

from core.feed import FeedFilters, StreamTicket
from core.intake_status import LaneState
from shell import connector as connector_module
from shell.basecamp.client import BasecampClient
from shell.basecamp.standin.server import StandIn
from shell.cli.run import USER_AGENT
from shell.clock import SystemClock
from shell.connector import Connector
from shell.intake.live_lane import LiveLane
from shell.ledger.connection import open_ledger
from shell.state.config import StatePaths, load_config
from shell.worker.driver import WorkerCommand
from tests.support.child import wait_until
from tests.support.configured import configure_connector

pytestmark = pytest.mark.slow


class Unexpected(RuntimeError):
    """A failure no loop names."""


@contextmanager
def connector_of(tmp_path: Path, poll_every: timedelta = timedelta(seconds=0.2)) -> Iterator[Connector]:
    with StandIn(world="demo") as standin:
        state = configure_connector(standin, tmp_path)
        paths = StatePaths.at(state)
        configuration = load_config(paths.config)
        clock = SystemClock()
        world = standin.world
        client = BasecampClient(standin.base_url, world.account_id, world.token, USER_AGENT, clock=clock)
        with open_ledger(paths.ledger, clock=clock) as ledger:
            yield Connector(configuration, ledger, client, clock, WorkerCommand.configured(configuration.worker_command),
                            state / "sessions", poll_every=poll_every, live=False)  # fmt: skip


@contextmanager
def running(connector: Connector) -> Iterator[threading.Thread]:
    thread = threading.Thread(target=connector.run, daemon=True)
    thread.start()
    try:
        yield thread
    finally:
        connector.stop(timedelta(seconds=10))
        thread.join(timeout=30)


def test_a_loop_whose_thread_ends_on_the_unexpected_ends_the_connector_naming_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with connector_of(tmp_path) as connector:

        def broken(*_: object) -> None:
            raise Unexpected

        monkeypatch.setattr(connector.outbox, "run", broken)
        with running(connector) as thread:
            thread.join(timeout=30)  # run() returns by itself: nothing asked it to stop
            assert not thread.is_alive(), "the connector ran on with a dead outbox loop"
        assert connector.ended_by == "outbox"


def test_an_intake_turn_that_fails_unexpectedly_is_tried_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with connector_of(tmp_path) as connector:
        failed: list[int] = []

        def check() -> None:
            failed.append(1)
            raise Unexpected

        monkeypatch.setattr(connector.backlog, "check", check)
        with running(connector):
            wait_until(lambda: len(failed) >= 3)  # three turns: the loop went on after each
            assert connector.ended_by is None


def test_membership_failing_unexpectedly_waits_for_its_next_interval(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with connector_of(tmp_path) as connector:
        connector.live_lane = object()  # type: ignore[assignment] -- membership runs only beside a live lane

        def projects(deadline: float) -> frozenset[int]:
            raise Unexpected

        monkeypatch.setattr(connector.membership, "check", projects)
        connector.intake_turn()  # no exception: logged, and tried at the next interval


class _Minter:
    def __init__(self) -> None:
        self.asked = 0

    def stream_ticket(self, deadline: float) -> StreamTicket:
        self.asked += 1
        raise Unexpected

    def ticket_wait(self) -> float:
        return 0.0

    def deadline_in(self, seconds: float) -> float:
        return SystemClock().monotonic() + seconds


def test_the_live_lane_is_down_after_an_unexpected_failure_and_connects_again(ledger_path: Path) -> None:
    minter = _Minter()
    clock = SystemClock()
    with open_ledger(ledger_path, clock=clock) as ledger:
        lane = LiveLane(ledger, minter, FeedFilters.of(), clock, lambda event_id: None,
                        backoff_base=0.05, backoff_cap=0.1)  # fmt: skip
        stop = threading.Event()
        thread = threading.Thread(target=lane.run, args=(stop,), daemon=True)
        thread.start()
        try:
            wait_until(lambda: minter.asked >= 3)  # down, then tried again, and again
            assert thread.is_alive()
            assert lane.why == "an unexpected failure (Unexpected)" or lane.state is LaneState.connecting
        finally:
            stop.set()
            thread.join(timeout=10)


def test_intake_waiting_out_a_long_poll_interval_still_beats(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``shell.connector``: a loop that waits is not a loop that stopped turning."""
    monkeypatch.setattr(connector_module, "BEAT_WHILE_WAITING", 0.05)
    with connector_of(tmp_path, poll_every=timedelta(minutes=10)) as connector, running(connector):
        wait_until(lambda: "intake" in connector.heartbeats.beats())
        first = connector.heartbeats.beats()["intake"]
        wait_until(lambda: connector.heartbeats.beats()["intake"] > first)  # within the ten minutes' wait
