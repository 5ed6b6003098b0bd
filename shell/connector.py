"""The connector as one running thing: its parts wired in the order the design requires.

Rules:
1. Start is ``shell.start.settle_previous`` with all its parts (a ledger that cannot be settled
   stops the start); then every seen record is admitted again and the feed is read once.
2. Then three loops run until asked to stop: intake and admission; the dispatcher; the outbox.
3. Shutdown stops intake, stops and settles workers, and flushes their notices, within
   ``shutdown_bound``. A request in flight stays ``sending`` for the next start to reconcile.
4. ``shadow`` admits and logs; it writes no intents, dispatches and posts nothing.
5. ``live`` (the default) runs intake's live lane beside the poll loop: what it records first is
   admitted at once; the poll lane still moves the position and catches up, and what the live
   lane says it lost is walked for (``shell.intake.repair``), on start too.
6. At ``backlog_limits.pause`` records waiting for a worker (``core.intake_status``) intake stops
   reading, and status says so.
7. Every ``membership_every`` intake re-reads the agent's projects; a newly granted one makes the
   live lane subscribe again.
7a. The inbox lane is intake's backstop: at the start after the feed, every few turns, and at
   once after the account lane's 410.
8. With ``config_path`` a fourth loop re-reads the configuration every
   ``core.configuration.RELOAD_EVERY`` and applies what it authorizes (``shell.state.reload``).
9. One turn of each loop is a method (``intake_turn``, ``dispatch_turn``, ``Outbox.run_once``):
   ``run``'s threads repeat them and the simulation calls them as steps, putting its own reads,
   workers and dispatcher in place through ``seams`` (which production never passes).
10. A stop asked for during the start, watched for on its own thread, stops the start's listings
   (``shell.start`` rule 5) and admission; ``stopped_in`` names the step. No loop starts and
   nothing is flushed: a flush could claim a still-running previous attempt's notice
   (``shell.start`` rule 3).
11. No loop dies quietly: intake, dispatch and the live lane log what they did not expect and go
   on; what still escapes a loop's thread ends the connector (``ended_by``; ``run`` exits 1).
12. Each loop beats as it turns (``shell.heartbeats``), written beside the ledger by ``run``'s
   main thread, so ``status`` names a loop that is not turning."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path

from core.admission import AdmissionSettings, BlockedReason
from core.configuration import RELOAD_EVERY, Authorization, Configuration, at_start
from core.feed import FeedFilters
from core.intake_status import BacklogLimits
from shell.admission import Admission, SummaryReader
from shell.adopted_replies import ReplyAdopter
from shell.basecamp.client import BasecampClient
from shell.basecamp.errors import BasecampError
from shell.basecamp.reads import SummaryReads
from shell.clock import Clock
from shell.dispatcher import Dispatcher, DispatchOptions, GroupEnder, WorkerDriver
from shell.heartbeats import Heartbeats
from shell.intake.backlog import Backlog
from shell.intake.inbox_lane import InboxLane
from shell.intake.live_lane import LiveLane
from shell.intake.membership import DEFAULT_MEMBERSHIP_INTERVAL, Membership
from shell.intake.poll_lane import Intake, IntakeFailed
from shell.intake.repair import Repair
from shell.ledger import records
from shell.ledger.connection import Ledger
from shell.ledger.tasks import Launch
from shell.outbox import Outbox, OutboxOptions
from shell.outbox_turns import OutboxLedgerError
from shell.start import StartParts, settle_previous
from shell.state import reload
from shell.worker.driver import CommandDriver, WorkerCommand

log = logging.getLogger("connector.run")

BEAT_WHILE_WAITING = 30.0
"""How often a loop waiting out a long interval beats all the same (rule 12)."""
REQUEST_CHECK_SECONDS = 0.1
"""How often ``run`` looks for a stop a signal asked for."""
STOP_WITHIN = timedelta(seconds=60)
"""``run``'s bound on a stop a signal asked for, unless its caller gives one."""


@dataclass(frozen=True, slots=True)
class Seams:
    """Rule 9: what the simulation puts where the client's reads and the worker processes go."""

    reads: SummaryReader
    driver: WorkerDriver
    recovery: GroupEnder
    dispatcher: type[Dispatcher] = Dispatcher


@dataclass
class Connector:
    configuration: Configuration
    ledger: Ledger
    client: BasecampClient
    clock: Clock
    worker_command: WorkerCommand
    sessions: Path
    shadow: bool = False
    poll_every: timedelta = timedelta(seconds=5)
    live: bool = True  # rule 5
    backlog_limits: BacklogLimits = field(default_factory=BacklogLimits)  # rule 6
    membership_every: timedelta = DEFAULT_MEMBERSHIP_INTERVAL  # rule 7
    on_event: Callable[[str], None] = field(default=lambda line: None)
    config_path: Path | None = None  # re-read while running (rule 5); None: read once
    note_configuration: Callable[[str], None] = field(default=lambda problem: None)
    seams: Seams | None = None  # rule 9: the simulation's; None: the client's reads, CommandDriver
    _stop: threading.Event = field(default_factory=threading.Event)
    _stop_deadline: float | None = None  # monotonic; set by stop() (rule 3)
    stopped_in: str | None = field(default=None, init=False)  # the start's step a stop ended (rule 10)
    ended_by: str | None = field(default=None, init=False)  # the loop a failure ended (rule 11)

    def __post_init__(self) -> None:
        configuration = self.configuration
        authorized = at_start(configuration)
        settings = reload.routed_settings(
            AdmissionSettings(
                agent_id=configuration.agent_id,
                operator_id=configuration.trust.operator_id or 0,
                trust_mode=configuration.trust.mode,
                allowlist=frozenset(configuration.trust.allow),
            ),
            authorized,
        )
        self.heartbeats = Heartbeats(self.clock, self.ledger.path)  # rule 12
        self.intake = Intake(
            self.ledger,
            self.client,
            FeedFilters.of(exclude_performers=("self",), actor_types=("person",)),
            self.clock,
        )
        self.inbox = InboxLane(self.ledger, self.client, self.clock, self._account_floor)  # rule 7a
        self.backlog = Backlog(self.ledger, self.backlog_limits)
        self.membership = Membership(self.client, self.clock, self.membership_every)
        self.repair = Repair(self.ledger, self.client, self.intake.filters, self.clock, self._heard_repair)
        self.live_lane: LiveLane | None = None
        if self.live:
            filters = self.intake.filters
            self.live_lane = LiveLane(
                self.ledger, self.client, filters, self.clock, self._heard_live,
                losses=self.repair, paused=self.backlog.paused, beat=lambda: self.heartbeats.beat("live"),
            )  # fmt: skip
        seams = self.seams or self._processes()
        self.admission = Admission(
            self.ledger,
            seams.reads,
            settings,
            None if self.shadow else configuration.timings.guard_delay,
            self.clock,
        )
        self.outbox = Outbox(
            self.ledger,
            self.client,
            configuration.agent_id,
            OutboxOptions(reconcile_after=configuration.timings.reconcile_after),
        )
        self.dispatcher = seams.dispatcher(
            self.ledger,
            _directories(authorized),
            seams.driver,
            seams.recovery,
            DispatchOptions(concurrency=configuration.concurrency, task_deadline=configuration.task_deadline),
            list_replies=ReplyAdopter(self.ledger, self.client, configuration.agent_id).list_replies,
        )
        self.reloader = reload.Reloader(
            authorized, self._set_routes, self.note_configuration, self._readmit_unreadable
        )

    def _processes(self) -> Seams:
        """The production seams: the client's reads, and workers as real processes."""
        driver = CommandDriver(
            self.worker_command,
            private_dir=self.sessions,
            ledger_path=self.ledger.path,
            clock=self.clock,
            still_running_every=self.configuration.timings.still_running.total_seconds(),
            agent_id=self.configuration.agent_id,
        )
        return Seams(SummaryReads(self.client, self.configuration.agent_id, self.clock), driver, driver)

    # -- start ------------------------------------------------------------------------------

    def start(self, bound: timedelta, requested: Callable[[], bool] | None = None) -> list[str]:
        """Settle what a previous process left, in order (rule 1); the attempts held for a person.
        Until ``requested()`` answers true (rule 10): then ``stopped_in`` names the step it ended."""
        deadline = self.clock.monotonic() + bound.total_seconds()
        held: list[str] = []
        with self._watching(requested) as stop:
            if not self.shadow:
                held = self._settle_previous(deadline, stop)
            if self.stopped_in is not None:
                return held
            with self.ledger.read() as connection:
                seen = records.seen_ids(connection)
            for event_id in seen:
                if self._stop.is_set():
                    self.stopped_in = "admit"
                    return held
                self._admit(event_id)
            self._poll()  # the first read fixes the feed position: nothing after the start is missed
            self._inbox_due()
        return held

    def _settle_previous(self, deadline: float, stop: threading.Event | None) -> list[str]:
        """``shell.start``'s steps with all their parts (rule 1); the attempts held for a person."""
        parts = StartParts(self.outbox, sessions=self.sessions, recovery=self.dispatcher)
        started = settle_previous(parts, deadline, stop)
        self.stopped_in = started.stopped
        return started.held

    @contextmanager
    def _watching(self, requested: Callable[[], bool] | None) -> Iterator[threading.Event | None]:
        """Rule 10: the connector's stop, set once ``requested()`` answers true; None without it."""
        if requested is None:
            yield None
            return
        over = threading.Event()

        def watch() -> None:
            while not over.wait(REQUEST_CHECK_SECONDS):
                if requested():
                    self._stop.set()
                    return

        watcher = threading.Thread(target=watch, name="start-stop", daemon=True)
        watcher.start()
        try:
            yield self._stop
        finally:
            over.set()
            watcher.join()

    # -- the loops --------------------------------------------------------------------------

    def run(self, requested: Callable[[], bool] = lambda: False, within: timedelta = STOP_WITHIN) -> None:
        """The three loops (rule 2), until ``stop()``, or until ``requested()`` answers true: then
        this thread stops them ``within`` that bound (a signal handler only notes the signal). A
        stop asked for while the start settled is taken before any loop makes a turn. Not called
        after a start a stop ended (rule 10)."""
        if requested():  # nothing launches or posts after a SIGTERM that came during the start
            self.stop(within)
            return
        loops = [self._loop("intake", self._intake_loop)]
        if self.config_path is not None:  # every turn of it catches what it does not expect
            loops.append(threading.Thread(target=self._config_loop, name="config", daemon=True))
        if not self.shadow:
            loops.append(self._loop("dispatch", self._dispatch_loop))
            beat = lambda: self.heartbeats.beat("outbox")  # noqa: E731
            loops.append(self._loop("outbox", lambda: self.outbox.run(self._stop, beat)))
        if self.live_lane is not None:
            lane = self.live_lane
            loops.append(self._loop("live", lambda: lane.run(self._stop)))
        for loop in loops:
            loop.start()
        while not self._stop.wait(REQUEST_CHECK_SECONDS):
            if requested():
                self.stop(within)
            elif self.ended_by is not None:
                self.stop(within)  # rule 11: the supervisor starts it again
            self.heartbeats.write_due()
        for loop in loops:
            remaining = None if self._stop_deadline is None else self._stop_deadline - self.clock.monotonic()
            loop.join(timeout=None if remaining is None else max(0.0, remaining))

    def _loop(self, name: str, target: Callable[[], None]) -> threading.Thread:
        """A loop's thread, guarded (rule 11)."""
        return threading.Thread(target=self._guarded, args=(name, target), name=name, daemon=True)

    def _guarded(self, name: str, target: Callable[[], None]) -> None:
        """Rule 11: a loop's thread; what escapes it is logged once and ends the connector."""
        try:
            target()
        except Exception:
            log.critical("the %s loop ended on a failure it did not expect; the connector stops (exit 1)"
                         " so its supervisor starts it again", name, exc_info=True)  # fmt: skip
            self.ended_by = name

    def _config_loop(self) -> None:
        assert self.config_path is not None
        self.heartbeats.beat("config")
        while not self._stop.wait(RELOAD_EVERY.total_seconds()):
            self.heartbeats.beat("config")
            try:
                for line in self.reloader.apply(reload.read(self.config_path, self.configuration)):
                    self.on_event(f"configuration: {line}")
            except Exception:
                log.exception("configuration: the re-read failed; trying again")

    def _set_routes(self, authorized: Authorization) -> None:
        self.admission.reconfigure(reload.routed_settings(self.admission.settings, authorized))
        self.dispatcher.routes = _directories(authorized)

    def _readmit_unreadable(self) -> None:
        with self.ledger.read() as connection:
            waiting = records.blocked_for(connection, str(BlockedReason.config_unreadable))
        for event_id in waiting:
            self._admit(event_id)

    def _intake_loop(self) -> None:
        while not self._stop.is_set():
            self.heartbeats.beat("intake")
            try:
                self.intake_turn()
            except Exception:  # rule 11: a turn that failed unexpectedly is tried again
                log.exception("intake: a turn failed unexpectedly; trying again")
            self._wait_beating("intake", self.poll_every.total_seconds())

    def _wait_beating(self, name: str, seconds: float) -> None:
        """Wait ``seconds`` (or until stopped), beating as it waits: a long poll interval is a
        loop that waits, not one that stopped turning (rule 12)."""
        ends = self.clock.monotonic() + seconds
        while not self._stop.wait(min(BEAT_WHILE_WAITING, max(0.0, ends - self.clock.monotonic()))):
            if self.clock.monotonic() >= ends:
                return
            self.heartbeats.beat(name)

    def intake_turn(self) -> None:
        """One turn of intake (rule 9): read unless the backlog pauses it, repair, membership;
        then sweep the blocked records."""
        if self.backlog.check() is None:
            self._poll()
            self._inbox_due()
            self._repair_due()
            self._membership_due()
        try:
            for admitted in self.admission.sweep(self.clock.now()):
                self.on_event(
                    f"verdict event={admitted.event_id} state={admitted.state} reason={admitted.reason}"
                )
        except Exception:
            log.exception("admission: the sweep of blocked records failed; trying again")

    def _poll(self) -> None:
        try:
            result = self.intake.poll_once(self.clock.monotonic() + 30)
        except IntakeFailed as error:
            log.warning("intake: %s; trying again", error)
            return
        except Exception:
            log.exception("intake: an unexpected failure; trying again")
            return
        if "epoch_passed" in result.recoveries:
            self.inbox.ask_now()  # rule 7a: what was addressed while the position went stale
        for event_id in result.new_ids:
            self.on_event(f"seen event={event_id}")
            self._admit(event_id)

    def _account_floor(self) -> int:
        checkpoint = self.intake.checkpoint()
        return 0 if checkpoint is None else checkpoint.last_served_id

    def _inbox_due(self) -> None:
        """Rule 7a."""
        if not self.inbox.due():
            return
        try:
            fresh = self.inbox.poll_once(self.clock.monotonic() + 30)
        except Exception:
            log.exception("inbox: an unexpected failure; trying again")
            return
        for event_id in fresh:
            self.on_event(f"seen event={event_id} lane=inbox")
            self._admit(event_id)

    def _membership_due(self) -> None:
        """Rule 7."""
        if self.live_lane is None or not self.membership.due():
            return
        try:
            granted = self.membership.check(self.clock.monotonic() + 30)
        except BasecampError as error:
            log.info("membership: the projects could not be read (%s); later", type(error).__name__)
            return
        except Exception:  # rule 11
            log.exception("membership: an unexpected failure; later")
            return
        if granted:
            log.info("membership: %d project(s) granted; the live lane subscribes again", len(granted))
            self.live_lane.resubscribe()

    def _repair_due(self) -> None:
        try:
            self.repair.run_due(self.clock.monotonic() + 30)
        except Exception:
            log.exception("repair: an unexpected failure; trying again")

    def _heard_repair(self, event_id: int) -> None:
        self.on_event(f"seen event={event_id} lane=repair")
        self._admit(event_id)

    def _heard_live(self, event_id: int) -> None:
        """An event the live lane recorded first (``shell.intake.live_lane``): admitted at once."""
        self.on_event(f"seen event={event_id} lane=live")
        self._admit(event_id)

    def _admit(self, event_id: int) -> None:
        try:
            admitted = self.admission.admit(event_id, self.clock.monotonic() + 60)
        except Exception:
            log.exception("admission event=%d failed; it stays seen and is tried again on start", event_id)
            return
        self.on_event(f"verdict event={event_id} state={admitted.state} reason={admitted.reason}")

    def _dispatch_loop(self) -> None:
        while not self._stop.is_set():
            self.heartbeats.beat("dispatch")
            self.dispatch_turn()
            self._stop.wait(1.0)

    def dispatch_turn(self) -> list[Launch]:
        """One tick of the dispatcher (rule 9); the launches it made."""
        try:
            launches = self.dispatcher.tick()
        except Exception:
            log.exception("dispatch: a tick failed; trying again")
            return []
        for launch in launches:
            self.on_event(f"dispatch task={launch.task_id} events={','.join(map(str, launch.event_ids))}")
        return launches

    # -- shutdown ---------------------------------------------------------------------------

    def stop(self, bound: timedelta) -> bool:
        """Rule 3: stop intake, stop and settle workers, flush their notices, within ``bound``."""
        deadline = self.clock.monotonic() + bound.total_seconds()
        self._stop_deadline = deadline
        self._stop.set()
        if self.shadow:
            return True
        settled = self.dispatcher.stop(timeout=max(1.0, bound.total_seconds() * 0.6))
        try:
            self.outbox.flush(deadline=deadline)
        except OutboxLedgerError as error:
            log.error("shutdown: the outbox could not flush: %s", error)
            return False
        return settled


def _directories(authorized: Authorization) -> dict[int, Path]:
    return {route.project_id: Path(route.directory) for route in authorized.routes}
