"""`bin/connect status` names what a running connector is stuck on before its loops turn: a start
that never finished (its step, written as it begins, older than ``STALL_AFTER``) and a live lane
connecting for longer than a connect takes (``CONNECT_WITHIN``) -- found where a trickling
Basecamp held the start's read and the stream ticket while status said nothing, or "all turning"."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from core.heartbeats import STALL_AFTER, StartStep, beats_text, read_beats, start_line
from core.intake_status import CONNECT_WITHIN, LaneState, LaneStatus, lane_line, stuck_connecting
from core.timestamps import format_timestamp
from shell.clock import FakeClock, SystemClock
from shell.heartbeats import Heartbeats, path_beside
from shell.ledger.connection import Ledger
from shell.ledger.intake import write_lane_state
from shell.private_files import write_atomically
from shell.state.lock import acquire
from tests.status.test_status_ledger import ACCOUNT, AGENT, state, status, status_json

__all__ = ["state"]  # the fixture, shared
NOW = datetime(2026, 12, 7, 6, 0, tzinfo=UTC)


def _short(stamp: str) -> str:
    return stamp[11:16]


def test_a_lane_connecting_longer_than_a_connect_takes_is_stuck_only_while_judged() -> None:
    since = format_timestamp(NOW - CONNECT_WITHIN - timedelta(seconds=1))
    lane = LaneStatus(LaneState.connecting, since, "", 3, 0)
    assert stuck_connecting(lane, NOW)
    assert lane_line(lane, _short, now=NOW).startswith("live lane: STUCK connecting since 05:58, longer than")
    assert lane_line(lane, _short) == "live lane: connecting since 05:58 (3 connects, 0 overflows); intake polls" \
        " meanwhile", "without a running connector the state is history"
    fresh = LaneStatus(LaneState.connecting, format_timestamp(NOW - CONNECT_WITHIN), "", 3, 0)
    assert not stuck_connecting(fresh, NOW)
    assert not stuck_connecting(LaneStatus(LaneState.down, since, "why", 3, 0), NOW)


def test_a_start_step_older_than_the_stall_bound_never_finished() -> None:
    under_way = read_beats(beats_text({}, NOW, StartStep("reconcile", NOW - STALL_AFTER)))
    assert under_way is not None
    assert under_way.start == StartStep("reconcile", NOW - STALL_AFTER)
    assert start_line(under_way, NOW) == "start: under way, in its reconcile step since 2026-12-07T05:57:00Z"
    stuck = read_beats(beats_text({}, NOW, StartStep("feed", NOW - STALL_AFTER - timedelta(seconds=1))))
    assert stuck is not None
    assert start_line(stuck, NOW) == ("start: NEVER FINISHED: in its feed step since 2026-12-07T05:56:59Z,"
                                      " longer than 180 s (see its log)")
    over = read_beats(beats_text({"intake": NOW}, NOW))
    assert over is not None
    assert start_line(over, NOW) is None


def test_status_names_a_start_that_never_finished_and_a_lane_stuck_connecting(
    state: Path, ledger: Ledger, clock: FakeClock, capsys: pytest.CaptureFixture[str]
) -> None:
    now = datetime.now(UTC)
    with ledger.write() as connection:
        write_lane_state(connection, LaneState.connecting, "", format_timestamp(now - timedelta(minutes=5)))
    text = beats_text({}, now, StartStep("feed", now - STALL_AFTER - timedelta(seconds=5)))
    write_atomically(path_beside(state / "ledger.sqlite3"), text.encode())
    with acquire(state, ACCOUNT, AGENT, clock.now()):
        shown = status_json(capsys, state)
        _, out, _ = status(capsys, "--state-dir", str(state))
    assert shown["start"]["step"] == "feed"
    assert shown["start"]["finishing"] is False
    assert shown["live_lane_stuck"] is True
    summary, *lines = out.splitlines()
    assert summary.endswith("; live lane STUCK connecting; the start NEVER FINISHED")
    assert any(line.startswith("start: NEVER FINISHED: in its feed step since ") for line in lines)
    assert any(line.startswith("live lane: STUCK connecting since ") for line in lines)
    assert not any(line.startswith("loops: ") for line in lines), "no loop runs before the start is over"


def test_each_start_step_is_written_as_it_begins_and_cleared_once_the_start_is_over(state: Path) -> None:
    beats = Heartbeats(SystemClock(), state / "ledger.sqlite3")
    path = path_beside(state / "ledger.sqlite3")
    beats.starting("reconcile")
    beats.starting("recover")  # within WRITE_EVERY, and written all the same
    shown = read_beats(path.read_bytes())
    assert shown is not None
    assert shown.start is not None
    assert shown.start.step == "recover"
    beats.starting(None)
    beats.beat("intake")
    beats.write_due()  # run's first, once the loops beat
    over = read_beats(path.read_bytes())
    assert over is not None
    assert over.start is None
