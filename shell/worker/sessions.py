"""An attempt's session: its owner-only directory, the MCP config that carries the task token,
and the files the worker's output goes to.

Rules:
1. The task token is never in argv or the worker's environment: it is written once, into the
   MCP server's ``env`` in the session config, a 0600 file in a 0700 directory of the private
   directory (``shell.private_files``). The config is removed when the attempt ends, the session
   directory when the dispatcher releases it.
2. An attempt id names a directory: letters, digits and ``_`` only, at most 64.
3. A fault of the private directory raises ``SessionSetupError``: no record's fault, and no
   worker is started.
4. ``sweep_sessions`` removes every session a previous connector left: they can hold a token.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
from pathlib import Path

from core.dispatch_prompt import MCP_SERVER_NAME
from core.task_token import TASK_TOKEN_ENV
from shell import private_files

_ATTEMPT_ID = re.compile(r"[A-Za-z0-9_]{1,64}")

MCP_CONFIG_NAME = "mcp.json"
STDOUT_NAME = "stdout"
STDERR_NAME = "stderr"


class SessionSetupError(Exception):
    """The connector's private directory could not hold an attempt's session: no worker was started."""


def mcp_session_config(
    repository: Path, ledger_path: Path, token: str, agent_id: int | None = None
) -> dict[str, object]:
    """The session's MCP config: one stdio server, the connector's, with the task token in its env.
    It is launched the cheapest way: this interpreter on ``shell.worker.mcp_entry`` (what
    ``bin/connect mcp`` runs, without its script and its other commands)."""
    args = ["-P", "-m", "shell.worker.mcp_entry", "--ledger", str(ledger_path)]
    if agent_id is not None:
        args += ["--agent-id", str(int(agent_id))]
    return {
        "mcpServers": {
            MCP_SERVER_NAME: {
                "type": "stdio",
                "alwaysLoad": True,  # Claude Code: connected before its first model request
                "command": sys.executable,
                "args": args,
                "env": {"PYTHONPATH": str(repository), TASK_TOKEN_ENV: token},
            }
        }
    }


def _private_directory(root: Path) -> None:
    """Make ``root`` an owner-only directory of ours, or refuse (``shell.private_files``)."""
    try:
        private_files.ensure_directory(root, "the worker sessions' directory")
    except private_files.PrivatePathError as error:
        raise SessionSetupError(str(error)) from error
    except OSError as error:
        raise SessionSetupError(f"the private directory {root} is unusable: {error.strerror}") from error


def open_session(private_dir: Path, attempt_id: str, config: dict[str, object]) -> tuple[Path, int, int]:
    """The attempt's session directory with its MCP config; descriptors for stdout and stderr."""
    if _ATTEMPT_ID.fullmatch(attempt_id) is None:
        raise SessionSetupError("an attempt id names a directory: letters, digits and _ only")
    _private_directory(private_dir)
    session_dir = private_dir / attempt_id
    try:
        private_files.make_directory(session_dir)
    except OSError as error:
        raise SessionSetupError(f"the session directory for {attempt_id}: {error.strerror}") from error
    try:
        private_files.write_new_file(session_dir / MCP_CONFIG_NAME, json.dumps(config, indent=2).encode())
        out = private_files.create_file(session_dir / STDOUT_NAME)
        try:
            err = private_files.create_file(session_dir / STDERR_NAME)
        except BaseException:
            os.close(out)
            raise
    except OSError as error:
        shutil.rmtree(session_dir, ignore_errors=True)
        raise SessionSetupError(f"the session for {attempt_id}: {error.strerror}") from error
    return session_dir, out, err


def remove_session(session_dir: Path) -> None:
    """Remove an attempt's session directory (its config and output)."""
    shutil.rmtree(session_dir, ignore_errors=True)


def sweep_sessions(private_dir: Path) -> list[str]:
    """Remove every session directory a previous connector left (their files can hold a token)."""
    if not private_dir.is_dir():
        return []
    removed: list[str] = []
    for entry in sorted(private_dir.iterdir()):
        if entry.is_dir() and not entry.is_symlink() and entry.name.startswith("att_"):
            shutil.rmtree(entry, ignore_errors=True)
            removed.append(entry.name)
    return removed
