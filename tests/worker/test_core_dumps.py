"""Core dumps off (``shell.process_secrets``): ``bin/connect run`` and the MCP server a worker starts
run with ``RLIMIT_CORE`` 0, soft and hard, read from the kernel's own record of each real
process (``/proc/PID/limits``): a core of either would hold a token, the MCP server's in the
worker's approved directory."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from shell.basecamp.standin.server import StandIn
from tests.support.child import wait_until
from tests.support.configured import REPOSITORY, configure_connector, start_run

pytestmark = pytest.mark.slow


def core_limit(pid: int) -> tuple[str, str]:
    """The soft and hard core-size limits the kernel holds for ``pid``."""
    for line in Path(f"/proc/{pid}/limits").read_text().splitlines():
        if line.startswith("Max core file size"):
            soft, hard = line.split()[4:6]
            return soft, hard
    raise AssertionError("no core limit in /proc")


def test_the_running_connector_writes_no_core(tmp_path: Path) -> None:
    with StandIn(world="demo") as standin:
        process = start_run(configure_connector(standin, tmp_path))
        try:
            assert core_limit(process.pid) == ("0", "0")
        finally:
            process.send_signal(signal.SIGTERM)
            process.communicate(timeout=60)


def test_the_mcp_server_writes_no_core_before_it_reads_its_token(tmp_path: Path) -> None:
    read_end, write_end = os.pipe()
    server = subprocess.Popen(
        [sys.executable, "-P", "-m", "shell.worker.mcp_entry", "--ledger", str(tmp_path / "none.sqlite3"),
         "--token-fd", str(read_end)],
        cwd=REPOSITORY, pass_fds=(read_end,), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, env={**os.environ, "PYTHONPATH": str(REPOSITORY)},
    )  # fmt: skip
    os.close(read_end)
    try:
        wait_until(lambda: core_limit(server.pid) == ("0", "0"))  # first thing; then it waits for its token
    finally:
        os.close(write_end)
        server.communicate(timeout=30)
