"""The dispatcher when the ledger fails or a stop lands mid-tick: a spawned worker is always
supervised, and nothing launches after stop said every worker settled. Found in review, each a
test that failed before its fix."""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import pytest

from core.snapshots import StopReason
from shell.dispatcher import Dispatcher, DispatchOptions, Started
from shell.ledger import tasks
from shell.ledger.connection import Ledger
from shell.worker.driver import SpawnFailed
from tests.support.ledger_world import PROJECT, LedgerWorld


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
