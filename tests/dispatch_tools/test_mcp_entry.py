"""The MCP server's own entry point: ``bin/connect mcp`` to the byte, imported and launched cheaper."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from core.task_token import TASK_TOKEN_ENV

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


MOVE_PROBE = (
    "import json, os, sys\n"
    "def execve(path, argv, env):\n"
    "    print(json.dumps({'argv': argv, 'env': sorted(env), 'modules': sorted(sys.modules),\n"
    "                      'token': os.read(int(argv[-1]), 4096).decode()}))\n"
    "    sys.stdout.flush()\n"
    "    os._exit(0)\n"
    "os.execve = execve\n"
    "from shell.worker.mcp_entry import token_on_a_pipe\n"
    "token_on_a_pipe(sys.argv[1:])\n"
    "print(json.dumps(None))\n"
)


def move(*argv: str, **env: str) -> Any:
    probe = subprocess.run(
        [sys.executable, "-P", "-c", MOVE_PROBE, *argv],
        capture_output=True, text=True, env={**environment(), **env}, timeout=60, check=True,
    )  # fmt: skip
    return json.loads(probe.stdout)


def test_a_token_in_the_environment_moves_to_a_pipe_before_the_server_is_imported() -> None:
    moved = move("--ledger", "/x/ledger.sqlite3", "--agent-id=42", **{TASK_TOKEN_ENV: "secret-token"})
    assert moved["argv"][-6:-1] == ["--ledger", "/x/ledger.sqlite3", "--agent-id", "42", "--token-fd"]
    assert moved["argv"][moved["argv"].index("-m") + 1] == "shell.worker.mcp_entry"
    assert moved["token"] == "secret-token"
    assert TASK_TOKEN_ENV not in moved["env"]
    heavy = {"shell.cli.main", "shell.cli.mcp", "shell.ledger.connection", "sqlite3", "returns"}
    assert not heavy & set(moved["modules"]), "the exec comes before the server's imports"


def test_a_named_variable_moves_and_anything_else_is_left_to_the_server() -> None:
    named = move("--ledger", "/x/l", "--token-env", "MY_TOKEN", MY_TOKEN="t0k")
    assert named["token"] == "t0k"
    assert "MY_TOKEN" not in named["env"]
    assert "--token-env" not in named["argv"]
    for argv, env in [
        (["--ledger", "/x/l", "--token-fd", "7"], {TASK_TOKEN_ENV: "t"}),  # a pipe already
        (["--ledger", "/x/l", "--help"], {TASK_TOKEN_ENV: "t"}),  # not the connector's shape
        (["--ledger", "/x/l"], {TASK_TOKEN_ENV: "   "}),  # blank: the server says so
        (["--ledger", "/x/l"], {}),  # none: the server says so
    ]:
        assert move(*argv, **env) is None, argv


def test_launched_with_a_token_in_the_environment_the_first_process_imports_no_server(tmp_path: Path) -> None:
    """Rule 3 as launched: ``-X importtime`` holds for the first process only (the exec drops it),
    so its report names what was imported before the exec."""
    launched = subprocess.run(
        [sys.executable, "-X", "importtime", "-P", "-m", "shell.worker.mcp_entry", "--ledger", str(tmp_path / "absent")],
        capture_output=True, text=True, env={**environment(), TASK_TOKEN_ENV: "secret-token"}, timeout=60, check=False,
    )  # fmt: skip
    imported = {line.rsplit("|", 1)[-1].strip() for line in launched.stderr.splitlines() if line.startswith("import time:")}
    assert "core.task_token" in imported, launched.stderr[-2000:]
    assert not {"shell.cli.main", "shell.cli.mcp", "shell.ledger.connection"} & imported
    assert launched.returncode != 0
    assert "absent" in launched.stderr, "the server itself, after the exec, says the ledger is missing"
