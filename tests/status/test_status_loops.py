"""`bin/connect status` names a loop of the running connector that is not turning: each loop's
heartbeat, written beside the ledger by the connector (``shell.heartbeats``), judged by
``core.heartbeats`` -- a thread that died or hangs beats no more, and status says which."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from core.heartbeats import STALL_AFTER, beats_text
from shell.clock import FakeClock, SystemClock
from shell.heartbeats import Heartbeats, path_beside
from shell.private_files import write_atomically
from shell.state.lock import acquire
from tests.status.test_status_ledger import ACCOUNT, AGENT, state, status, status_json

__all__ = ["state"]  # the fixture, shared


def _beats(state: Path, **ages: timedelta) -> None:
    now = datetime.now(UTC)
    loops = {name: now - age for name, age in ages.items()}
    write_atomically(path_beside(state / "ledger.sqlite3"), beats_text(loops, now).encode())


def test_a_loop_that_stopped_turning_is_named_in_the_summary_the_line_and_the_json(
    state: Path, clock: FakeClock, capsys: pytest.CaptureFixture[str]
) -> None:
    fresh = timedelta(seconds=1)
    _beats(state, intake=fresh, dispatch=fresh, outbox=fresh, live=STALL_AFTER + timedelta(seconds=30))
    with acquire(state, ACCOUNT, AGENT, clock.now()):
        loops = status_json(capsys, state)["loops"]
        assert {name: loop["turning"] for name, loop in loops.items()} == {
            "dispatch": True, "intake": True, "live": False, "outbox": True,
        }  # fmt: skip
        _, out, _ = status(capsys, "--state-dir", str(state))
    summary, *lines = out.splitlines()
    assert summary.endswith("; NOT TURNING: live")
    (line,) = [line for line in lines if line.startswith("loops: ")]
    assert line.startswith("loops: NOT TURNING: live (last turned ")
    assert line.endswith("; turning: dispatch, intake, outbox")


def test_every_loop_turning_is_one_line_and_without_a_running_connector_nothing_is_said(
    state: Path, clock: FakeClock, capsys: pytest.CaptureFixture[str]
) -> None:
    _beats(state, intake=timedelta(0), live=timedelta(seconds=5))
    assert status_json(capsys, state)["loops"] is None  # no lock holder: the beats are history
    with acquire(state, ACCOUNT, AGENT, clock.now()):
        _, out, _ = status(capsys, "--state-dir", str(state))
    assert "loops: all turning (intake, live)" in out.splitlines()


def test_the_connectors_heartbeats_are_written_at_most_every_few_seconds_and_read_back(state: Path) -> None:
    beats = Heartbeats(SystemClock(), state / "ledger.sqlite3")
    beats.beat("intake")
    beats.write_due()
    beats.beat("live")
    beats.write_due()  # within WRITE_EVERY: not written again
    path = path_beside(state / "ledger.sqlite3")
    assert path.stat().st_mode & 0o777 == 0o600
    assert '"intake"' in path.read_text()
    assert '"live"' not in path.read_text()
