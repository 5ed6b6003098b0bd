"""The MCP server's own entry point: ``bin/connect mcp`` to the byte, imported and launched cheaper."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from core.task_token import TASK_TOKEN_ENV
from shell.cli.mcp import NOT_ERASED
from shell.errors import EXIT_CONFIG
from tests.dispatch_tools.test_mcp_process import UNWRITABLE_BLOCK

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
    # main (with the commands' summary table), its one error seam (with the standard streams it
    # says a failed answer on), the start's signals (whose ``chosen`` names the subcommand; no
    # command of its own), and the one command with its argument types
    assert commands == {"shell.cli.main", "shell.cli.seam", "shell.cli.start_signals", "shell.cli.mcp",
                        "shell.cli.arguments"}
    assert not {"urllib3", "shell.connector", "shell.basecamp.standin.server"} & modules


MOVE_PROBE = (
    "import json, os, sys\n"
    "from shell.worker.mcp_entry import token_on_a_pipe\n"
    "moved = token_on_a_pipe(sys.argv[1:])\n"
    "print(json.dumps(None if moved == sys.argv[1:] else {\n"
    "    'argv': moved, 'env': sorted(os.environ), 'modules': sorted(sys.modules),\n"
    "    'token': os.read(int(moved[-1]), 4096).decode(),\n"
    "    'block': open('/proc/self/environ', 'rb').read().decode('latin-1')}))\n"
)


def move(*argv: str, **env: str) -> Any:
    probe = subprocess.run(
        [sys.executable, "-P", "-c", MOVE_PROBE, *argv],
        capture_output=True, text=True, env={**environment(), **env}, timeout=60, check=True,
    )  # fmt: skip
    return json.loads(probe.stdout)


def test_a_token_in_the_environment_moves_to_a_pipe_before_the_server_is_imported() -> None:
    moved = move("--ledger", "/x/ledger.sqlite3", "--agent-id=42", **{TASK_TOKEN_ENV: "secret-token"})
    assert moved["argv"][:-1] == ["--ledger", "/x/ledger.sqlite3", "--agent-id", "42", "--token-fd"]
    assert moved["token"] == "secret-token"
    assert TASK_TOKEN_ENV not in moved["env"]
    assert "secret-token" not in moved["block"], "/proc/PID/environ no longer shows it"
    assert TASK_TOKEN_ENV not in moved["block"]
    heavy = {"shell.cli.main", "shell.cli.mcp", "shell.ledger.connection", "sqlite3", "returns"}
    assert not heavy & set(moved["modules"]), "the move comes before the server's imports"


def unerasable(launcher: str, *argv: str) -> subprocess.CompletedProcess[str]:
    """The entry or ``bin/connect mcp``'s own ``main``, on a kernel whose block cannot be erased."""
    return subprocess.run(
        [sys.executable, "-P", "-c", UNWRITABLE_BLOCK, launcher, *argv],
        capture_output=True, text=True, env={**environment(), TASK_TOKEN_ENV: "secret-token"}, timeout=60,
        check=False,
    )  # fmt: skip


def test_where_the_block_cannot_be_erased_the_entry_refuses_to_start_as_bin_connect_mcp_does(tmp_path: Path) -> None:
    """Nothing is moved and the server itself refuses, exit 3, before it opens the ledger
    (an absent one here: the refusal, not the missing ledger, is what it says)."""
    argv = ("--ledger", str(tmp_path / "absent.sqlite3"), "--agent-id=42")
    entry, command = unerasable("entry", *argv), unerasable("connect", *argv)
    assert entry.returncode == command.returncode == EXIT_CONFIG
    assert entry.stderr == command.stderr == f"error: {NOT_ERASED}\n"
    assert entry.stdout == command.stdout == ""
    assert "secret-token" not in entry.stderr


MOVABLE = "a-token-found-nowhere-else"  # "t" would be found all over the block: no erasure, no move, whatever the shape


def test_a_named_variable_moves_and_anything_else_is_left_to_the_server() -> None:
    assert move("--ledger", "/x/l", **{TASK_TOKEN_ENV: MOVABLE}) is not None, "the token these cases use can move"
    named = move("--ledger", "/x/l", "--token-env", "MY_TOKEN", MY_TOKEN="t0k")
    assert named["token"] == "t0k"
    assert "MY_TOKEN" not in named["env"]
    assert "--token-env" not in named["argv"]
    for argv, env in [
        (["--ledger", "/x/l", "--token-fd", "7"], {TASK_TOKEN_ENV: MOVABLE}),  # a pipe already
        (["--ledger", "/x/l", "--help"], {TASK_TOKEN_ENV: MOVABLE}),  # not the connector's shape
        (["--ledger", "/x/l"], {TASK_TOKEN_ENV: "   "}),  # blank: the server says so
        (["--ledger", "/x/l"], {}),  # none: the server says so
    ]:
        assert move(*argv, **env) is None, argv


def test_launched_with_a_token_in_the_environment_one_interpreter_serves(tmp_path: Path) -> None:
    """As launched: ``-X importtime`` would not survive an exec (the exec names no such
    flag), so a report that names the server's own modules says one interpreter did it all."""
    launched = subprocess.run(
        [sys.executable, "-X", "importtime", "-P", "-m", "shell.worker.mcp_entry", "--ledger", str(tmp_path / "absent")],
        capture_output=True, text=True, env={**environment(), TASK_TOKEN_ENV: "secret-token"}, timeout=60, check=False,
    )  # fmt: skip
    imported = {line.rsplit("|", 1)[-1].strip() for line in launched.stderr.splitlines() if line.startswith("import time:")}
    assert {"core.task_token", "shell.cli.main", "shell.ledger.connection", "shell.worker.mcp"} <= imported, launched.stderr[-2000:]
    assert launched.returncode != 0
    assert "absent" in launched.stderr, "the server itself says the ledger is missing"


BEFORE_IMPORT_PROBE = (
    "import json, runpy, sys\n"
    "seen = []\n"
    "def hook(event, args):\n"
    "    if event == 'import' and args[0] == 'shell.cli.main' and not seen:\n"
    "        with open('/proc/self/environ', 'rb') as block:\n"
    "            seen.append(b'secret-token' in block.read())\n"
    "sys.addaudithook(hook)\n"
    "try:\n"
    "    runpy.run_module('shell.worker.mcp_entry', run_name='__main__', alter_sys=True)\n"
    "except SystemExit:\n"
    "    pass\n"
    "print(json.dumps(seen))\n"
)


def test_launched_with_a_token_in_the_environment_it_is_erased_before_the_server_is_imported(tmp_path: Path) -> None:
    """As launched: when the server's first module is imported, /proc/PID/environ no longer
    shows the token (the server would erase it too, but only after its imports)."""
    launched = subprocess.run(
        [sys.executable, "-P", "-c", BEFORE_IMPORT_PROBE, "--ledger", str(tmp_path / "absent")],
        capture_output=True, text=True, env={**environment(), TASK_TOKEN_ENV: "secret-token"}, timeout=60, check=True,
    )  # fmt: skip
    assert json.loads(launched.stdout.splitlines()[-1]) == [False], launched.stderr[-2000:]


def test_a_token_larger_than_a_pipe_holds_is_refused_not_waited_on(tmp_path: Path) -> None:
    """The entry writes the token into a pipe it reads itself: more than a pipe's buffer would wait
    forever. It writes at most one byte past a token, and the server says what it got."""
    launched = subprocess.run(
        [sys.executable, "-P", "-m", "shell.worker.mcp_entry", "--ledger", str(tmp_path / "absent")],
        capture_output=True, text=True, env={**environment(), TASK_TOKEN_ENV: "a" * 70_000}, timeout=60, check=False,
    )  # fmt: skip
    assert launched.returncode != 0
    assert "more than a token" in launched.stderr


COLLECTOR_PROBE = (
    "import gc, json, sys\n"
    "import shell.cli.main\n"
    "def main(argv, commands):\n"
    "    print(json.dumps({'enabled': gc.isenabled(), 'frozen': gc.get_freeze_count()}))\n"
    "    return 0\n"
    "shell.cli.main.main = main\n"
    "from shell.worker.mcp_entry import run\n"
    "sys.exit(run(['--ledger', 'x']))\n"
)


def test_the_collector_is_on_while_the_server_serves_and_its_imports_are_frozen() -> None:
    """The collector is off during the imports only; what they made is frozen."""
    probe = subprocess.run(
        [sys.executable, "-P", "-c", COLLECTOR_PROBE],
        capture_output=True, text=True, env=environment(), timeout=60, check=True,
    )  # fmt: skip
    state = json.loads(probe.stdout)
    assert state["enabled"] is True
    assert state["frozen"] > 1000, "the imports' objects are out of every collection's way"
