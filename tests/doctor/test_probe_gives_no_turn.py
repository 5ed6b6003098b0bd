"""``doctor --deep``'s probe gives a worker that speaks Claude Code's stream-json no turn: nothing
is written on its stdin, so Claude Code connects its MCP servers and never asks its model anything.
A real child plays Claude Code's part: it waits a moment for a turn on its stdin (noting one if it
comes), then completes the MCP handshake, and stays until doctor ends it."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from shell.clock import SystemClock
from shell.doctor.handshake import probe
from shell.worker.command import WorkerCommand

pytestmark = pytest.mark.slow
REPOSITORY = Path(__file__).resolve().parents[2]

WAITS_FOR_A_TURN_THEN_SHAKES_HANDS = """\
import json, os, select, sys, time
from shell.demo.worker import McpClient
config, noted = sys.argv[1], sys.argv[2]
readable, _, _ = select.select([sys.stdin], [], [], 1.0)
if readable and sys.stdin.readline():
    with open(noted, "w") as out:
        out.write("given a turn")
with open(config) as file:
    (server,) = json.load(file)["mcpServers"].values()
client = McpClient([server["command"], *server["args"]], {**os.environ, **server["env"]})
time.sleep(60)
"""


def test_the_probe_writes_a_stream_json_worker_no_turn(tmp_path: Path) -> None:
    tmp_path.chmod(0o700)
    script, noted = tmp_path / "plays.py", tmp_path / "noted"
    script.write_text(WAITS_FOR_A_TURN_THEN_SHAKES_HANDS)
    command = WorkerCommand(
        argv=(sys.executable, str(script), "{mcp_config}", str(noted), "--input-format", "stream-json"),
        env=(("PYTHONPATH", str(REPOSITORY)),),
    )
    handshake = probe(command, ledger=tmp_path / "ledger.sqlite3", agent_id=4242, seconds=30, clock=SystemClock())
    assert handshake.initialized, handshake
    assert not noted.exists(), "the worker was given no turn: its model is never asked"
