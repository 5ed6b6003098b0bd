"""Review findings, each a failing test marked xfail(strict=True) while the finding is open.

Each test states the rule it holds; the xfail reason names the finding's number in the review
report. When a finding is fixed, its test passes, strict xfail turns that into a failure, and
the marker is removed.
"""

from __future__ import annotations

import socket
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from core.destinations import Destination, MessageKind
from core.posting import Receipt
from core.snapshots import StopReason
from shell.basecamp.client import BasecampClient
from shell.clock import FakeClock
from shell.dispatcher import Dispatcher, DispatchOptions, Started
from shell.ledger import tasks
from shell.ledger.connection import Ledger, open_ledger
from shell.outbox import Outbox, OutboxOptions
from shell.worker.driver import SpawnFailed
from tests.support.fake_basecamp import AGENT_ID, FakeBasecamp
from tests.support.ledger_world import PROJECT, LedgerWorld

# -- fixtures -------------------------------------------------------------------------------


@pytest.fixture
def basecamp(clock: FakeClock) -> FakeBasecamp:
    return FakeBasecamp(clock)


@pytest.fixture
def outbox(ledger: Ledger, basecamp: FakeBasecamp) -> Outbox:
    return Outbox(ledger, basecamp, AGENT_ID, OutboxOptions())


@dataclass(frozen=True)
class FakeProcess:
    pid: int
    pgid: int
    process_started: str


@dataclass
class RecordingDriver:
    """A driver that records what was asked of it; every spawn starts a (pretend) process."""

    spawned: list[int] = field(default_factory=list)
    supervised: list[int] = field(default_factory=list)
    released: list[int] = field(default_factory=list)

    def spawn(self, launch: tasks.Launch, work_dir: Path) -> Started | SpawnFailed:
        self.spawned.append(launch.task_id)
        return FakeProcess(pid=50_000 + launch.task_id, pgid=50_000 + launch.task_id, process_started="1")

    def supervise(
        self, started: Started, deadline_at: datetime, stop: threading.Event, on_tick: Callable[[], None]
    ) -> StopReason | None:
        self.supervised.append(started.pid)
        stop.wait(5)
        return StopReason.shutdown

    def release(self, started: Started) -> None:
        self.released.append(started.pid)


@dataclass
class AlwaysGone:
    def end_recorded_group(self, pid: int, pgid: int, process_started: str) -> bool:
        return True


def _wait_until(condition: Callable[[], bool], seconds: float = 5.0) -> None:
    until = time.monotonic() + seconds
    while not condition() and time.monotonic() < until:
        time.sleep(0.01)


def _still_running_posts(basecamp: FakeBasecamp, destination: Destination) -> list[str]:
    return [m.text for m in basecamp.messages_at(destination) if "Working on this as of" in m.text]


def _finished_work_with_a_live_attempt(world: LedgerWorld, ledger: Ledger) -> str:
    """Event 101 launched, pulled and reported succeeded with a reply; its attempt still live,
    with one still-running notice written and due."""
    world.request(101)
    with ledger.write() as connection:
        launch = tasks.launch(
            connection,
            101,
            work_dir="/srv/project",
            driver="test",
            deadline_at=ledger.clock.now() + timedelta(hours=1),
            now=ledger.clock.now(),
        )
        tasks.mark_running(
            connection, launch.attempt_id, pid=4242, pgid=4242, process_started="77", now=ledger.clock.now()
        )
    world.get_dispatch(launch.task_id, 101)  # cancels the guard
    world.tick(launch.attempt_id)  # still-running notice, due now
    world.report(launch.task_id, 101, "succeeded", reply_id=9_001, ack_id=9_000)
    return launch.attempt_id


REPLY_DESTINATION = Destination(MessageKind.comment, PROJECT, 1_000_101)


# -- finding 1 ------------------------------------------------------------------------------
# Fixed: a still-running notice is claimed only while some instruction of its task is not yet
# reported (core.claim rule 4). What stays open is narrower and cannot be closed by any check:
# work reported *while the request is on the wire* (tests/sim, the claim-to-request window).


def test_a_still_running_notice_stands_down_when_its_work_was_reported_before_the_claim(
    world: LedgerWorld, ledger: Ledger, basecamp: FakeBasecamp, outbox: Outbox
) -> None:
    _finished_work_with_a_live_attempt(world, ledger)
    outbox.flush()
    with ledger.read() as connection:
        assert connection.execute("SELECT state, note FROM outbox WHERE kind = 'still_running'").fetchall() == [
            ("canceled", "every instruction was reported before the notice went out")
        ]
    # The connector's last word on finished work is not "still working on this".
    assert _still_running_posts(basecamp, REPLY_DESTINATION) == []


# -- finding 2 ------------------------------------------------------------------------------
# Fixed: Outbox.start passes over still-running notices (shell.outbox rule 9); recovery decides.


def test_a_restart_does_not_post_still_running_for_an_attempt_recovery_is_about_to_end(
    world: LedgerWorld, ledger: Ledger, basecamp: FakeBasecamp
) -> None:
    world.request(101)
    launch = world.launch(101, work_dir="/srv/project", running_pid=4242)
    world.get_dispatch(launch.task_id, 101)
    world.tick(launch.attempt_id)  # still-running notice, due now; the work is not reported
    # The connector was SIGKILLed here; a new one starts in the design's order: outbox.start
    # (reconcile, send), then dispatcher.recover, then the running flushes.
    outbox = Outbox(ledger, basecamp, AGENT_ID, OutboxOptions())
    dispatcher = Dispatcher(ledger, {PROJECT: Path("/srv/project")}, RecordingDriver(), AlwaysGone())
    outbox.start(deadline=ledger.clock.monotonic() + 30)
    with ledger.read() as connection:
        assert connection.execute("SELECT state FROM outbox WHERE kind = 'still_running'").fetchall() == [
            ("pending",)
        ], "passed over at start, untouched"
    assert dispatcher.recover() == []
    outbox.flush()
    with ledger.read() as connection:
        assert connection.execute(
            "SELECT stop_reason FROM attempts WHERE id = ?", (launch.attempt_id,)
        ).fetchone() == ("lost",)
        assert connection.execute("SELECT state FROM outbox WHERE kind = 'still_running'").fetchall() == [
            ("canceled",)
        ]
    assert _still_running_posts(basecamp, REPLY_DESTINATION) == []


# -- finding 3 ------------------------------------------------------------------------------


def test_a_spawned_worker_is_never_left_unsupervised_when_the_ledger_fails(
    world: LedgerWorld, ledger: Ledger, monkeypatch: pytest.MonkeyPatch
) -> None:
    world.request(101)

    def ledger_fails(*args: object, **kwargs: object) -> None:
        raise sqlite3.OperationalError("disk I/O error")

    monkeypatch.setattr(tasks, "mark_running", ledger_fails)
    driver = RecordingDriver()
    dispatcher = Dispatcher(ledger, {PROJECT: Path("/srv/project")}, driver, AlwaysGone())
    assert len(dispatcher.tick()) == 1
    _wait_until(lambda: dispatcher.running == 0)
    assert driver.spawned == [1]
    # The connector carried on: its slot is free, stop() has nothing to stop and says all settled.
    assert dispatcher.stop(timeout=1) is True
    # The rule: a worker process that exists is supervised to its end (deadline, shutdown), or the
    # connector stops. Here it was neither supervised nor ended.
    assert driver.supervised == [50_001]


# -- finding 4 ------------------------------------------------------------------------------


def test_a_busy_ledger_does_not_end_the_outbox_loop(ledger_path: Path, clock: FakeClock) -> None:
    with open_ledger(ledger_path, clock=clock, busy_timeout=0.1) as ledger:
        outbox = Outbox(ledger, FakeBasecamp(clock), AGENT_ID, OutboxOptions(tick=timedelta(seconds=0.01)))
        stop = threading.Event()
        errors: list[BaseException] = []

        def run() -> None:
            try:
                outbox.run(stop)
            except BaseException as error:
                errors.append(error)

        other = sqlite3.connect(ledger_path, isolation_level=None, timeout=0)
        other.execute("BEGIN IMMEDIATE")  # bin/outbox-resolve or the MCP server holding the lock
        thread = threading.Thread(target=run, daemon=True)
        thread.start()
        time.sleep(0.6)
        other.execute("ROLLBACK")
        other.close()
        time.sleep(0.2)
        alive = thread.is_alive()
        stop.set()
        thread.join(2)
    assert errors == []
    assert alive


# -- finding 5 ------------------------------------------------------------------------------


def _trickling_server(seconds: float) -> tuple[int, threading.Thread]:
    """A server that reads a request, then answers one byte every 0.2 s for ``seconds``."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    port = listener.getsockname()[1]

    def serve() -> None:
        connection, _ = listener.accept()
        connection.recv(65536)
        answer = b"HTTP/1.1 201 Created\r\nContent-Type: application/json\r\n"
        answer += b"X-Pad: " + b"a" * int(seconds / 0.2) + b"\r\n"
        try:
            for byte in answer:
                connection.sendall(bytes([byte]) if byte != ord("a") else b"a")
                if byte == ord("a"):
                    time.sleep(0.2)
            connection.sendall(b'Content-Length: 9\r\n\r\n{"id": 1}')
        except OSError:
            pass
        finally:
            connection.close()
            listener.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    return port, thread


def test_a_create_never_outlives_its_deadline() -> None:
    port, server = _trickling_server(seconds=4.0)
    client = BasecampClient(f"http://127.0.0.1:{port}", 1, "secret-token", "review (review@example.com)")
    started = time.monotonic()
    outcome = client.post(Destination(MessageKind.comment, 1, 2), "<div>hi</div>", deadline=started + 1.0)
    elapsed = time.monotonic() - started
    server.join(6)
    assert elapsed < 1.5, f"the request ran {elapsed:.1f} s past a 1 s deadline (outcome {outcome})"
    assert not isinstance(outcome, Receipt)


# -- finding 6 ------------------------------------------------------------------------------


class _RoutesThatStopMidTick(Mapping[int, Path]):
    """Routes whose lookup lets stop() run at the point a tick has passed its shutdown check."""

    def __init__(self, work_dir: Path) -> None:
        self.work_dir = work_dir
        self.dispatcher: Dispatcher | None = None
        self.stopped: bool | None = None

    def __getitem__(self, key: int) -> Path:
        if self.dispatcher is not None and self.stopped is None:
            self.stopped = self.dispatcher.stop(timeout=0.2)
        return self.work_dir

    def __iter__(self) -> Iterator[int]:
        return iter([PROJECT])

    def __len__(self) -> int:
        return 1


def test_nothing_is_launched_after_stop_reports_every_worker_settled(
    world: LedgerWorld, ledger: Ledger
) -> None:
    world.request(101)
    routes = _RoutesThatStopMidTick(Path("/srv/project"))
    driver = RecordingDriver()
    dispatcher = Dispatcher(ledger, routes, driver, AlwaysGone(), options=DispatchOptions())
    routes.dispatcher = dispatcher
    dispatcher.tick()
    assert routes.stopped is True  # "every worker stopped and settled"
    _wait_until(lambda: dispatcher.running == 0)
    assert driver.spawned == []
