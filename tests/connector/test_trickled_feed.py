"""`bin/connect run` against a stand-in whose feed trickles every answer (the headers at once, then
a byte every 2 s, added through its control API), as real processes. Found in a security review:
the start's feed read held the connector for as long as the server liked -- `running` never
printed, no mention heard, and SIGTERM ignored for 90 s until it was killed. Now the read ends by
its deadline, the start goes on, another lane hears the mention; and a SIGTERM during the start's
read stops it at once, saying where."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO

import pytest

from shell.basecamp.standin.control import SECRET_HEADER
from shell.basecamp.standin.server import StandIn
from tests.support.child import wait_until
from tests.support.configured import POLL_SECONDS, configure_connector

pytestmark = pytest.mark.slow
REPOSITORY = Path(__file__).resolve().parents[2]
SHUTDOWN_SECONDS = 2
READ_BOUND = 30  # the start's feed read's deadline (shell.connector)


@pytest.fixture
def standin() -> Iterator[StandIn]:
    with StandIn(world="demo") as server:
        yield server


def _trickle_the_feed(standin: StandIn) -> None:
    """Through the control API, as the README's table has it: a byte every 2 s, for ever."""
    fault = {"action": "trickle", "method": "GET", "path_contains": "/events.json", "times": None}
    request = urllib.request.Request(
        f"{standin.base_url}/__standin/faults", data=json.dumps(fault).encode(), method="POST",
        headers={SECRET_HEADER: standin.control_secret, "Content-Type": "application/json"})  # fmt: skip
    with urllib.request.urlopen(request, timeout=5) as answer:
        assert answer.status == 201


def test_a_trickling_feed_lets_run_start_and_another_lane_hear_the_mention(
    standin: StandIn, tmp_path: Path
) -> None:
    state = configure_connector(standin, tmp_path)
    _trickle_the_feed(standin)
    process, lines, logged = _run(state)
    try:
        started = time.monotonic()
        _wait(lambda: any(line.startswith("running account=") for line in lines), READ_BOUND + 20, logged)
        assert time.monotonic() - started < READ_BOUND + 15, "the start's feed read ended by its deadline"
        # the live lane hears what is said once it is subscribed (the feed, trickling, repairs nothing)
        _wait(lambda: "\nlive lane: connected since " in _status(state), 20, logged)
        card = standin.world.projects[0].recording_ids[0]
        event = standin.mention(standin.world.people[0], card, "can you look at this?")
        heard = re.compile(rf"seen event={event} lane=(live|inbox)$")
        _wait(lambda: any(heard.match(line) for line in lines), READ_BOUND + 10, [*lines, *logged])
        shown = _status(state)
        assert "\nstart: " not in shown, "the start is over: status shows its loops"
        assert "\nlive lane: connected since " in shown
    finally:
        took = _stop(process)
    errors = "\n".join(logged)
    assert process.returncode == 0, errors[-2000:]
    assert took < SHUTDOWN_SECONDS + 3, f"the stop took {took:.1f} s"


def test_sigterm_during_the_starts_trickled_feed_read_stops_it_at_once(standin: StandIn, tmp_path: Path) -> None:
    state = configure_connector(standin, tmp_path)
    _trickle_the_feed(standin)
    process, lines, logged = _run(state)
    try:
        wait_until(lambda: any("/events.json" in request.path for request in standin.requests()), timeout=30)
        time.sleep(1.0)  # the read is under way, its answer trickling
        assert "\nstart: under way, in its feed step since " in _status(state)
    finally:
        took = _stop(process)
    output, errors = "\n".join(lines), "\n".join(logged)
    assert process.returncode == 0, errors[-2000:]
    assert took < SHUTDOWN_SECONDS + 2, f"the stop took {took:.1f} s"
    assert "running" not in output, "the start never finished"
    assert "stopped during the start (feed)" in errors, errors[-2000:]


def _run(state: Path) -> tuple[subprocess.Popen[str], list[str], list[str]]:
    """The connector, with its stdout's and its stderr's lines as they come (each read as it goes)."""
    environment = {key: value for key, value in os.environ.items() if key != "CONNECTOR_PAUSE_AT"}
    process = subprocess.Popen(
        [
            str(REPOSITORY / "bin" / "connect"), "--verbose", "run", "--state-dir", str(state),
            "--poll-seconds", str(POLL_SECONDS), "--shutdown-seconds", str(SHUTDOWN_SECONDS),
        ],
        env=environment, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    output: list[str] = []
    errors: list[str] = []
    for stream, lines in ((process.stdout, output), (process.stderr, errors)):
        threading.Thread(target=_read_lines, args=(stream, lines), daemon=True).start()
    return process, output, errors


def _wait(condition: Callable[[], bool], timeout: float, shown: list[str]) -> None:
    ends = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < ends, "never, within the bound:\n" + "\n".join(shown[-60:])
        time.sleep(0.05)


def _status(state: Path) -> str:
    command = [str(REPOSITORY / "bin" / "connect"), "status", "--state-dir", str(state)]
    shown = subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)
    assert shown.returncode == 0, shown.stderr
    return shown.stdout


def _read_lines(stream: IO[str], lines: list[str]) -> None:
    for line in stream:
        lines.append(line.rstrip("\n"))


def _stop(process: subprocess.Popen[str]) -> float:
    """SIGTERM, then how long it took to exit (killed after 60 s: a failure)."""
    asked = time.monotonic()
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=60)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=30)
    took = time.monotonic() - asked
    time.sleep(0.2)  # its last lines read
    return took
