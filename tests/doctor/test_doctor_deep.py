"""``bin/connect doctor --deep``: the worker spawned as the dispatcher spawns it, with the MCP
config the dispatcher writes, completing the MCP handshake with ``bin/connect mcp``, then its
process group ended; and the probe's server, which grants nothing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from core.task_token import PROBE_PREFIX, TASK_TOKEN_ENV
from shell.basecamp.standin.server import StandIn
from shell.doctor.handshake import NO_DISPATCH, marker_path
from tests.support.child import alive, wait_until
from tests.support.configured import configure_connector

pytestmark = pytest.mark.slow
REPOSITORY = Path(__file__).resolve().parents[2]
CONNECT = str(REPOSITORY / "bin" / "connect")

HANGS_AFTER_THE_HANDSHAKE = """\
import json, os, sys, time
from shell.demo.worker import McpClient
with open(sys.argv[1]) as config:
    (server,) = json.load(config)["mcpServers"].values()
client = McpClient([server["command"], *server["args"]], {**os.environ, **server["env"]})
with open(sys.argv[2], "w") as pids:
    pids.write(f"{os.getpid()} {client.process.pid}")
time.sleep(600)
"""

# A grandchild in a session of its own (start_new_session: setsid before its exec), its pid written
# once it exists; the probe then completes the handshake and stays, or exits at once.
LEAVES_A_SETSID_GRANDCHILD = """\
import json, os, subprocess, sys, time
stray = subprocess.Popen(["sleep", "301"], start_new_session=True)
with open(sys.argv[2] + ".tmp", "w") as pids:
    pids.write(str(stray.pid))
os.rename(sys.argv[2] + ".tmp", sys.argv[2])
if sys.argv[3] == "exits":
    sys.exit(0)
from shell.demo.worker import McpClient
with open(sys.argv[1]) as config:
    (server,) = json.load(config)["mcpServers"].values()
client = McpClient([server["command"], *server["args"]], {**os.environ, **server["env"]})
time.sleep(600)
"""


def our_sleep(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes() == b"sleep\x00301\x00"
    except OSError:
        return False


@pytest.fixture(scope="module")
def standin() -> Any:
    with StandIn(world="demo") as running:
        yield running


def deep(state: Path, *more: str) -> tuple[int, dict[str, dict[str, str]], float]:
    started = time.monotonic()
    done = subprocess.run(
        [CONNECT, "doctor", "--state-dir", str(state), "--deep", "--json", *more],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert "Traceback" not in done.stderr, done.stderr
    checks = {check["name"]: check for check in json.loads(done.stdout)["checks"]}
    return done.returncode, checks, time.monotonic() - started


def test_the_bundled_demo_worker_completes_the_handshake_and_its_group_is_ended(
    standin: StandIn, tmp_path: Path
) -> None:
    tmp_path.chmod(0o700)
    state = configure_connector(standin, tmp_path)
    code, checks, _ = deep(state)
    assert code == 0
    handshake = checks["worker handshake"]
    assert handshake["status"] == "ok", handshake
    assert handshake["detail"].startswith("completed the MCP handshake with bin/connect mcp in ")
    assert checks["ledger"]["detail"].endswith("is not created yet: bin/connect run creates it")
    assert sorted(os.listdir(state)) == ["config.json"]  # no marker left, no ledger made


def test_a_worker_that_stays_after_the_handshake_is_ended_with_its_whole_group(
    standin: StandIn, tmp_path: Path
) -> None:
    tmp_path.chmod(0o700)
    script, pids = tmp_path / "stays.py", tmp_path / "pids"
    script.write_text(HANGS_AFTER_THE_HANDSHAKE)
    worker = ["env", f"PYTHONPATH={REPOSITORY}", sys.executable, str(script), "{mcp_config}", str(pids)]
    state = configure_connector(standin, tmp_path, worker=worker)
    code, checks, took = deep(state, "--deep-seconds", "60")
    assert code == 0, checks
    assert checks["worker handshake"]["detail"].endswith("its process group ended (SIGTERM)")
    assert took < 30, "doctor ends the worker once the handshake is seen, not at the deadline"
    worker_pid, server_pid = (int(pid) for pid in pids.read_text().split())
    wait_until(lambda: not Path(f"/proc/{worker_pid}").exists() and not Path(f"/proc/{server_pid}").exists())
    assert not Path(f"/proc/{server_pid}").exists(), "the MCP server, in the worker's group, was ended too"


def test_a_worker_that_ends_before_the_handshake_fails(standin: StandIn, tmp_path: Path) -> None:
    tmp_path.chmod(0o700)
    state = configure_connector(standin, tmp_path, worker=["true"])
    code, checks, _ = deep(state)
    assert code == 1
    assert checks["worker handshake"]["status"] == "failing"
    assert checks["worker handshake"]["detail"] == "the worker exited 0 before completing the MCP handshake"


def test_a_worker_that_never_shakes_hands_fails_at_the_deadline(standin: StandIn, tmp_path: Path) -> None:
    tmp_path.chmod(0o700)
    state = configure_connector(standin, tmp_path, worker=["sleep", "60"])
    code, checks, took = deep(state, "--deep-seconds", "1")
    assert code == 1
    assert checks["worker handshake"]["detail"] == "no MCP handshake with bin/connect mcp within 1 s"
    assert took < 30


def rpc(process: subprocess.Popen[str], message: dict[str, Any]) -> dict[str, Any]:
    """Send one message; the answer's result (``{}`` for a notification, which has none)."""
    assert process.stdin is not None
    assert process.stdout is not None
    process.stdin.write(json.dumps(message) + "\n")
    process.stdin.flush()
    if "id" not in message:
        return {}
    answer: dict[str, Any] = json.loads(process.stdout.readline())["result"]
    return answer


def test_a_probe_token_opens_no_ledger_marks_the_handshake_and_refuses_every_tool(tmp_path: Path) -> None:
    tmp_path.chmod(0o700)
    ledger = tmp_path / "ledger.sqlite3"  # never made: the probe opens none
    token = PROBE_PREFIX + "0123456789abcdef"
    marker = marker_path(ledger, token)
    environment = {**os.environ, TASK_TOKEN_ENV: token}
    with subprocess.Popen(
        [CONNECT, "mcp", "--ledger", str(ledger)], env=environment,
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    ) as server:  # fmt: skip
        asked = {"protocolVersion": "2025-06-18"}
        hello = rpc(server, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": asked})
        assert hello["serverInfo"]["name"] == "basecamp-connect"
        assert not marker.exists(), "the handshake is complete only once the client says so"
        rpc(server, {"jsonrpc": "2.0", "method": "notifications/initialized"})
        listed = rpc(server, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
        assert len(listed["tools"]) == 4
        assert marker.exists()
        calls = {"get_dispatch": {}, "ack_dispatch": {"event_id": 1},
                 "complete_dispatch": {"event_id": 1, "outcome": "failed"},
                 "reply_dispatch": {"event_id": 1, "text": "hello"}}  # fmt: skip
        for number, (tool, arguments) in enumerate(calls.items(), start=3):
            called = rpc(server, {"jsonrpc": "2.0", "id": number, "method": "tools/call",
                                  "params": {"name": tool, "arguments": arguments}})  # fmt: skip
            assert called["isError"] is True
            assert json.loads(called["content"][0]["text"])["message"] == NO_DISPATCH
        assert server.stdin is not None
        server.stdin.close()
        assert server.wait(timeout=30) == 0
    assert not ledger.exists()
    assert oct(marker.stat().st_mode & 0o777) == "0o600"


@pytest.mark.parametrize("then", ["stays", "exits"])
def test_a_grandchild_the_probe_started_in_a_session_of_its_own_is_ended_and_named(
    standin: StandIn, tmp_path: Path, then: str
) -> None:
    tmp_path.chmod(0o700)
    script, pids = tmp_path / "strays.py", tmp_path / "pids"
    script.write_text(LEAVES_A_SETSID_GRANDCHILD)
    worker = ["env", f"PYTHONPATH={REPOSITORY}", sys.executable, str(script), "{mcp_config}", str(pids), then]
    state = configure_connector(standin, tmp_path, worker=worker)
    try:
        code, checks, took = deep(state, "--deep-seconds", "60")
        grandchild = int(pids.read_text())
        assert not alive(grandchild), "the probe's grandchild, in a session of its own, outlived doctor --deep"
        handshake = checks["worker handshake"]
        assert handshake["detail"].endswith(
            "it left 1 process outside its group (a session of its own), found and ended too"
        ), handshake
        assert (code, handshake["status"]) == ((0, "warning") if then == "stays" else (1, "failing"))
        assert took < 30
    finally:
        if pids.exists() and alive(int(pids.read_text())) and our_sleep(int(pids.read_text())):
            os.kill(int(pids.read_text()), 9)  # the test's own grandchild, if doctor left it
