"""``bin/bench mcp``: how soon the MCP server answers ``initialize``, launched as the connector
launches it, beside a bare interpreter's start.

It writes a ledger with one launched task (its token live), then, ``--repeat`` times and
interleaved: ``python -c pass`` to its exit; the server launched from the worker's MCP
configuration exactly as ``shell.worker.driver.mcp_session_config`` writes it (this interpreter
on ``shell.worker.mcp_entry``), timed from the start to its ``initialize`` answer; and the same
through ``bin/connect mcp``, the way it was launched before. Medians, and the last line
``mcp: ratio=R connect_ratio=C`` (each over the bare start, same run).
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from core.task_token import TASK_TOKEN_ENV
from shell.clock import SystemClock
from shell.ledger.connection import open_ledger
from shell.worker.driver import mcp_session_config
from tests.support.ledger_world import LedgerWorld

REPOSITORY = Path(__file__).resolve().parents[2]
INITIALIZE = json.dumps({
    "jsonrpc": "2.0", "id": 1, "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}},
})  # fmt: skip


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "mcp",
        help="the MCP server's start to its initialize answer over a bare interpreter's start "
        "(last line: mcp: ratio=R connect_ratio=C)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--repeat", type=int, default=7, metavar="R", help="runs of each (default 7)")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    logging.disable(logging.INFO)
    with tempfile.TemporaryDirectory(prefix="bench-mcp-") as directory:
        state = Path(directory) / "state"
        state.mkdir(mode=0o700)
        ledger_path = state / "ledger.sqlite3"
        with open_ledger(ledger_path, clock=SystemClock()) as ledger:
            world = LedgerWorld(ledger)
            world.request(1)
            token = world.launch(1).token
        (server,) = mcp_session_config(ledger_path, token, 4242)["mcpServers"].values()  # type: ignore[attr-defined]
        entry = [str(server["command"]), *map(str, server["args"])]
        entry_env = {**os.environ, **server["env"]}
        connect = [
            str(REPOSITORY / "bin" / "connect"),
            "mcp",
            "--ledger",
            str(ledger_path),
            "--agent-id",
            "4242",
        ]
        connect_env = {**os.environ, TASK_TOKEN_ENV: token}
        bare, lean, through_connect = [], [], []
        for _ in range(max(1, args.repeat)):
            started = time.perf_counter()
            subprocess.run([sys.executable, "-c", "pass"], check=True)
            bare.append(time.perf_counter() - started)
            lean.append(_answer_time(entry, entry_env))
            through_connect.append(_answer_time(connect, connect_env))
    floor, fast, slow = (statistics.median(runs) for runs in (bare, lean, through_connect))
    print(f"python -c pass                       {floor * 1000:6.0f} ms")
    print(f"server as the connector launches it  {fast * 1000:6.0f} ms to its initialize answer")
    print(f"server through bin/connect mcp       {slow * 1000:6.0f} ms to its initialize answer")
    print(f"mcp: ratio={fast / floor:.1f} connect_ratio={slow / floor:.1f}")
    return 0


def _answer_time(argv: list[str], env: dict[str, str]) -> float:
    started = time.perf_counter()
    process = subprocess.Popen(
        argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env
    )
    assert process.stdin is not None
    assert process.stdout is not None
    process.stdin.write(INITIALIZE.encode() + b"\n")
    process.stdin.flush()
    answer = process.stdout.readline()
    elapsed = time.perf_counter() - started
    process.stdin.close()
    process.wait(timeout=30)
    if b'"result"' not in answer:
        raise SystemExit(f"the server did not answer initialize: {process.stderr.read()!r}")  # type: ignore[union-attr]
    return elapsed
