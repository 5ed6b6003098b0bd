"""The dispatcher loop and restart recovery, with a driver that behaves like a worker would."""

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from returns.result import Success

from core.settlement import LaunchFinding, ListedReplies
from core.snapshots import StopReason
from shell.dispatcher import Dispatcher, DispatchOptions, WorkerProcess
from shell.ledger import tasks
from shell.ledger.connection import Ledger
from shell.ledger.decisions import settle_launch
from shell.worker.driver import SpawnFailed
from tests.support.ledger_world import PROJECT, LedgerWorld


@dataclass(frozen=True)
class FakeProcess:
    pid: int
    pgid: int
    process_started: str


@dataclass
class FakeDriver:
    """Scripted per originating event: 'spawn_fails', 'finishes', 'fails', 'runs_until_stopped', 'ticks_then_finishes'."""

    plans: dict[int, list[str]] = field(default_factory=dict)
    spawned: list[int] = field(default_factory=list)
    released: list[int] = field(default_factory=list)
    _behaviour: dict[int, str] = field(default_factory=dict)

    def spawn(self, launch: tasks.Launch, work_dir: Path) -> WorkerProcess | SpawnFailed:
        event_id = launch.event_ids[0]
        behaviour = self.plans.get(event_id, ["finishes"]).pop(0)
        self.spawned.append(event_id)
        if behaviour == "spawn_fails":
            return SpawnFailed(launch.attempt_id, "no such program")
        self._behaviour[launch.task_id] = behaviour
        return FakeProcess(
            pid=launch.task_id + 40_000, pgid=launch.task_id + 40_000, process_started=str(launch.task_id)
        )

    def supervise(
        self, started: WorkerProcess, deadline_at: datetime, stop: threading.Event, on_tick: Callable[[], None]
    ) -> StopReason | None:
        behaviour = self._behaviour[started.pid - 40_000]
        if behaviour == "outlives_sigkill":
            return None
        if behaviour == "runs_until_stopped":
            stop.wait(10)
            return StopReason.shutdown
        if behaviour == "ticks_then_finishes":
            on_tick()
            return StopReason.finished
        return StopReason.failed if behaviour == "fails" else StopReason.finished

    def release(self, started: WorkerProcess, resumed: bool) -> None:
        self.released.append(started.pid)

    def follow_up(self, started: WorkerProcess, event_ids: tuple[int, ...]) -> tuple[int, ...]:
        return ()  # joined events wait for the worker's own get_dispatch


@dataclass
class FakeRecovery:
    verifiable: bool = True
    ended: list[int] = field(default_factory=list)

    def end_recorded_group(self, pid: int, pgid: int, process_started: str) -> bool:
        if self.verifiable:
            self.ended.append(pgid)
        return self.verifiable


def dispatcher(
    ledger: Ledger, driver: FakeDriver, recovery: FakeRecovery | None = None, concurrency: int = 2
) -> Dispatcher:
    return Dispatcher(
        ledger,
        {PROJECT: Path("/srv/project")},
        driver,
        recovery or FakeRecovery(),
        options=DispatchOptions(concurrency=concurrency),
    )


def settle_all(running: Dispatcher) -> None:
    deadline = time.monotonic() + 10
    while running.running and time.monotonic() < deadline:
        time.sleep(0.01)
    assert running.running == 0


def states(ledger: Ledger) -> dict[int, str]:
    with ledger.read() as connection:
        return dict(connection.execute("SELECT id, state FROM events"))


def test_at_most_concurrency_workers_and_one_per_directory(world: LedgerWorld, ledger: Ledger) -> None:
    for event_id in (101, 102, 103):
        world.request(event_id, recording_id=event_id)
    driver = FakeDriver({event: ["runs_until_stopped"] for event in (101, 102, 103)})
    running = Dispatcher(
        ledger,
        {PROJECT: Path("/srv/project")},
        driver,
        FakeRecovery(),
        options=DispatchOptions(concurrency=2),
    )
    assert [launch.event_ids for launch in running.tick()] == [(101,)], (
        "one project, one directory: one worker"
    )
    assert running.tick() == []
    assert running.stop(timeout=10)
    assert states(ledger)[101] == "completed"
    assert states(ledger)[102] == "admitted"


def test_a_finished_worker_is_settled_and_the_next_record_starts(world: LedgerWorld, ledger: Ledger) -> None:
    world.request(101, recording_id=9)
    world.request(102, recording_id=10)
    driver = FakeDriver({101: ["finishes"], 102: ["finishes"]})
    running = dispatcher(ledger, driver)
    running.tick()
    settle_all(running)
    running.tick()
    settle_all(running)
    assert driver.spawned == [101, 102]
    assert states(ledger)[101] == "completed", (
        "exposed and unreported: completed(unknown)"
    )
    assert len(driver.released) == 2


def test_a_worker_whose_group_outlived_sigkill_is_never_settled_around(world: LedgerWorld, ledger: Ledger) -> None:
    world.request(101)
    running = dispatcher(ledger, FakeDriver({101: ["outlives_sigkill"]}))
    assert [launch.event_ids for launch in running.tick()] == [(101,)]
    settle_all(running)
    with ledger.read() as connection:
        assert connection.execute("SELECT state, stop_reason FROM attempts").fetchall() == [("running", "")]
        assert connection.execute("SELECT COUNT(*) FROM outbox WHERE kind = 'completion'").fetchone() == (0,)
    assert states(ledger) == {101: "dispatched"}, "still carried: no redispatch, no second worker"


def test_a_spawn_that_fails_is_retried_once_then_blocked_with_a_notice(
    world: LedgerWorld, ledger: Ledger
) -> None:
    world.request(101)
    driver = FakeDriver({101: ["spawn_fails", "spawn_fails"]})
    running = dispatcher(ledger, driver)
    running.tick()
    settle_all(running)
    assert states(ledger)[101] == "admitted"
    running.tick()
    settle_all(running)
    assert driver.spawned == [101, 101]
    with ledger.read() as connection:
        assert connection.execute("SELECT state, reason FROM events").fetchone() == (
            "blocked",
            "spawn_failed",
        )
    running.tick()
    assert driver.spawned == [101, 101], "blocked: never started a third time"


def test_a_still_running_tick_writes_its_notice(world: LedgerWorld, ledger: Ledger) -> None:
    world.request(101)
    running = dispatcher(ledger, FakeDriver({101: ["ticks_then_finishes"]}))
    running.tick()
    settle_all(running)
    with ledger.read() as connection:
        kinds = [row[0] for row in connection.execute("SELECT kind FROM outbox ORDER BY id")]
    assert kinds == ["guard_ack", "still_running", "completion"]


def test_recovery_ends_a_verified_group_and_settles_its_attempt_lost(
    world: LedgerWorld, ledger: Ledger
) -> None:
    world.request(101)
    world.launch(101, "/srv/project", running_pid=4242)
    recovery = FakeRecovery()
    assert dispatcher(ledger, FakeDriver(), recovery).recover() == []
    assert recovery.ended == [4242]
    with ledger.read() as connection:
        assert connection.execute("SELECT state, stop_reason FROM attempts").fetchone() == ("ended", "lost")
    assert states(ledger)[101] == "completed"


def test_recovery_holds_an_attempt_left_mid_launch_and_starts_nothing_there(
    world: LedgerWorld, ledger: Ledger
) -> None:
    world.request(101, recording_id=9)
    world.request(102, recording_id=9)
    launch = world.launch(101, "/srv/project")
    driver = FakeDriver()
    running = dispatcher(ledger, driver)
    assert running.recover() == [launch.attempt_id]
    assert running.tick() == []
    assert driver.spawned == []
    with ledger.read() as connection:
        assert connection.execute("SELECT state FROM attempts").fetchone() == ("launching",)


def test_recovery_never_settles_around_a_group_it_cannot_verify(world: LedgerWorld, ledger: Ledger) -> None:
    world.request(101)
    launch = world.launch(101, "/srv/project", running_pid=4242)
    assert dispatcher(ledger, FakeDriver(), FakeRecovery(verifiable=False)).recover() == [launch.attempt_id]
    assert states(ledger)[101] == "dispatched"


def test_every_settlement_is_preceded_by_the_adopted_reply_rules_listing_for_its_task(
    world: LedgerWorld, ledger: Ledger
) -> None:
    world.request(101, recording_id=9)
    world.request(102, recording_id=10)
    launched = world.launch(102, "/srv/project", running_pid=4242)
    listed: list[tuple[int, bool]] = []

    def list_replies(task_id: int, stop: threading.Event) -> ListedReplies:
        with ledger.read() as connection:
            (settled,) = connection.execute(
                "SELECT superseded_at IS NOT NULL FROM tasks WHERE id = ?", (task_id,)
            ).fetchone()
        listed.append((task_id, bool(settled)))
        return ListedReplies(1, {})

    running = Dispatcher(
        ledger, {PROJECT: Path("/srv/project")}, FakeDriver({101: ["finishes"]}), FakeRecovery(),
        list_replies=list_replies,
    )
    assert running.recover() == []
    assert listed == [(launched.task_id, False)], "recovery's settlement"
    running.tick()
    settle_all(running)
    assert len(listed) == 2, "an attempt's end"
    assert not listed[1][1], "listed before its settlement"


def test_an_attempt_left_mid_launch_is_marked_and_a_persons_settlement_moves_the_project_on(
    world: LedgerWorld, ledger: Ledger
) -> None:
    world.request(101, recording_id=9)
    world.request(102, recording_id=9)
    launch = world.launch(101, "/srv/project")
    driver = FakeDriver()
    running = dispatcher(ledger, driver)
    assert running.recover() == [launch.attempt_id]
    with ledger.read() as connection:
        assert connection.execute("SELECT left_at IS NOT NULL FROM attempts").fetchone() == (1,)
    assert running.tick() == []
    settled = settle_launch(ledger, 102, LaunchFinding.did_not_run, "local:ana", ledger.clock.now())
    assert isinstance(settled, Success)
    assert states(ledger)[101] == "admitted"  # 102 joined the launch: any event of the task names it
    assert [launched.event_ids for launched in running.tick()] == [(101, 102)]
    settle_all(running)
    assert driver.spawned == [101]
    assert states(ledger)[101] == "completed"
    with ledger.read() as connection:
        assert connection.execute(
            "SELECT stop_reason, spawn_failed, settled_by, settled_as FROM attempts WHERE id = ?",
            (launch.attempt_id,),
        ).fetchone() == ("failed", 1, "local:ana", "did_not_run")


def _two_left_running(world: LedgerWorld) -> None:
    world.request(101, recording_id=9)
    world.request(102, recording_id=10)
    world.launch(101, "/srv/project", running_pid=4242)
    world.launch(102, "/srv/other", running_pid=4343)


def _attempt_states(ledger: Ledger) -> list[tuple[str, str]]:
    with ledger.read() as connection:
        return [tuple(row) for row in connection.execute("SELECT state, stop_reason FROM attempts ORDER BY pid")]


def test_a_stop_during_recoverys_reply_listing_leaves_the_attempts_live_for_the_next_start(
    world: LedgerWorld, ledger: Ledger
) -> None:
    _two_left_running(world)
    stop = threading.Event()
    listed: list[int] = []

    def list_replies(task_id: int, given: threading.Event) -> ListedReplies:
        assert given is stop, "the start's stop reaches the listing"
        listed.append(task_id)
        stop.set()  # a SIGTERM lands while the first task's replies are listed: cut short, maybe
        return ListedReplies(1, {})

    recovery = FakeRecovery()
    running = Dispatcher(
        ledger, {PROJECT: Path("/srv/project")}, FakeDriver(), recovery, list_replies=list_replies
    )
    assert running.recover(stop) == []
    assert (len(listed), recovery.ended) == (1, [4242])
    assert _attempt_states(ledger) == [("running", ""), ("running", "")], "live, exactly as they were"
    running.list_replies = lambda task_id, given: ListedReplies(1, {})
    assert running.recover(threading.Event()) == []  # the next start: the group found gone, settled
    assert _attempt_states(ledger) == [("ended", "lost"), ("ended", "lost")]


def test_recovery_given_a_stop_already_set_ends_no_group_and_settles_nothing(
    world: LedgerWorld, ledger: Ledger
) -> None:
    _two_left_running(world)
    stop = threading.Event()
    stop.set()
    listed: list[int] = []

    def list_replies(task_id: int, given: threading.Event) -> ListedReplies:
        listed.append(task_id)
        return ListedReplies(1, {})

    recovery = FakeRecovery()
    running = Dispatcher(
        ledger, {PROJECT: Path("/srv/project")}, FakeDriver(), recovery, list_replies=list_replies
    )
    assert running.recover(stop) == []
    assert (listed, recovery.ended) == ([], [])
    assert _attempt_states(ledger) == [("running", ""), ("running", "")]
