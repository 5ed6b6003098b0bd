"""An MCP file is read again at each worker start: one changed after the command was built (open
to others, another server, unreadable) ends that start as not started, the reason on the attempt's
record, and no process runs. The real command driver, a real ledger file, real files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.worker_allowances import WorkerAllowances
from shell.dispatcher import Dispatcher, DispatchOptions
from shell.ledger.connection import Ledger
from shell.worker.command import WorkerCommand
from shell.worker.driver import CommandDriver, SpawnFailed, spawn
from tests.dispatch.test_dispatcher import FakeRecovery, settle_all
from tests.support.ledger_world import PROJECT, LedgerWorld


def _mcp_file(path: Path, servers: dict[str, object], mode: int = 0o600) -> Path:
    path.write_text(json.dumps({"mcpServers": servers}))
    path.chmod(mode)
    return path


def _command(tmp_path: Path) -> tuple[WorkerCommand, Path]:
    extra = _mcp_file(tmp_path / "search.json", {"search": {"command": "search-server"}})
    command = WorkerCommand.configured(None, (), WorkerAllowances((), (str(extra),)))
    return command, extra


@pytest.mark.parametrize("change", ["opened", "renamed", "removed"])
def test_a_start_after_the_mcp_file_changed_is_not_started_and_says_why(
    tmp_path: Path, change: str
) -> None:
    command, extra = _command(tmp_path)
    assert command.mcp_changed() is None
    if change == "opened":
        extra.chmod(0o666)
    elif change == "renamed":
        _mcp_file(extra, {"search": {"command": "x"}, "x": {"command": "y"}})
    else:
        extra.unlink()
    private = tmp_path / "private"
    private.mkdir(mode=0o700)
    outcome = spawn(command, attempt_id="att_1", prompt="p", work_dir=tmp_path, private_dir=private,
                    ledger_path=tmp_path / "ledger.sqlite3", token="tok_x")
    assert isinstance(outcome, SpawnFailed)
    assert outcome.detail.endswith(("not started", "not started (a restart takes them)"))
    assert str(extra) in outcome.detail
    assert list(private.iterdir()) == [], "no session, no process"


def test_the_attempts_record_says_why_its_worker_was_not_started(
    world: LedgerWorld, ledger: Ledger, ledger_path: Path, tmp_path: Path
) -> None:
    command, extra = _command(tmp_path)
    extra.chmod(0o646)  # open to others after the connector built its command
    private = tmp_path / "private"
    private.mkdir(mode=0o700)
    driver = CommandDriver(command, private, ledger_path)
    world.request(101)
    running = Dispatcher(ledger, {PROJECT: tmp_path}, driver, FakeRecovery(),
                         options=DispatchOptions(concurrency=1))
    running.tick()
    settle_all(running)
    with ledger.read() as connection:
        stop_reason, spawn_failed, not_started = connection.execute(
            "SELECT stop_reason, spawn_failed, not_started FROM attempts").fetchone()
    assert (stop_reason, spawn_failed) == ("failed", 1)
    assert f"the MCP config file {extra} is open to others (mode 0646)" in not_started
    assert not_started.endswith("not started")
