"""`bin/connect redispatch` and `discard` as a person runs them, in-process against a real ledger
and a configuration as `setup` writes it: what they say when no connector runs, or when the one
running started before the configuration changed (it runs by the old routes)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from core.configuration import Configuration, Route
from core.snapshots import StopReason
from shell.cli.main import main as connect
from shell.ledger import tasks
from shell.ledger.connection import Ledger
from shell.state.config import save_config
from shell.state.lock import lock_path
from tests.support.ledger_world import PROJECT, LedgerWorld

EVENT = 701


def settled_unknown(world: LedgerWorld) -> None:
    world.request(EVENT)
    launched = world.launch(EVENT)
    with world.ledger.write() as connection:
        tasks.end_attempt(connection, launched.attempt_id, StopReason.lost, spawn_failed=False,
                          now=world.ledger.clock.now())


def configured(ledger: Ledger, tmp_path: Path) -> Path:
    token_file = tmp_path / "token"
    token_file.write_text("token-never-shown\n")
    token_file.chmod(0o600)
    directory = ledger.path.parent
    save_config(directory / "config.json", Configuration(
        account_id=999, base_url="https://3.basecampapi.com", agent_id=42, token_file=str(token_file),
        routes=(Route(PROJECT, str(tmp_path)),),
    ))
    return directory


def a_connector_running_since(state: Path, started_at: str) -> None:
    """The lock file's metadata as a running connector leaves it (this test's own pid: present)."""
    metadata = {"pid": os.getpid(), "started_at": started_at, "account_id": 999, "agent_id": 42}
    Path(f"{lock_path(state, 999, 42)}.json").write_text(json.dumps(metadata))


def redispatch(state: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, object]:
    assert connect(["redispatch", str(EVENT), "--state-dir", str(state), "--json", "--by", "local:ada"]) == 0
    result: dict[str, object] = json.loads(capsys.readouterr().out)
    return result


def test_with_no_connector_running_the_person_is_told_when_it_will_happen(
    world: LedgerWorld, ledger: Ledger, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    settled_unknown(world)
    said = str(redispatch(configured(ledger, tmp_path), capsys)["summary"])
    assert said.endswith("no connector seems to run (lock file, diagnostic): it starts with `bin/connect run`")


def test_a_decision_beside_a_running_connector_never_asks_for_a_restart(
    world: LedgerWorld, ledger: Ledger, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The running connector re-reads its routes (core.configuration): one that started before
    the configuration last changed serves the new routes all the same."""
    settled_unknown(world)
    state = configured(ledger, tmp_path)
    a_connector_running_since(state, "2026-01-01T00:00:00.000000000Z")
    said = str(redispatch(state, capsys)["summary"])
    assert "restart" not in said
    assert "no connector seems to run" not in said
