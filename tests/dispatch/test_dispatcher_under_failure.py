"""The dispatcher when the ledger fails or a stop lands mid-tick: a spawned worker is always
supervised, and nothing launches after stop said every worker settled. Found in review, each a
test that failed before its fix."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

from shell.dispatcher import Dispatcher, DispatchOptions
from shell.ledger import tasks
from shell.ledger.connection import Ledger
from tests.support.ids import nth_task
from tests.support.ledger_world import PROJECT, LedgerWorld
from tests.support.pretend_workers import AlwaysGone, RecordingDriver, wait_until_or_timeout


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
    wait_until_or_timeout(lambda: dispatcher.running == 0)
    assert driver.spawned == [nth_task(1)]
    # The connector carried on: its slot is free, stop() has nothing to stop and says all settled.
    assert dispatcher.stop(timeout=1) is True
    # The rule: a worker process that exists is supervised to its end (deadline, shutdown), or the
    # connector stops. Here it was neither supervised nor ended.
    assert driver.supervised == [50_000 + nth_task(1)]


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
    wait_until_or_timeout(lambda: dispatcher.running == 0)
    assert driver.spawned == []
