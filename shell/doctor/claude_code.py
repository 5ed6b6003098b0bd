"""``bin/connect doctor``'s measurements of the real worker, Claude Code (verdicts:
``core.doctor``).

Rules:
1. Only a worker command that speaks Claude Code's stream-json is asked (the default is): another
   program's flags mean nothing here.
2. Each question is Claude Code's own, and none reaches a model: ``PROGRAM --version`` and
   ``PROGRAM auth status``, run with the environment the worker gets (``WorkerCommand.environment``:
   the keys ``setup --worker-env`` names, nothing else of the connector's), its stdin closed, within
   ``SECONDS`` each; a program that does not answer in time is judged as having said nothing.
"""

from __future__ import annotations

import os
import subprocess

from core.doctor import Check, allowances_check, auth_check, version_check
from shell.worker.command import WorkerCommand

SECONDS = 20.0


def _ask(command: WorkerCommand, *arguments: str) -> tuple[str, int | None]:
    try:
        answer = subprocess.run(
            [command.argv[0], *arguments],
            env=command.environment(os.environ),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=SECONDS,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return "", None
    except OSError as error:
        return str(error.strerror or error), None
    return answer.stdout.decode("utf-8", "replace"), answer.returncode


def checks(command: WorkerCommand, allowed: tuple[str, ...]) -> list[Check]:
    """The version, login and allowances checks (rules 1-2); none for a command that is not
    Claude Code. ``allowed``: what setup allowed it beyond its defaults, by name."""
    if not command.speaks_stream_json:
        return []
    return [
        version_check(*_ask(command, "--version")),
        auth_check(*_ask(command, "auth", "status")),
        allowances_check(allowed),
    ]
