"""`bin/connect run` under a service manager's notify socket, as a real process against the
stand-in, the socket a real AF_UNIX datagram socket: each step of the start said in ``STATUS=``,
``READY=1`` only once the start settled, ``WATCHDOG=1`` every half ``WATCHDOG_USEC`` while every
loop turns and none once one stalls (the outbox paused at a crashpoint), ``STOPPING=1`` at SIGTERM;
and a ``NOTIFY_SOCKET`` that is not a socket refused in one line, exit 3, nothing asked or opened."""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
import uuid
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

from shell.basecamp.standin.faults import Fault, FaultAction
from shell.basecamp.standin.server import StandIn
from shell.errors import EXIT_CONFIG
from tests.service.notify_socket import Datagram, NotifySocket
from tests.support.configured import POLL_SECONDS, REPOSITORY, configure_connector

pytestmark = pytest.mark.slow

STALL_SECONDS = 8.0  # the stall bound the watchdog judges by here (CONNECTOR_STALL_AFTER)


@pytest.fixture
def standin() -> Iterator[StandIn]:
    with StandIn(world="demo") as server:
        yield server


def _start(state: Path, notify: str, **more: str) -> subprocess.Popen[str]:
    environment = {key: value for key, value in os.environ.items()
                   if key not in ("CONNECTOR_PAUSE_AT", "NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID")}
    environment.update({"NOTIFY_SOCKET": notify, **more})
    return subprocess.Popen(
        [str(REPOSITORY / "bin" / "connect"), "run", "--state-dir", str(state), "--poll-seconds", str(POLL_SECONDS),
         "--no-live"], env=environment, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip


def _lines(stream: object, into: list[str]) -> threading.Thread:
    def read() -> None:
        for line in stream:  # type: ignore[attr-defined]
            into.append(line)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    return reader


def _stop(process: subprocess.Popen[str]) -> None:
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=60)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def test_ready_comes_once_the_start_settled_each_step_on_the_way_and_stopping_at_sigterm(
    standin: StandIn, tmp_path: Path
) -> None:
    state = configure_connector(standin, tmp_path, worker=("true",))
    standin.add_fault(Fault(FaultAction.hang, method="GET", path_contains="events.json", delay=6))
    with NotifySocket(f"@connector-test-{uuid.uuid4().hex}") as manager:  # the abstract namespace
        process = _start(state, manager.variable)
        out: list[str] = []
        _lines(process.stdout, out)
        try:
            feed = manager.first_with("STATUS=starting: feed")
            time.sleep(3)  # the start's first feed read hangs 6 s
            assert manager.with_assignment("READY=1") == [], "ready while the start's feed read hangs"
            ready = manager.first_with("READY=1")
            assert ready.at - feed.at > 5
            assert [line for line in out if line.startswith("running ")], "READY before the running line"
            assert any(a.startswith("STATUS=running account=") for a in ready.assignments)
            process.send_signal(signal.SIGTERM)
            assert process.wait(timeout=60) == 0
        finally:
            _stop(process)
        texts = [datagram.text for datagram in manager.received()]
    steps = [text.removeprefix("STATUS=starting: ") for text in texts if text.startswith("STATUS=starting: ")]
    assert steps == ["reconcile", "sweep", "recover", "send", "admit", "feed"]
    assert texts[0] == "STATUS=starting"
    assert texts.index(ready.text) > texts.index("STATUS=starting: feed")
    assert "STOPPING=1\nSTATUS=stopping" in texts[texts.index(ready.text):]
    assert not any("WATCHDOG=1" in text for text in texts), "no WATCHDOG_USEC, no pings"


def test_the_watchdog_is_pinged_while_every_loop_turns_and_not_once_the_outbox_stalls(
    standin: StandIn, tmp_path: Path
) -> None:
    state = configure_connector(standin, tmp_path, worker=("true",))
    unrouted = standin.world.projects[1].recording_ids[0]
    with NotifySocket(str(tmp_path / "notify")) as manager:  # a path
        process = _start(state, manager.variable, WATCHDOG_USEC="1000000", CONNECTOR_PAUSE_AT="after_claim",
                         CONNECTOR_STALL_AFTER=str(STALL_SECONDS))
        errors: list[str] = []
        _lines(process.stderr, errors)
        try:
            ready = manager.first_with("READY=1")
            time.sleep(3)
            pings = [d for d in manager.with_assignment("WATCHDOG=1") if d.at > ready.at]
            assert len(pings) >= 4, "pinged every half second while every loop turns"
            standin.mention(standin.world.people[0], unrouted, "can you look at this?")  # a holding reply
            deadline = time.monotonic() + 30
            while not any("paused at after_claim" in line for line in errors):
                assert time.monotonic() < deadline, "".join(errors)[-2000:]
                time.sleep(0.05)
            paused = time.monotonic()
            stalled = _first_status_with(manager, "NOT TURNING", timeout=STALL_SECONDS + 10)
            assert "NOT TURNING: outbox (no watchdog ping)" in stalled.text
            time.sleep(3)  # six intervals of pinging
            late = [d for d in manager.with_assignment("WATCHDOG=1") if d.at > stalled.at]
            assert late == [], "pinged while the outbox loop stands still"
            before = [d for d in manager.with_assignment("WATCHDOG=1") if d.at > paused]
            assert before != [], "the other loops went on: pinged until the outbox's beat went stale"
            assert process.poll() is None, "the connector's work goes on; systemd is the one to restart it"
        finally:
            _stop(process)


def _first_status_with(manager: NotifySocket, text: str, timeout: float) -> Datagram:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for datagram in manager.received():
            if any(a.startswith("STATUS=") and text in a for a in datagram.assignments):
                return datagram
        time.sleep(0.05)
    raise AssertionError(f"no STATUS with {text!r}: {[d.text for d in manager.received()]}")


def _refused(state: Path, variable: str, standin: StandIn) -> tuple[int, str]:
    asked = len(standin.requests())
    process = _start(state, variable)
    try:
        out, errors = process.communicate(timeout=30)
    finally:
        _stop(process)  # one that started after all is stopped, never left behind
    assert out == ""
    assert len(standin.requests()) == asked, "Basecamp was asked"
    assert not (state / "heartbeats").exists(), "the start began"
    return process.returncode, errors


@pytest.mark.parametrize("kind", ["file", "missing", "relative", "abstract nobody bound"])
def test_a_notify_socket_that_is_not_a_socket_is_one_line_and_exit_3_with_nothing_started(
    standin: StandIn, tmp_path: Path, kind: str
) -> None:
    state = configure_connector(standin, tmp_path, worker=("true",))
    ledger = state / "ledger.sqlite3"
    before = ledger.stat().st_mtime_ns if ledger.exists() else None
    variables: Mapping[str, str] = {
        "file": str(tmp_path / "token"), "missing": str(tmp_path / "gone"), "relative": "run/notify\x1b",
        "abstract nobody bound": f"@connector-test-{uuid.uuid4().hex}",
    }  # fmt: skip
    code, errors = _refused(state, variables[kind], standin)
    assert code == EXIT_CONFIG, errors
    (line,) = errors.splitlines()
    assert line.startswith("error: NOTIFY_SOCKET=")
    assert "is not a socket" in line
    assert "not started" in line
    assert "\x1b" not in line
    assert (ledger.stat().st_mtime_ns if ledger.exists() else None) == before, "the ledger was touched"
