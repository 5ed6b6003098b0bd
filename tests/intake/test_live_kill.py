"""`bin/connect run` SIGKILLed while its live lane records mentions, then started again: no event
is lost (what the live lane recorded is admitted on the restart, what came meanwhile is served by
the poll lane) and none runs twice (one exposure, at most one reply, each)."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from shell.basecamp.standin.server import StandIn
from shell.ledger.connection import open_ledger_read_only
from tests.support.child import wait_until
from tests.support.configured import POLL_SECONDS, configure_connector

pytestmark = [pytest.mark.slow, pytest.mark.timeout(180)]
REPOSITORY = Path(__file__).resolve().parents[2]
CONNECT = str(REPOSITORY / "bin" / "connect")


@pytest.fixture
def standin() -> Iterator[StandIn]:
    with StandIn(world="demo", feed_delay=3.0, ping_interval=0.5) as server:
        yield server


def rows(state: Path, query: str) -> list[tuple[Any, ...]]:
    with open_ledger_read_only(state / "ledger.sqlite3") as ledger, ledger.read() as connection:
        return [tuple(row) for row in connection.execute(query)]


def start(state: Path) -> subprocess.Popen[str]:
    environment = {key: value for key, value in os.environ.items() if key != "CONNECTOR_PAUSE_AT"}
    process = subprocess.Popen(
        [CONNECT, "run", "--state-dir", str(state), "--poll-seconds", str(POLL_SECONDS)],
        env=environment,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert process.stdout is not None
    while not process.stdout.readline().startswith("running account="):  # a restart admits first
        assert process.poll() is None, "the connector started"
    wait_until(lambda: rows(state, "SELECT state FROM live_lane") == [("connected",)], timeout=20)
    return process


def test_killed_while_the_live_lane_records_the_restart_loses_nothing_and_runs_nothing_twice(
    standin: StandIn, tmp_path: Path
) -> None:
    state = configure_connector(standin, tmp_path)
    person = standin.world.people[0]
    card = standin.world.projects[0].recording_ids[0]
    first = start(state)
    mentioned = [standin.mention(person, card, f"before the kill {number}") for number in range(4)]
    wait_until(lambda: rows(state, "SELECT COUNT(*) FROM events WHERE lane = 'live'") != [(0,)], timeout=5)
    first.send_signal(signal.SIGKILL)
    first.wait(timeout=10)
    mentioned += [standin.mention(person, card, f"while none runs {number}") for number in range(2)]
    time.sleep(0.5)

    second = start(state)
    try:
        wait_until(
            lambda: rows(state, "SELECT COUNT(*) FROM events WHERE state IN ('completed', 'discarded')")
            == [(len(mentioned),)],
            timeout=120,
        )
    finally:
        second.send_signal(signal.SIGTERM)
        second.communicate(timeout=90)
    assert [row[0] for row in rows(state, "SELECT id FROM events ORDER BY id")] == mentioned, "none lost"
    exposures = rows(state, "SELECT event_id, COUNT(*) FROM task_events WHERE exposed_at IS NOT NULL GROUP BY event_id")
    assert all(count == 1 for _, count in exposures), "no instruction was exposed twice"
    agent = standin.world.agent.id
    replies = [
        message["content"]
        for message in standin.messages("comment", card)
        if message["creator"]["id"] == agent and "Done with event" in message["content"]
    ]
    for event_id in mentioned:
        assert sum(f"Done with event {event_id}." in reply for reply in replies) <= 1, f"event {event_id} ran once"
