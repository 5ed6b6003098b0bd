"""The dispatcher: start the oldest startable record of each free conversation, supervise its
worker, settle the attempt when it ends, listing first the replies the adopted-reply rule reads.

``recover`` runs first: each attempt a previous connector left live is taken one step at a time as
``core.settlement.recovery_step`` answers, until the start's stop. Then at most ``concurrency``
workers run. Each tick, follow-ups join their live task first (the running worker is given a turn),
then the oldest startable records of free conversations start, by the routes the tick read once. A
launch is committed (task, attempt, exposure) before the driver starts anything, and the process
recorded as soon as it exists. A worker's life is three steps, each its own transactions (``spawned``,
``still_running``, ``supervised``), on a thread of its own (the simulation interleaves them on one).
``spawn_failed`` is only a spawn proved never to have started a process, or a worker whose account
proves it never began. A group that kept members after SIGKILL is not settled: the attempt stays
live and its conversation held, so no second worker starts beside it.

``ReplyAdopter.list_replies`` lists exhaustively, outside any transaction, each reply destination a
row may be adopted from (``core.settlement.choose_reply``). A listing that fails or is cut short leaves its
row out: a missing adoption costs a person a look, a wrong one would hide a doubled reply. Once the
shutdown's (or the start's) stop is set nothing more is listed or waited for (``shell.stoppable``),
so the attempt settles with its real reason in bound. It never raises for Basecamp; a ledger failure
lists nothing."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from functools import partial
from pathlib import Path
from typing import Protocol

from core.destinations import Destination, ListedMessage
from core.settlement import ListedReplies, RecoveryFacts, RecoveryStep, may_become_candidate, recovery_step
from core.snapshots import StopReason
from core.worker_stream import WorkerAccount
from shell import process_secrets
from shell.basecamp.errors import ListingFailed
from shell.crashpoints import pause_at
from shell.ledger import deliveries, tasks
from shell.ledger.connection import Ledger, LedgerError
from shell.log_format import ids
from shell.stoppable import unless_stopped
from shell.worker.driver import Shutdown, SpawnFailed

log = logging.getLogger("connector.dispatch")
adoption_log = logging.getLogger("connector.adoption")

ADOPTION_SCAN_TIMEOUT = 30.0  # seconds one listing of a reply destination may take


class WorkerProcess(Protocol):
    @property
    def pid(self) -> int: ...
    @property
    def pgid(self) -> int: ...
    @property
    def process_started(self) -> str: ...


class WorkerDriver(Protocol):
    def spawn(self, launch: tasks.Launch, work_dir: Path) -> WorkerProcess | SpawnFailed: ...
    def supervise(self, started: WorkerProcess, deadline_at: datetime, stop: threading.Event,
                  on_tick: Callable[[], None]) -> StopReason | WorkerAccount | None:
        """Why the worker ended (its driver's account if it keeps one); None: its group outlived SIGKILL."""
        ...

    def release(self, started: WorkerProcess, resumed: bool) -> None:
        """The attempt is settled; ``resumed``: its conversation's next task resumes its session."""
        ...
    def follow_up(self, started: WorkerProcess, event_ids: tuple[int, ...]) -> tuple[int, ...]:
        """Give the running worker a turn for each event that joined its task; those given."""
        ...


class GroupEnder(Protocol):  # how recovery ends a group a previous connector left (shell.processes)
    def end_recorded_group(self, pid: int, pgid: int, process_started: str) -> bool:
        """True when the group is gone (ended, or was already); False when it cannot be verified."""
        ...


@dataclass(frozen=True, slots=True)
class DispatchOptions:
    concurrency: int = 2
    task_deadline: timedelta = timedelta(hours=1)


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
    list_replies: Callable[[int, threading.Event | None], ListedReplies] | None = None
    _running: dict[int, _Running] = field(default_factory=dict)
    _shutdown: Shutdown = field(default_factory=Shutdown)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def recover(self, stop: threading.Event | None = None) -> list[str]:
        """Settle what a previous connector left running, until ``stop``; the attempts held."""
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
                    left = ",".join(attempt.attempt_id for attempt in live[index:])
                    log.info("recovery: stopped; attempt(s) %s stay live, for the next start to settle", left)
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
        assert attempt.pid is not None, "recovery_step ends only a recorded group"
        assert attempt.pgid is not None, "recovery_step ends only a recorded group"
        return self.recovery.end_recorded_group(attempt.pid, attempt.pgid, attempt.process_started)

    def _recovered(self, attempt: tasks.LiveAttemptRow, step: RecoveryStep,
                   replies: ListedReplies | None) -> None:
        said = ids(task=attempt.task_id, attempt=attempt.attempt_id)
        if step is RecoveryStep.mark_left:
            with self.ledger.write() as connection:
                tasks.mark_left(connection, attempt.attempt_id, self.ledger.clock.now())
            log.warning(
                "attempt %s was left mid-launch with no recorded process: its conversation stays held;"
                " a person must check for a worker still running for task %d, then settle it"
                " (bin/connect status says how: bin/connect settle-launch EVENT --ran|--did-not-run)",
                attempt.attempt_id, attempt.task_id, extra=said)
        elif step is RecoveryStep.held:
            log.warning("attempt %s: its process group %d cannot be verified as ours; it stays live and held",
                        attempt.attempt_id, attempt.pgid, extra=said)
        else:
            with self.ledger.write() as connection:
                tasks.end_attempt(connection, attempt.attempt_id, StopReason.lost, spawn_failed=False,
                                  now=self.ledger.clock.now(), replies=replies)
            log.info("dispatch attempt=%s task=%d state=ended stop_reason=lost",
                     attempt.attempt_id, attempt.task_id, extra=said)

    def tick(self) -> list[tasks.Launch]:
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
                log.info("dispatch task=%d joined=%s", task_id, ",".join(map(str, joined)),
                         extra=ids(task=task_id))
                self._follow_up(task_id, joined)
        launches: list[tasks.Launch] = []
        if free <= 0:
            return launches
        with self.ledger.read() as connection:
            routes = self.routes  # re-read while running (shell.state.config.Reloader): one map per tick
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
                    launch = tasks.launch(connection, event_id, work_dir=work_dir, driver="command",
                                          deadline_at=now + self.options.task_deadline, now=now)
            except tasks.NotStartable as why:
                log.info("dispatch event=%d not started: %s", event_id, why, extra=ids(event_id=event_id))
                continue
            busy_dirs.add(work_dir)
            launches.append(launch)
            self._start(launch, work_dir, now + self.options.task_deadline)
        return launches

    def _start(self, launch: tasks.Launch, work_dir: str, deadline_at: datetime) -> None:
        events = ",".join(map(str, launch.event_ids))
        log.info("dispatch task=%d attempt=%s events=%s state=launching",
                 launch.task_id, launch.attempt_id, events, extra=_ids_of(launch))
        worker = f"worker-{launch.task_id}"
        thread = threading.Thread(target=self._work, args=(launch, work_dir, deadline_at), name=worker,
                                  daemon=True)
        with self._lock:
            self._running[launch.task_id] = _Running(launch, work_dir, thread)
        thread.start()

    def _work(self, launch: tasks.Launch, work_dir: str, deadline_at: datetime) -> None:
        with process_secrets.holding(launch.token):  # no log line shows it while its worker runs
            self._worker_life(launch, work_dir, deadline_at)

    def _worker_life(self, launch: tasks.Launch, work_dir: str, deadline_at: datetime) -> None:
        try:
            started = self.spawned(launch, work_dir)
            if started is None:
                return
            reason = self.driver.supervise(started, deadline_at, self._shutdown,
                                           lambda: self.still_running(launch))
            self.supervised(launch, started, reason)
        except Exception:
            log.exception("dispatch attempt=%s: the worker's supervision failed; it stays live for recovery",
                          launch.attempt_id, extra=_ids_of(launch))  # fmt: skip
        finally:
            with self._lock:
                self._running.pop(launch.task_id, None)

    # -- a worker's life in steps: the thread above runs them; the simulation one by one -------

    def _follow_up(self, task_id: int, joined: tuple[int, ...]) -> None:
        with self._lock:
            running = self._running.get(task_id)
            started = running.started if running is not None else None
        if started is None:
            return
        given = self.driver.follow_up(started, joined)
        if given:
            log.info("dispatch task=%d follow-up turns=%s", task_id, ",".join(map(str, given)),
                     extra=ids(task=task_id))

    def spawned(self, launch: tasks.Launch, work_dir: str) -> WorkerProcess | None:
        """Spawn the launched worker and record its process; None when it never started (settled)."""
        pause_at("after_launch")  # a crash test kills the process here: launched, nothing spawned
        outcome = self.driver.spawn(launch, Path(work_dir))
        if isinstance(outcome, SpawnFailed):
            log.warning("dispatch attempt=%s could not start its worker: %s",
                        launch.attempt_id, outcome.detail, extra=_ids_of(launch))
            self._end(launch, StopReason.failed, spawn_failed=True,
                      account=WorkerAccount(StopReason.failed, not_started=outcome.detail))
            return None
        with self._lock:
            self._running[launch.task_id].started = outcome
        try:
            with self.ledger.write() as connection:
                tasks.mark_running(connection, launch.attempt_id, pid=outcome.pid, pgid=outcome.pgid,
                                   process_started=outcome.process_started, now=self.ledger.clock.now())
            log.info("dispatch attempt=%s state=running pid=%d", launch.attempt_id, outcome.pid,
                     extra=_ids_of(launch))
        except Exception:  # a worker that exists is supervised to its end, recorded or not
            log.exception("dispatch attempt=%s: its process could not be recorded; supervising it anyway",
                          launch.attempt_id, extra=_ids_of(launch))
        return outcome

    def supervised(self, launch: tasks.Launch, started: WorkerProcess,
                   reason: StopReason | WorkerAccount | None) -> None:
        if reason is None:
            log.error("dispatch attempt=%s: members of its process group outlived SIGKILL; it stays live,"
                      " unsettled, for a person and the next start's recovery", launch.attempt_id,
                      extra=_ids_of(launch))
            return
        told = reason if isinstance(reason, WorkerAccount) else WorkerAccount(reason)
        self._end(launch, told.stop_reason, spawn_failed=bool(told.not_started), account=told)
        self.driver.release(started, self._resumed(launch))

    def _resumed(self, launch: tasks.Launch) -> bool:
        try:
            with self.ledger.read() as connection:
                return tasks.resume_session(connection, launch.conversation) != ""
        except LedgerError:
            return False  # its transcript is swept: the next task starts a fresh session

    def still_running(self, launch: tasks.Launch) -> None:
        with self.ledger.write() as connection:
            tasks.still_running(connection, launch.attempt_id, self.ledger.clock.now())

    def _end(self, launch: tasks.Launch, reason: StopReason, *, spawn_failed: bool,
             account: WorkerAccount | None = None) -> None:
        replies = self._replies(launch.task_id, self._shutdown)  # a shutdown cuts the listing short
        with self.ledger.write() as connection:
            settled = tasks.end_attempt(connection, launch.attempt_id, reason, spawn_failed=spawn_failed,
                                        now=self.ledger.clock.now(), replies=replies, account=account)
        rows = ",".join(f"{row.event_id}:{row.settlement}" for row in settled)
        log.info("dispatch task=%d attempt=%s state=ended stop_reason=%s settled=%s",
                 launch.task_id, launch.attempt_id, reason, rows, extra=_ids_of(launch))  # fmt: skip

    def _replies(self, task_id: int, stop: threading.Event | None) -> ListedReplies | None:
        return None if self.list_replies is None else self.list_replies(task_id, stop)

    def stop(self, timeout: float, grace: float | None = None) -> bool:
        """Stop every worker (``shutdown``), each with ``grace`` (the driver's own when None or
        longer) before SIGKILL, and wait until each is settled; False if time ran out."""
        self._shutdown.begin(grace)
        with self._lock:
            threads = [running.thread for running in self._running.values()]
        ends = time.monotonic() + timeout
        for thread in threads:
            thread.join(max(0.0, ends - time.monotonic()))
        return not any(thread.is_alive() for thread in threads)

    @property
    def running(self) -> int:
        with self._lock:
            return len(self._running)


def _ids_of(launch: tasks.Launch) -> dict[str, object]:
    return ids(task=launch.task_id, attempt=launch.attempt_id, events=launch.event_ids)


class ReplyLister(Protocol):  # the client's (exhaustive) listing of the agent's messages at a destination
    def list(self, destination: Destination, since: datetime, creator_id: int,
             deadline: float) -> list[ListedMessage]: ...


class ReplyAdopter:
    def __init__(self, ledger: Ledger, lister: ReplyLister, agent_id: int) -> None:
        self._ledger = ledger
        self._lister = lister
        self._agent_id = agent_id

    def list_replies(self, task_id: int, stop: threading.Event | None) -> ListedReplies:
        """``task_id``'s rows that may become candidates, listed by event id, as far as ``stop`` let it."""
        listed: dict[int, tuple[ListedMessage, ...]] = {}
        try:
            with self._ledger.read() as connection:
                rows = deliveries.settled_rows(connection, task_id, settled=False)
        except LedgerError as error:
            adoption_log.error("adoption task=%d: the ledger failed: %s", task_id, error,
                               extra=ids(task=task_id))
            rows = []
        wanted = [(row.event_id, destination, row.delivered_at) for row, destination in rows
                  if may_become_candidate(row) and destination is not None and row.delivered_at is not None]
        for event_id, destination, since in wanted:
            bound = self._ledger.clock.monotonic() + ADOPTION_SCAN_TIMEOUT
            try:
                listing = partial(self._lister.list, destination, since, self._agent_id, bound)
                found = unless_stopped(listing, stop, "adoption-listing")
            except ListingFailed as error:
                adoption_log.info("adoption task=%d event=%d: the listing failed: %s",
                                  task_id, event_id, error, extra=ids(task=task_id, event_id=event_id))
                continue
            if found is None:
                unknown = ",".join(str(event) for event, _, _ in wanted if event not in listed)
                adoption_log.info("adoption task=%d: stopped by the shutdown; not known for event(s) %s",
                                  task_id, unknown, extra=ids(task=task_id))  # fmt: skip
                break
            listed[event_id] = tuple(found)
        return ListedReplies(self._agent_id, listed)
