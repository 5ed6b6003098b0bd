"""A SIGTERM while `bin/connect run`'s start lists a destination, as real processes against the
stand-in, whose listing of that destination hangs (``shell.connector``): the start stops
at once, within the shutdown's bound, never printing ``running``; what it had not settled is
exactly as it was (an intent sending stays sending, failures uncounted; an attempt live); exit 0
and stderr says it stopped during the start. The next start settles it -- never posting again."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from collections.abc import Iterator
from contextlib import suppress
from pathlib import Path

import pytest

from shell.basecamp.standin.faults import Fault, FaultAction
from shell.basecamp.standin.server import StandIn
from shell.ledger.connection import open_ledger_read_only
from tests.support.child import wait_until
from tests.support.configured import POLL_SECONDS, configure_connector

pytestmark = pytest.mark.slow
REPOSITORY = Path(__file__).resolve().parents[2]
SHUTDOWN_SECONDS = 2
HANG_SECONDS = 120  # a listing's own bound is 30 s: without the stop, the start would wait for it


@pytest.fixture
def standin() -> Iterator[StandIn]:
    with StandIn(world="demo") as server:
        yield server


def test_sigterm_during_the_starts_reconciliation_listing_leaves_the_intent_sending_for_the_next_start(
    standin: StandIn, tmp_path: Path
) -> None:
    state = configure_connector(standin, tmp_path, "--reconcile-after", "1s")
    unrouted = standin.world.projects[1].recording_ids[0]  # a mention there is a holding reply
    comments = f"/recordings/{unrouted}/comments"
    standin.add_fault(Fault(FaultAction.create_then_delay, method="POST", path_contains=comments, delay=HANG_SECONDS))
    first = _run(state)
    try:
        assert _first_line(first).startswith("running account=")
        standin.mention(standin.world.people[0], unrouted, "can you look at this?")
        wait_until(lambda: _requests(standin, "POST", comments) == 1)
    finally:
        _stop(first)  # the POST's answer never comes: the previous process leaves it sending
    before = _intents(state)
    assert [row[:3] for row in before] == [("holding_reply", "sending", 0)]
    time.sleep(1.5)  # older than --reconcile-after: the next start lists its destination
    standin.add_fault(Fault(FaultAction.hang, method="GET", path_contains=f"{comments}.json", delay=HANG_SECONDS))
    stopped = _run(state)
    try:
        wait_until(lambda: _requests(standin, "GET", f"{comments}.json") == 1, timeout=60)
    finally:
        output, errors, took = _stop(stopped)
    assert stopped.returncode == 0, errors[-2000:]
    assert took < SHUTDOWN_SECONDS + 2, f"the stop took {took:.1f} s"
    assert "running" not in output, "the start never finished"
    assert "stopped during the start (reconcile)" in errors, errors[-2000:]
    assert errors.rstrip().endswith("stopped")
    assert _intents(state) == before, "sending stays sending, its failures uncounted"
    restarted = _run(state)
    try:
        assert _first_line(restarted).startswith("running account=")
        wait_until(lambda: [row[:2] for row in _intents(state)] == [("holding_reply", "sent")], timeout=30)
    finally:
        _stop(restarted)
    assert _requests(standin, "POST", comments) == 1, "adopted at the next start, never posted again"


def test_sigterm_during_recoverys_reply_listing_leaves_the_attempt_live_for_the_next_start(
    standin: StandIn, tmp_path: Path
) -> None:
    scenes = tmp_path / "scenes.json"
    scenes.write_text("{}")
    state = configure_connector(standin, tmp_path, scenes=scenes)
    card = standin.world.projects[0].recording_ids[0]
    listing = f"/recordings/{card}/comments.json"
    first = _run(state)
    try:
        assert _first_line(first).startswith("running account=")
        event = standin.mention(standin.world.people[0], card, "please take a look")
        scenes.write_text(json.dumps({str(event): "hang_after_ack"}))  # acknowledges, then runs on
        wait_until(lambda: _acknowledged(state), timeout=60)
    finally:
        first.kill()  # the connector dies; its worker runs on, for recovery to end
        first.communicate(timeout=30)
    try:
        (before,) = _attempts(state)
        assert before[0] == "running"
        standin.add_fault(Fault(FaultAction.hang, method="GET", path_contains=listing, delay=HANG_SECONDS))
        stopped = _run(state)
        try:
            wait_until(lambda: _requests(standin, "GET", listing) == 1, timeout=60)
        finally:
            output, errors, took = _stop(stopped)
        assert stopped.returncode == 0, errors[-2000:]
        assert took < SHUTDOWN_SECONDS + 2, f"the stop took {took:.1f} s"
        assert "running" not in output, "the start never finished"
        assert "stopped during the start (recover)" in errors, errors[-2000:]
        assert _attempts(state) == [before], "live as it was: its listing was cut short"
        restarted = _run(state)
        try:
            assert _first_line(restarted).startswith("running account=")
            wait_until(lambda: [row[:2] for row in _attempts(state)] == [("ended", "lost")], timeout=30)
        finally:
            _stop(restarted)
        assert _requests(standin, "GET", listing) == 2, "listed whole at the next start"
    finally:
        _end_worker(state)


def _run(state: Path) -> subprocess.Popen[str]:
    environment = {key: value for key, value in os.environ.items() if key != "CONNECTOR_PAUSE_AT"}
    return subprocess.Popen(
        [
            str(REPOSITORY / "bin" / "connect"), "--verbose", "run", "--state-dir", str(state),
            "--poll-seconds", str(POLL_SECONDS), "--shutdown-seconds", str(SHUTDOWN_SECONDS),
        ],
        env=environment, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip


def _first_line(process: subprocess.Popen[str]) -> str:
    assert process.stdout is not None
    return process.stdout.readline()


def _stop(process: subprocess.Popen[str]) -> tuple[str, str, float]:
    """SIGTERM, then its output and how long it took to exit (killed after 60 s: a failure)."""
    asked = time.monotonic()
    process.send_signal(signal.SIGTERM)
    try:
        output, errors = process.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        process.kill()
        output, errors = process.communicate(timeout=30)
    return output, errors, time.monotonic() - asked


def _requests(standin: StandIn, method: str, path: str) -> int:
    return sum(1 for request in standin.requests() if request.method == method and path in request.path)


def _intents(state: Path) -> list[tuple[object, ...]]:
    with open_ledger_read_only(state / "ledger.sqlite3") as ledger, ledger.read() as connection:
        return [
            tuple(row)
            for row in connection.execute(
                "SELECT kind, state, reconcile_failures, reconcile_at, sending_at, receipt_id FROM outbox"
            )
        ]


def _attempts(state: Path) -> list[tuple[object, ...]]:
    with open_ledger_read_only(state / "ledger.sqlite3") as ledger, ledger.read() as connection:
        return [tuple(row) for row in connection.execute("SELECT state, stop_reason, pid, pgid FROM attempts")]


def _acknowledged(state: Path) -> bool:
    with open_ledger_read_only(state / "ledger.sqlite3") as ledger, ledger.read() as connection:
        row = connection.execute("SELECT count(*) FROM task_events WHERE ack_id IS NOT NULL").fetchone()
        running = connection.execute("SELECT count(*) FROM attempts WHERE state = 'running'").fetchone()
    return bool(row[0]) and bool(running[0])


def _end_worker(state: Path) -> None:
    """The worker this test's connector started, if a failure left it running (its own group)."""
    for attempt_state, _, _, pgid in _attempts(state):
        if attempt_state != "ended" and isinstance(pgid, int):
            with suppress(ProcessLookupError, PermissionError):
                os.killpg(pgid, signal.SIGKILL)
