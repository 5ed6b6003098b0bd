"""Pretend workers for dispatcher tests: a driver that records what it was asked and starts
nothing, and a recovery that finds every recorded group gone."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from core.snapshots import StopReason
from shell.dispatcher import WorkerProcess
from shell.ledger import tasks
from shell.worker.driver import SpawnFailed


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

    def spawn(self, launch: tasks.Launch, work_dir: Path) -> WorkerProcess | SpawnFailed:
        self.spawned.append(launch.task_id)
        return FakeProcess(pid=50_000 + launch.task_id, pgid=50_000 + launch.task_id, process_started="1")

    def supervise(
        self, started: WorkerProcess, deadline_at: datetime, stop: threading.Event, on_tick: Callable[[], None]
    ) -> StopReason | None:
        self.supervised.append(started.pid)
        stop.wait(5)
        return StopReason.shutdown

    def release(self, started: WorkerProcess, resumed: bool) -> None:
        self.released.append(started.pid)

    def follow_up(self, started: WorkerProcess, event_ids: tuple[int, ...]) -> tuple[int, ...]:
        return ()  # a pretend worker takes no turns: joined events wait to be pulled


@dataclass
class AlwaysGone:
    def end_recorded_group(self, pid: int, pgid: int, process_started: str) -> bool:
        return True


def wait_until_or_timeout(condition: Callable[[], bool], seconds: float = 5.0) -> None:
    until = time.monotonic() + seconds
    while not condition() and time.monotonic() < until:
        time.sleep(0.01)
