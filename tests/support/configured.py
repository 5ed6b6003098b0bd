"""A state directory as `bin/connect setup` writes it against the stand-in, for tests that run the
connector as a real process: the agent's token in an owner-only file, routes, and the bundled
demo worker (its own credentials in a token file, never in argv); and ``start_run``, that connector
running.

``POLL_SECONDS`` is the feed-poll interval every test that runs the connector as a process gives
``run``: the pace the request budget allows polls (``core.pacing``: a poll goes freely while fewer
than half the window's turns are spent), halved so the test's own reads and posts fit beside them.
A faster pace filled that half in a few seconds, then every poll waited for it to empty: polls
arrived in bursts, and a test waiting on the poll lane under load waited seconds for a turn."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from core.pacing import DEFAULT_LIMIT, DEFAULT_WINDOW_SECONDS, POLL_HEADROOM_SHARE
from shell.basecamp.standin.server import StandIn
from shell.cli.main import main as connect

REPOSITORY = Path(__file__).resolve().parents[2]
POLL_SECONDS = round(DEFAULT_WINDOW_SECONDS / (DEFAULT_LIMIT * POLL_HEADROOM_SHARE / 2), 2)
"""0.85 s: polls take at most half of the turns the budget leaves them (module docstring)."""


def configure_connector(
    standin: StandIn,
    tmp_path: Path,
    *more: str,
    routed: Sequence[int] = (0,),
    scenes: Path | None = None,
    worker: Sequence[str] | None = None,
    base_url: str | None = None,
    default_worker: bool = False,
) -> Path:
    """Run ``setup`` into ``tmp_path/state`` and return that directory.

    ``routed``: which of the world's projects get a route (each to its own new directory);
    ``scenes``: the demo worker plays each event's part from that file (``--scenes``);
    ``worker``: another worker command instead; ``default_worker``: no ``--worker-command`` at all
    (the default, Claude Code, as a person's setup has it); ``base_url``: setup writes it unchecked;
    ``more``: further setup options (timings). The floors are lifted (``--unsafe-test-timings``):
    tests read the feed every ``POLL_SECONDS`` and reconcile after a second.
    """
    world = standin.world
    state = tmp_path / "state"
    token_file = tmp_path / "token"
    token_file.write_text(world.token + "\n")
    token_file.chmod(0o600)
    routes: list[str] = []
    for index in routed:
        project = world.projects[index]
        work = tmp_path / f"work-{project.id}"
        work.mkdir()
        routes += ["--route", f"{project.id}={work}"]
    command = list(worker) if worker is not None else [
        "env", f"PYTHONPATH={REPOSITORY}", sys.executable, "-m", "shell.demo.worker",
        "--mcp-config", "{mcp_config}", "--base-url", standin.base_url,
        "--account", str(world.account_id), "--token-file", str(token_file),
        *(["--prompt", "{prompt}", "--scenes", str(scenes)] if scenes is not None else []),
    ]  # fmt: skip
    arguments = [
        "setup", "--state-dir", str(state), "--base-url", base_url or standin.base_url,
        "--account", str(world.account_id), "--agent", str(world.agent.id),
        "--token-file", str(token_file), "--operator", str(world.people[0].id),
        *routes, *([] if default_worker else ["--worker-command", shlex.join(command)]),
        "--unsafe-test-timings", *more,
        *(["--no-check"] if base_url is not None else []),
    ]  # fmt: skip
    assert connect(arguments) == 0
    return state


def start_run(state: Path, environment: Mapping[str, str] | None = None) -> subprocess.Popen[str]:
    """``bin/connect run`` on ``state`` (polling every ``POLL_SECONDS``), once it says it is running;
    ``environment``: the connector's, instead of this process's."""
    if environment is None:
        environment = {key: value for key, value in os.environ.items() if key != "CONNECTOR_PAUSE_AT"}
    process = subprocess.Popen(
        [str(REPOSITORY / "bin" / "connect"), "run", "--state-dir", str(state), "--poll-seconds", str(POLL_SECONDS)],
        env=environment, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert process.stdout is not None
    line = process.stdout.readline()
    assert line.startswith("running account="), line
    return process
