"""`bin/outbox-resolve` as a person runs it: a real process, its stdout, stderr and exit code."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from shell.errors import EXIT_REFUSED
from tests.resolve.resolve_world import Intents

LAUNCHER = Path(__file__).resolve().parents[2] / "bin" / "outbox-resolve"


def launch(*argv: str, cwd: Path, ledger: str | None = None) -> subprocess.CompletedProcess[str]:
    environment = {key: value for key, value in os.environ.items() if key != "CONNECTOR_LEDGER"}
    if ledger is not None:
        environment["CONNECTOR_LEDGER"] = ledger
    return subprocess.run(
        [str(LAUNCHER), *argv], cwd=cwd, env=environment, capture_output=True, text=True, timeout=60,
        check=False,
    )


def test_the_launcher_is_executable() -> None:
    assert os.access(LAUNCHER, os.X_OK)


def test_list_json_from_the_launcher_with_a_relative_ledger_in_the_environment(
    intents: Intents, ledger_path: Path
) -> None:
    indeterminate = intents.indeterminate()
    refused = intents.refused()
    intents.sent(8)
    done = launch("list", "--json", cwd=ledger_path.parent.parent, ledger=f"{ledger_path.parent.name}/ledger.db")
    assert done.returncode == 0, done.stderr
    listed = json.loads(done.stdout)
    assert [(entry["id"], entry["state"]) for entry in listed] == [
        (indeterminate, "indeterminate"), (refused, "canceled")
    ]


def test_a_refused_move_from_the_launcher_is_one_line_and_its_exit_code(
    intents: Intents, ledger_path: Path
) -> None:
    intent_id = intents.sent(4242)
    done = launch("--ledger", str(ledger_path), "abandon", str(intent_id), "--by", "local:ana",
                  cwd=ledger_path.parent)
    assert done.returncode == EXIT_REFUSED
    assert done.stdout == ""
    assert done.stderr.splitlines() == [
        f"error: intent {intent_id} is sent; only an indeterminate intent can be abandoned"
    ]
    assert intents.whole(intent_id).state == "sent"
