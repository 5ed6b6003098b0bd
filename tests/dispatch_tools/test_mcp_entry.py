"""The MCP server's own entry point: ``bin/connect mcp`` to the byte, imported and launched cheaper."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[2]
CONNECT = str(REPOSITORY / "bin" / "connect")
PROBE = (
    "import sys\n"
    "from shell.worker.mcp_entry import run\n"
    "code = run(sys.argv[1:])\n"
    "print(__import__('json').dumps({'code': code, 'modules': sorted(sys.modules)}))\n"
)


def environment() -> dict[str, str]:
    kept = {key: value for key, value in os.environ.items() if not key.startswith("BASECAMP_CONNECT")}
    return {**kept, "PYTHONPATH": str(REPOSITORY)}


def test_the_entry_answers_as_bin_connect_mcp_does(tmp_path: Path) -> None:
    ledger = str(tmp_path / "absent.sqlite3")
    entry = subprocess.run(
        [sys.executable, "-P", "-m", "shell.worker.mcp_entry", "--ledger", ledger],
        capture_output=True, text=True, env=environment(), timeout=60, check=False,
    )  # fmt: skip
    command = subprocess.run(
        [CONNECT, "mcp", "--ledger", ledger],
        capture_output=True,
        text=True,
        env=environment(),
        timeout=60,
        check=False,
    )
    assert entry.returncode == command.returncode != 0
    assert entry.stderr == command.stderr
    assert "no task token" in entry.stderr
    assert entry.stdout == command.stdout == ""


def test_the_entry_imports_no_other_command(tmp_path: Path) -> None:
    probe = subprocess.run(
        [sys.executable, "-P", "-c", PROBE, "--ledger", str(tmp_path / "absent.sqlite3")],
        capture_output=True, text=True, env=environment(), timeout=60, check=True,
    )  # fmt: skip
    modules = set(json.loads(probe.stdout)["modules"])
    commands = {name for name in modules if name.startswith("shell.cli.")}
    # main, its one error seam, the commands' summary table, and the one command with its argument types
    assert commands == {"shell.cli.main", "shell.cli.seam", "shell.cli.commands", "shell.cli.mcp", "shell.cli.arguments"}
    assert not {"urllib3", "shell.connector", "shell.basecamp.standin.server"} & modules
