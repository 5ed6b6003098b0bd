"""The dispatcher: start the oldest startable record of each free conversation, supervise its
worker, and settle the attempt when it ends.

Rules:
1. ``recover()`` runs before anything is dispatched, given the start's stop: it takes each
   attempt a previous connector left live one step at a time, as ``core.settlement.recovery_step`` answers.
2. At most ``concurrency`` workers run. Each tick, follow-ups join their live task first (the
   driver gives the running worker a turn, ``follow_up``; a turn it could not give leaves the
   event unpulled); then the oldest startable records of free conversations start.
3. A launch is committed (task, attempt ``launching``, exposure) before the driver starts
   anything; the process is recorded (``running``) as soon as it exists.
4. An attempt ends in one transaction (``shell.ledger.tasks.end_attempt``). ``spawn_failed`` is
   only a spawn proved never to have started a process, or a worker whose account proves it
   never began (``WorkerAccount.not_started``); the reason and result are recorded.
5. ``stop()`` stops (``shutdown``) and settles every worker within its bound.
6. A process group that kept members after SIGKILL (supervision answers None) is not settled:
   attempt live, record dispatched, conversation held, so nothing -- not even a redispatch --
   starts a second worker beside it. It is logged for a person; the next start's recovery decides.
7. ``routes`` is replaced whole when the configuration is re-read; a tick reads it once, so a
   record starts by the old routes or the new, and a project without one starts nothing.
8. Before a settlement, ``list_replies`` lists what the adopted-reply rule reads, outside any
   transaction (``shell.adopted_replies``); the settlement adopts from it in its own. The listing
   is given the shutdown's event: once a shutdown begins nothing more is listed or waited for,
   so the attempt settles with its real reason in bound, adopting nothing unlisted.
9. A worker's life is three steps, each its own transaction(s): ``spawned``, ``still_running``
   (a tick), ``supervised``. ``_start`` runs them on a thread of its own; ``tests/sim/whole``
   runs the same steps interleaved on one thread."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from pathlib import Path
from typing import Protocol

from core.settlement import ListedReplies, RecoveryFacts, RecoveryStep, recovery_step
from core.snapshots import StopReason
from core.worker_stream import WorkerAccount
from shell.crashpoints import pause_at
from shell.ledger import tasks
from shell.ledger.connection import Ledger
from shell.worker.driver import SpawnFailed

log = logging.getLogger("connector.dispatch")


class WorkerProcess(Protocol):
    """A worker process that exists."""

    @property
    def pid(self) -> int: ...
    @property
    def pgid(self) -> int: ...
    @property
    def process_started(self) -> str: ...


class WorkerDriver(Protocol):
    def spawn(self, launch: tasks.Launch, work_dir: Path) -> WorkerProcess | SpawnFailed: ...
    def supervise(
        self,
        started: WorkerProcess,
        deadline_at: datetime,
        stop: threading.Event,
        on_tick: Callable[[], None],
    ) -> StopReason | WorkerAccount | None:
        """Why the worker ended (its driver's account, when it keeps one); None when members of
        its group outlived SIGKILL (rule 6)."""
        ...

    def release(self, started: WorkerProcess) -> None: ...
    def follow_up(self, started: WorkerProcess, event_ids: tuple[int, ...]) -> tuple[int, ...]:
        """Give the running worker a turn for each event that joined its task; those given."""
        ...


class GroupEnder(Protocol):
    """How recovery ends a process group a previous connector left: ``shell.processes``."""

    def end_recorded_group(self, pid: int, pgid: int, process_started: str) -> bool:
        """True when the group is gone (ended, or was already); False when it cannot be verified."""
        ...


@dataclass(frozen=True, slots=True)
class DispatchOptions:
    concurrency: int = 2
    task_deadline: timedelta = timedelta(hours=1)
    tick: timedelta = timedelta(seconds=1)
    driver_name: str = "command"


@dataclass
class _Running:
    launch: tasks.Launch
    work_dir: str
    thread: threading.Thread
    started: WorkerProcess | None = None


@dataclass
class Dispatcher:
    ledger: Ledger
    routes: Mapping[int, Path]
    driver: WorkerDriver
    recovery: GroupEnder
    options: DispatchOptions = field(default_factory=DispatchOptions)
    list_replies: Callable[[int, threading.Event | None], ListedReplies] | None = None  # rule 8
    _running: dict[int, _Running] = field(default_factory=dict)
    _shutdown: threading.Event = field(default_factory=threading.Event)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    # -- restart ---------------------------------------------------------------------------

    def recover(self, stop: threading.Event | None = None) -> list[str]:
        """Settle what a previous connector left running, until ``stop`` (rule 1), each step the
        one ``core.settlement.recovery_step`` answers; the attempts left for a person."""
        held: list[str] = []
        with self.ledger.read() as connection:
            live = tasks.live_attempts(connection)
        for index, attempt in enumerate(live):
            replies: ListedReplies | None = None
            found = RecoveryFacts(attempt.pid is not None and attempt.pgid is not None, stopped=False)
            while True:
                found = replace(found, stopped=stop is not None and stop.is_set())
                step = recovery_step(found)
                if step is RecoveryStep.leave_live:
                    _left_live(live[index:])
                    return held
                if step is RecoveryStep.end_group:
                    found = replace(found, group_gone=self._end_group(attempt))
                elif step is RecoveryStep.list_replies:
                    replies = self._replies(attempt.task_id, stop)
                    found = replace(found, listed=True)
                else:
                    self._recovered(attempt, step, replies)
                    if step is not RecoveryStep.settle_lost:
                        held.append(attempt.attempt_id)
                    break
        return held

    def _end_group(self, attempt: tasks.LiveAttemptRow) -> bool:
        """Recovery's ending of ``attempt``'s recorded group: True when it is gone (rule 1)."""
        assert attempt.pid is not None, "recovery_step ends only a recorded group"
        assert attempt.pgid is not None, "recovery_step ends only a recorded group"
        return self.recovery.end_recorded_group(attempt.pid, attempt.pgid, attempt.process_started)

    def _recovered(
        self, attempt: tasks.LiveAttemptRow, step: RecoveryStep, replies: ListedReplies | None
    ) -> None:
        """Recovery's last step for ``attempt``: marked left, held, or settled lost."""
        if step is RecoveryStep.mark_left:
            with self.ledger.write() as connection:
                tasks.mark_left(connection, attempt.attempt_id, self.ledger.clock.now())
            log.warning(
                "attempt %s was left mid-launch with no recorded process: its conversation stays held;"
                " a person must check for a worker still running for task %d, then settle it"
                " (bin/connect status says how: bin/connect settle-launch EVENT --ran|--did-not-run)",
                attempt.attempt_id,
                attempt.task_id,
            )
        elif step is RecoveryStep.held:
            log.warning(
                "attempt %s: its process group %d cannot be verified as ours; it stays live and held",
                attempt.attempt_id,
                attempt.pgid,
            )
        else:
            with self.ledger.write() as connection:
                tasks.end_attempt(
                    connection,
                    attempt.attempt_id,
                    StopReason.lost,
                    spawn_failed=False,
                    now=self.ledger.clock.now(),
                    replies=replies,
                )
            log.info(
                "dispatch attempt=%s task=%d state=ended stop_reason=lost",
                attempt.attempt_id,
                attempt.task_id,
            )

    # -- the loop --------------------------------------------------------------------------

    def tick(self) -> list[tasks.Launch]:
        """Join follow-ups, then start what fits; the launches made."""
        if self._shutdown.is_set():
            return []
        now = self.ledger.clock.now()
        with self._lock:
            running_tasks = list(self._running)
            busy_dirs = {running.work_dir for running in self._running.values()}
            free = self.options.concurrency - len(self._running)
        for task_id in running_tasks:
            with self.ledger.write() as connection:
                joined = tasks.join_follow_ups(connection, task_id, now)
            if joined:
                log.info("dispatch task=%d joined=%s", task_id, ",".join(map(str, joined)))
                self._follow_up(task_id, joined)
        launches: list[tasks.Launch] = []
        if free <= 0:
            return launches
        with self.ledger.read() as connection:
            routes = self.routes  # re-read while running (shell.state.reload): one map per tick
            candidates = tasks.startable_records(connection, frozenset(routes), free * 4)
        for event_id, bucket_id in candidates:
            if len(launches) >= free:
                break
            work_dir = str(routes[bucket_id])
            if self._shutdown.is_set():  # stop() may have run since this tick began
                break
            if work_dir in busy_dirs:  # a shortcut: launch() refuses a busy directory itself
                continue
            try:
                with self.ledger.write() as connection:
                    launch = tasks.launch(
                        connection,
                        event_id,
                        work_dir=work_dir,
                        driver=self.options.driver_name,
                        deadline_at=now + self.options.task_deadline,
                        now=now,
                    )
            except tasks.NotStartable as why:
                log.info("dispatch event=%d not started: %s", event_id, why)
                continue
            busy_dirs.add(work_dir)
            launches.append(launch)
            self._start(launch, work_dir, now + self.options.task_deadline)
        return launches

    def _start(self, launch: tasks.Launch, work_dir: str, deadline_at: datetime) -> None:
        log.info(
            "dispatch task=%d attempt=%s events=%s state=launching",
            launch.task_id,
            launch.attempt_id,
            ",".join(map(str, launch.event_ids)),
        )
        thread = threading.Thread(
            target=self._work,
            args=(launch, work_dir, deadline_at),
            name=f"worker-{launch.task_id}",
            daemon=True,
        )
        with self._lock:
            self._running[launch.task_id] = _Running(launch, work_dir, thread)
        thread.start()

    def _work(self, launch: tasks.Launch, work_dir: str, deadline_at: datetime) -> None:
        try:
            started = self.spawned(launch, work_dir)
            if started is None:
                return
            reason = self.driver.supervise(
                started, deadline_at, self._shutdown, lambda: self.still_running(launch)
            )
            self.supervised(launch, started, reason)
        except Exception:
            log.exception(
                "dispatch attempt=%s: the worker's supervision failed; it stays live for recovery",
                launch.attempt_id,
            )
        finally:
            with self._lock:
                self._running.pop(launch.task_id, None)

    # -- a worker's life in steps (rule 8): the thread above runs them; the simulation one by one --

    def _follow_up(self, task_id: int, joined: tuple[int, ...]) -> None:
        """Rule 2: the running worker's turn for each joined event."""
        with self._lock:
            running = self._running.get(task_id)
            started = running.started if running is not None else None
        if started is None:
            return
        given = self.driver.follow_up(started, joined)
        if given:
            log.info("dispatch task=%d follow-up turns=%s", task_id, ",".join(map(str, given)))

    def spawned(self, launch: tasks.Launch, work_dir: str) -> WorkerProcess | None:
        """Spawn the launched worker and record its process; None when it never started (settled)."""
        pause_at("after_launch")  # a crash test kills the process here: launched, nothing spawned
        outcome = self.driver.spawn(launch, Path(work_dir))
        if isinstance(outcome, SpawnFailed):
            log.warning(
                "dispatch attempt=%s could not start its worker: %s", launch.attempt_id, outcome.detail
            )
            self._end(launch, StopReason.failed, spawn_failed=True)
            return None
        with self._lock:
            self._running[launch.task_id].started = outcome
        try:
            with self.ledger.write() as connection:
                tasks.mark_running(
                    connection,
                    launch.attempt_id,
                    pid=outcome.pid,
                    pgid=outcome.pgid,
                    process_started=outcome.process_started,
                    now=self.ledger.clock.now(),
                )
            log.info("dispatch attempt=%s state=running pid=%d", launch.attempt_id, outcome.pid)
        except Exception:  # a worker that exists is supervised to its end, recorded or not
            log.exception(
                "dispatch attempt=%s: its process could not be recorded; supervising it anyway",
                launch.attempt_id,
            )
        return outcome

    def supervised(
        self, launch: tasks.Launch, started: WorkerProcess, reason: StopReason | WorkerAccount | None
    ) -> None:
        """The worker ended for ``reason``: settle its attempt (rule 4), or leave it live (rule 6)."""
        if reason is None:
            log.error(
                "dispatch attempt=%s: members of its process group outlived SIGKILL; it stays live,"
                " unsettled, for a person and the next start's recovery",
                launch.attempt_id,
            )
            return
        told = reason if isinstance(reason, WorkerAccount) else WorkerAccount(reason)
        self._end(launch, told.stop_reason, spawn_failed=bool(told.not_started), account=told)
        self.driver.release(started)

    def still_running(self, launch: tasks.Launch) -> None:
        """A still-running tick of the worker's attempt (its notice, when one is due)."""
        with self.ledger.write() as connection:
            tasks.still_running(connection, launch.attempt_id, self.ledger.clock.now())

    def _end(
        self,
        launch: tasks.Launch,
        reason: StopReason,
        *,
        spawn_failed: bool,
        account: WorkerAccount | None = None,
    ) -> None:
        replies = self._replies(launch.task_id, self._shutdown)  # a shutdown cuts the listing short
        with self.ledger.write() as connection:
            settled = tasks.end_attempt(
                connection,
                launch.attempt_id,
                reason,
                spawn_failed=spawn_failed,
                now=self.ledger.clock.now(),
                replies=replies,
                account=account,
            )
        log.info(
            "dispatch task=%d attempt=%s state=ended stop_reason=%s settled=%s",
            launch.task_id,
            launch.attempt_id,
            reason,
            ",".join(f"{row.event_id}:{row.settlement}" for row in settled),
        )

    def _replies(self, task_id: int, stop: threading.Event | None) -> ListedReplies | None:
        """Rule 8: before the settlement, what the adopted-reply rule reads for the task, as far
        as it got before ``stop``."""
        if self.list_replies is None:
            return None
        return self.list_replies(task_id, stop)

    def stop(self, timeout: float) -> bool:
        """Stop every worker (``shutdown``) and wait until each is settled; False if time ran out."""
        self._shutdown.set()
        with self._lock:
            threads = [running.thread for running in self._running.values()]
        deadline = threading.Event()
        timer = threading.Timer(timeout, deadline.set)
        timer.start()
        try:
            for thread in threads:
                while thread.is_alive() and not deadline.is_set():
                    thread.join(0.05)
        finally:
            timer.cancel()
        return not any(thread.is_alive() for thread in threads)

    @property
    def running(self) -> int:
        with self._lock:
            return len(self._running)


def _left_live(attempts: list[tasks.LiveAttemptRow]) -> None:
    """Rule 1: what a stop during recovery leaves for the next start."""
    log.info(
        "recovery: stopped; attempt(s) %s stay live, for the next start to settle",
        ",".join(attempt.attempt_id for attempt in attempts),
    )
