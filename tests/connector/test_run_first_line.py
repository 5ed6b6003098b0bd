"""`bin/connect run`'s first line names what it counts: ``mid_launch=`` the
attempts a crash left mid-launch for ``settle-launch`` (it was ``held=``, read as the hold), and
``hold=on|off``, whether a person's hold stands; as a real process against the stand-in."""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from shell.basecamp.standin.server import StandIn
from tests.support.configured import POLL_SECONDS, REPOSITORY, configure_connector

pytestmark = pytest.mark.slow


@pytest.fixture
def standin() -> Iterator[StandIn]:
    with StandIn(world="demo") as server:
        yield server


def first_running_line(state: Path, *more: str) -> str:
    environment = {key: value for key, value in os.environ.items() if key != "CONNECTOR_PAUSE_AT"}
    process = subprocess.Popen(
        [str(REPOSITORY / "bin" / "connect"), "run", "--state-dir", str(state), "--poll-seconds", str(POLL_SECONDS),
         *more], env=environment, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert process.stdout is not None
    try:
        while not (line := process.stdout.readline()).startswith("running ") and line:
            pass
        return line.strip()
    finally:
        process.send_signal(signal.SIGTERM)
        process.communicate(timeout=60)


def test_the_running_line_names_the_launches_left_and_whether_a_hold_stands(
    standin: StandIn, tmp_path: Path
) -> None:
    state = configure_connector(standin, tmp_path, worker=("true",))
    pair = f"account={standin.world.account_id} agent={standin.world.agent.id}"
    assert first_running_line(state) == f"running {pair} mid_launch=none hold=off"
    assert first_running_line(state, "--hold", "--reason", "cutover") == f"running {pair} mid_launch=none hold=on"
