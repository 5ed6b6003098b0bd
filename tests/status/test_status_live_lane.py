"""`bin/connect run` hears a mention on the live lane while the stand-in's poll lane waits 30 s
(as Basecamp's does), and `bin/connect status` says whether the lane is connected, or down
since when and why, while intake polls alone."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from shell.basecamp.standin.faults import LiveAction, LiveFault
from shell.basecamp.standin.server import StandIn
from shell.ledger.connection import open_ledger_read_only
from tests.support.child import wait_until
from tests.support.configured import POLL_SECONDS, configure_connector

pytestmark = pytest.mark.slow
REPOSITORY = Path(__file__).resolve().parents[2]
CONNECT = str(REPOSITORY / "bin" / "connect")
POLL_LANE_DELAY = 30.0


@pytest.fixture
def standin() -> Iterator[StandIn]:
    with StandIn(world="demo", feed_delay=POLL_LANE_DELAY, ping_interval=0.5) as server:
        yield server


def status(state: Path) -> dict[str, Any]:
    command = [CONNECT, "status", "--state-dir", str(state), "--json"]
    shown = subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)
    assert (shown.returncode, shown.stderr) == (0, "")
    return dict(json.loads(shown.stdout))


def status_text(state: Path) -> str:
    command = [CONNECT, "status", "--state-dir", str(state)]
    shown = subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)
    assert shown.returncode == 0
    return shown.stdout


def rows(state: Path, query: str) -> list[tuple[Any, ...]]:
    with open_ledger_read_only(state / "ledger.sqlite3") as ledger, ledger.read() as connection:
        return [tuple(row) for row in connection.execute(query)]


def lane_state(state: Path) -> str | None:
    found = rows(state, "SELECT state FROM live_lane")
    return str(found[0][0]) if found else None


def test_a_mention_is_heard_live_and_status_tells_the_lane(standin: StandIn, tmp_path: Path) -> None:
    state = configure_connector(standin, tmp_path)
    environment = {key: value for key, value in os.environ.items() if key != "CONNECTOR_PAUSE_AT"}
    process = subprocess.Popen(
        [CONNECT, "run", "--state-dir", str(state), "--poll-seconds", str(POLL_SECONDS)],
        env=environment,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        assert process.stdout.readline().startswith("running account=")
        wait_until(lambda: lane_state(state) == "connected", timeout=20)
        card = standin.world.projects[0].recording_ids[0]
        mentioned = time.monotonic()
        event_id = standin.mention(standin.world.people[0], card, "please take a look")
        wait_until(lambda: rows(state, "SELECT state FROM events") not in ([], [("seen",)]), timeout=10)
        assert time.monotonic() - mentioned < POLL_LANE_DELAY / 3, "heard long before the poll lane serves it"
        assert rows(state, "SELECT id, lane FROM events") == [(event_id, "live")]
        assert "live lane: connected since " in status_text(state)

        standin.live.faults.add(LiveFault(LiveAction.refuse, status=503, times=10_000))
        standin.live.drop_all()
        # down first because the connection closed, then because the reconnect was refused
        refused = "the upgrade was refused: HTTP 503"
        wait_until(lambda: lane_state(state) == "down" and status(state)["live_lane"]["why"] == refused, timeout=20)
        lane = status(state)["live_lane"]
        assert lane["connects"] == 1
        assert status(state)["losses"] == {"open": 1, "repaired": 0, "unrecovered": 0, "gaps": 0}
        # between refusals the lane says connecting for a moment: read the text while it is down
        shown: list[str] = []

        def down_in_text() -> bool:
            shown.append(status_text(state))
            return "live lane: down since " in shown[-1]

        wait_until(down_in_text, timeout=20)
        text = shown[-1]
        assert "intake polls meanwhile" in text
        assert "losses: 1 open, 0 repaired, 0 unrecovered; gaps: 0" in text, "the dropped connection"
        for output in (text, json.dumps(lane)):
            assert "ticket" not in output
        assert process.poll() is None, "the connector runs on, polling alone"
    finally:
        process.send_signal(signal.SIGTERM)
        output, errors = process.communicate(timeout=90)
        print(output, errors[-4000:], sep="\n")
    assert process.returncode == 0
    assert f"seen event={event_id} lane=live" in output
    assert "ticket=" not in errors


def test_no_live_polls_alone_and_status_says_so(standin: StandIn, tmp_path: Path) -> None:
    state = configure_connector(standin, tmp_path)
    environment = {key: value for key, value in os.environ.items() if key != "CONNECTOR_PAUSE_AT"}
    process = subprocess.Popen(
        [CONNECT, "run", "--state-dir", str(state), "--poll-seconds", str(POLL_SECONDS), "--no-live"],
        env=environment,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert process.stdout is not None
        assert process.stdout.readline().startswith("running account=")
        time.sleep(1.5)
        assert standin.live.tickets.minted == 0
        assert status(state)["live_lane"] is None
        assert "live lane: never started (intake polls only)" in status_text(state)
    finally:
        process.send_signal(signal.SIGTERM)
        process.communicate(timeout=90)
    assert process.returncode == 0
