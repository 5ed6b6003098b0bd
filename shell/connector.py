"""The connector as one running thing: its parts wired in the order the design requires, its one
start path, and its loops.

The start settles what a previous process left, logging each step (``START_STEPS``) as it begins:
``reconcile`` lists the destinations of what was left sending, within the start's deadline;
``sweep`` removes left session directories (they can hold a task token); ``recover`` settles
attempts left running and names those held for a person; ``send`` sends what is due, stopping at the
first send that may not have landed, and without a recovery leaves every still-running notice
pending (whether a previous worker runs is recovery's to say). A ledger that cannot be settled stops
the start (``OutboxLedgerError``). Then every seen record is admitted again and the feed read once.
A stop during the start ends it where it is (``stopped_in``): no step begins, listings stop short
(``shell.stoppable``), every read and its waits give way (``BasecampClient.reads_stopped_by``), no
loop starts and nothing is flushed (a flush could claim a previous attempt's notice).

Then the loops run until stopped: intake (the live lane beside the poll lane unless ``live`` is off,
the inbox lane as backstop, membership every ``membership_every``, nothing read while the backlog
pauses it) with admission; the dispatcher; the outbox; with ``config_path``, the configuration's
re-read. Before each dispatch turn, ``credentials`` (the tokens' own) are fingerprinted in the
ledger when they changed, so a worker's words holding one are refused. ``shadow`` admits and logs,
and writes, dispatches and posts nothing. One turn of each loop is a method the simulation calls as
a step (``seams``). A failed turn is logged and tried again; what escapes a loop's thread ends the
connector (``ended_by``; ``run`` exits 1). Each loop beats as it turns. Shutdown stops intake,
settles workers within their share of its bound (``stop_shares``) and flushes their notices within
the rest; a request in flight stays ``sending`` for the next start to reconcile."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass, field
from datetime import timedelta
from functools import partial
from pathlib import Path
from typing import Protocol

from core.admission import AdmissionSettings, BlockedReason
from core.configuration import RELOAD_EVERY, Authorization, Configuration, at_start
from core.feed import FeedFilters
from core.intake_status import BacklogLimits
from core.intent_kinds import IntentKind
from core.log_lines import Transition, transition
from core.worker_stream import stop_shares
from shell.admission import Admission, Admitted, SummaryReader
from shell.basecamp.client import BasecampClient
from shell.basecamp.errors import BasecampError
from shell.basecamp.reads import SummaryReads
from shell.basecamp.tokens import Named
from shell.clock import Clock
from shell.dispatcher import Dispatcher, DispatchOptions, GroupEnder, ReplyAdopter, WorkerDriver
from shell.heartbeats import Heartbeats
from shell.intake.inbox_lane import InboxLane
from shell.intake.live_lane import DEFAULT_MEMBERSHIP_INTERVAL, LiveLane, Membership
from shell.intake.poll_lane import Backlog, Intake, IntakeFailed, Repair
from shell.ledger import fingerprints, records
from shell.ledger.connection import Ledger
from shell.ledger.tasks import Launch
from shell.log_format import ids
from shell.outbox import FlushSummary, Outbox, OutboxLedgerError, OutboxOptions
from shell.state.config import Reloader, read_authorization, routed_settings
from shell.worker.driver import CommandDriver, WorkerCommand, sweep_sessions

log = logging.getLogger("connector.run")
start_log = logging.getLogger("connector.start")

BEAT_WHILE_WAITING = 30.0  # how often a loop waiting out a long interval beats all the same
REQUEST_CHECK_SECONDS = 0.1  # how often ``run`` looks for a stop a signal asked for
STOP_WITHIN = timedelta(seconds=60)  # ``run``'s bound on a stop a signal asked for, by default
START_STEPS = ("reconcile", "sweep", "recover", "send")


class AttemptRecovery(Protocol):  # shell.dispatcher.Dispatcher
    def recover(self, stop: threading.Event | None) -> list[str]: ...


@dataclass(frozen=True, slots=True)
class StartParts:
    """The outbox always; the session directory and the recovery when a dispatcher runs."""

    outbox: Outbox
    sessions: Path | None = None
    recovery: AttemptRecovery | None = None


@dataclass(frozen=True, slots=True)
class StartReport:
    held: list[str]  # the attempts recovery left for a person
    sent: FlushSummary
    stopped: str | None = None  # the step a stop ended; None: every step ran whole


def settle_previous(parts: StartParts, deadline: float, stop: threading.Event | None = None,
                    on_step: Callable[[str], None] = lambda step: None) -> StartReport:
    """The start's steps in order, within ``deadline`` (monotonic, the ledger's clock), until ``stop``;
    ``on_step`` hears each as it begins."""
    _begin = partial(_beginning, on_step)
    _begin("reconcile")
    parts.outbox.reconcile(deadline=deadline, stop=stop)
    if _stopped(stop, "reconcile"):
        return StartReport([], FlushSummary(), "reconcile")
    _begin("sweep")
    if parts.sessions is not None:
        swept = sweep_sessions(parts.sessions)
        if swept:
            start_log.info("start: removed %d session directories a previous process left", len(swept))
    _begin("recover")
    held = [] if parts.recovery is None else parts.recovery.recover(stop)
    if _stopped(stop, "recover"):
        return StartReport(held, FlushSummary(), "recover")
    _begin("send")
    leaving = frozenset({IntentKind.still_running}) if parts.recovery is None else frozenset()
    sent = parts.outbox.flush(deadline=deadline, stop_when_uncertain=True, leaving=leaving, stop=stop)
    return StartReport(held, sent, "send" if _stopped(stop, "send") else None)


def _beginning(on_step: Callable[[str], None], step: str) -> None:
    start_log.info("start: %s", step)
    on_step(step)


def _stopped(stop: threading.Event | None, step: str) -> bool:
    if stop is None or not stop.is_set():
        return False
    start_log.info("start: stopped during %s; what it had not settled is left as it was, for the next start",
                   step)
    return True


@dataclass(frozen=True, slots=True)
class Seams:
    """What the simulation puts where the client's reads and the worker processes go."""

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
    live: bool = True
    backlog_limits: BacklogLimits = field(default_factory=BacklogLimits)
    membership_every: timedelta = DEFAULT_MEMBERSHIP_INTERVAL
    on_event: Callable[[Transition], None] = field(default=lambda said: None)
    config_path: Path | None = None  # re-read while running; None: read once
    note_configuration: Callable[[str], None] = field(default=lambda problem: None)
    on_start_step: Callable[[str], None] = field(default=lambda step: None)  # each step as it begins
    seams: Seams | None = None  # the simulation's; None: the client's reads, CommandDriver
    credentials: Callable[[], Named] = field(default=lambda: ())  # the tokens' (Tokens.credentials)
    _fingerprinted: Named = field(default=(), init=False)
    _stop: threading.Event = field(default_factory=threading.Event)
    _stop_deadline: float | None = None  # monotonic; set by stop()
    stopped_in: str | None = field(default=None, init=False)  # the start's step a stop ended
    ended_by: str | None = field(default=None, init=False)  # the loop a failure ended

    def __post_init__(self) -> None:
        self.heartbeats = Heartbeats(self.clock, self.ledger.path, self.on_start_step)
        filters = FeedFilters.of(exclude_performers=("self",), actor_types=("person",))
        self.intake = Intake(self.ledger, self.client, filters, self.clock)
        self.inbox = InboxLane(self.ledger, self.client, self.clock, self._account_floor)
        self.backlog = Backlog(self.ledger, self.backlog_limits)
        self.membership = Membership(self.client, self.clock, self.membership_every)
        self.repair = Repair(self.ledger, self.client, filters, self.clock, partial(self._heard, "repair"))
        self.live_lane: LiveLane | None = None
        if self.live:
            self.live_lane = LiveLane(
                self.ledger, self.client, filters, self.clock, partial(self._heard, "live"),
                losses=self.repair, paused=self.backlog.paused, beat=lambda: self.heartbeats.beat("live"),
            )
        seams, authorized = self.seams or self._processes(), at_start(self.configuration)
        configuration, trust = self.configuration, self.configuration.trust
        settings = AdmissionSettings(agent_id=configuration.agent_id, operator_id=trust.operator_id or 0,
                                     trust_mode=trust.mode, allowlist=frozenset(trust.allow))
        guard_delay = None if self.shadow else configuration.timings.guard_delay
        routed = routed_settings(settings, authorized)
        self.admission = Admission(self.ledger, seams.reads, routed, guard_delay, self.clock)
        sending = OutboxOptions(reconcile_after=configuration.timings.reconcile_after)
        self.outbox = Outbox(self.ledger, self.client, configuration.agent_id, sending)
        dispatching = DispatchOptions(configuration.concurrency, configuration.task_deadline)
        adopter = ReplyAdopter(self.ledger, self.client, configuration.agent_id)
        self.dispatcher = seams.dispatcher(self.ledger, _directories(authorized), seams.driver,
                                           seams.recovery, dispatching, list_replies=adopter.list_replies)
        self.reloader = Reloader(authorized, self._set_routes, self.note_configuration,
                                 self._readmit_unreadable)

    def _processes(self) -> Seams:
        agent_id, timings = self.configuration.agent_id, self.configuration.timings
        driver = CommandDriver(self.worker_command, private_dir=self.sessions, ledger_path=self.ledger.path,
                               clock=self.clock, still_running_every=timings.still_running.total_seconds(),
                               agent_id=agent_id)
        return Seams(SummaryReads(self.client, agent_id, self.clock), driver, driver)

    def start(self, bound: timedelta, requested: Callable[[], bool] | None = None) -> list[str]:
        """Settle what a previous process left; the attempts held for a person. Until
        ``requested()`` answers true: then ``stopped_in`` names the step it ended."""
        deadline = self.clock.monotonic() + bound.total_seconds()
        held: list[str] = []
        with self._watching(requested) as stop, self._reads_halted(stop):
            if not self.shadow:
                parts = StartParts(self.outbox, self.sessions, self.dispatcher)
                started = settle_previous(parts, deadline, stop, self.heartbeats.starting)
                held, self.stopped_in = started.held, started.stopped
            if self.stopped_in is not None:
                return held
            self.heartbeats.starting("admit")
            with self.ledger.read() as connection:
                seen = records.seen_ids(connection)
            for event_id in seen:
                if self._stop.is_set():
                    self.stopped_in = "admit"
                    return held
                self._admit(event_id)
            self.heartbeats.starting("feed")
            self._poll()  # the first read fixes the feed position: nothing after the start is missed
            self._inbox_due()
            if self._stop.is_set():  # its reads gave way to the stop
                self.stopped_in = "feed"
        self.heartbeats.starting(None)
        return held

    def _reads_halted(self, stop: threading.Event | None) -> AbstractContextManager[None]:
        return nullcontext() if stop is None else self.client.reads_stopped_by(stop)

    @contextmanager
    def _watching(self, requested: Callable[[], bool] | None) -> Iterator[threading.Event | None]:
        """The connector's stop, set once ``requested()`` answers true; None without it."""
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

    def run(self, requested: Callable[[], bool] = lambda: False, within: timedelta = STOP_WITHIN) -> None:
        """The loops, until ``stop()``, or until ``requested()`` answers true: then this thread
        stops them ``within`` that bound (a signal handler only notes the signal). A stop asked for
        while the start settled is taken before any loop makes a turn. Not called after a start a
        stop ended."""
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
            if requested() or self.ended_by is not None:  # a loop that ended: its supervisor starts it again
                self.stop(within)
            self.heartbeats.write_due()
        for loop in loops:
            remaining = None if self._stop_deadline is None else self._stop_deadline - self.clock.monotonic()
            loop.join(timeout=None if remaining is None else max(0.0, remaining))

    def _loop(self, name: str, target: Callable[[], None]) -> threading.Thread:
        return threading.Thread(target=self._guarded, args=(name, target), name=name, daemon=True)

    def _guarded(self, name: str, target: Callable[[], None]) -> None:
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
                for line in self.reloader.apply(read_authorization(self.config_path, self.configuration)):
                    self.on_event(Transition(f"configuration: {line}"))
            except Exception:
                log.exception("configuration: the re-read failed; trying again")

    def _set_routes(self, authorized: Authorization) -> None:
        self.admission.reconfigure(routed_settings(self.admission.settings, authorized))
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
            except Exception:  # a turn that failed unexpectedly is tried again
                log.exception("intake: a turn failed unexpectedly; trying again")
            self._wait_beating("intake", self.poll_every.total_seconds())

    def _wait_beating(self, name: str, seconds: float) -> None:
        """Wait ``seconds`` (or until stopped), beating as it waits: a long poll interval is a loop
        that waits, not one that stopped turning."""
        ends = self.clock.monotonic() + seconds
        while not self._stop.wait(min(BEAT_WHILE_WAITING, max(0.0, ends - self.clock.monotonic()))):
            if self.clock.monotonic() >= ends:
                return
            self.heartbeats.beat(name)

    def intake_turn(self) -> None:
        if self.backlog.check() is None:
            self._poll()
            self._inbox_due()
            self._repair_due()
            self._membership_due()
        try:
            for admitted in self.admission.sweep(self.clock.now()):
                self.on_event(self._verdict(admitted))
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
            self.inbox.ask_now()  # what was addressed while the position went stale
        for event_id in result.new_ids:
            self.on_event(transition("seen", event=event_id))
            self._admit(event_id)

    def _account_floor(self) -> int:
        checkpoint = self.intake.checkpoint()
        return 0 if checkpoint is None else checkpoint.last_served_id

    def _inbox_due(self) -> None:
        if not self.inbox.due():
            return
        try:
            fresh = self.inbox.poll_once(self.clock.monotonic() + 30)
        except Exception:
            log.exception("inbox: an unexpected failure; trying again")
            return
        for event_id in fresh:
            self._heard("inbox", event_id)

    def _membership_due(self) -> None:
        if self.live_lane is None or not self.membership.due():
            return
        try:
            granted = self.membership.check(self.clock.monotonic() + 30)
        except BasecampError as error:
            log.info("membership: the projects could not be read (%s); later", type(error).__name__)
            return
        except Exception:
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

    def _heard(self, lane: str, event_id: int) -> None:
        self.on_event(transition("seen", event=event_id, lane=lane))
        self._admit(event_id)

    def _admit(self, event_id: int) -> None:
        try:
            admitted = self.admission.admit(event_id, self.clock.monotonic() + 60)
        except Exception:
            log.exception("admission event=%d failed; it stays seen and is tried again on start", event_id,
                          extra=ids(event_id=event_id))
            return
        self.on_event(self._verdict(admitted))

    @staticmethod
    def _verdict(admitted: Admitted) -> Transition:
        return transition("verdict", event=admitted.event_id, state=admitted.state, reason=admitted.reason)

    def _dispatch_loop(self) -> None:
        while not self._stop.is_set():
            self.heartbeats.beat("dispatch")
            self.dispatch_turn()
            self._stop.wait(1.0)

    def dispatch_turn(self) -> list[Launch]:
        try:
            self._fingerprint_credentials()
            launches = self.dispatcher.tick()
        except Exception:
            log.exception("dispatch: a tick failed; trying again")
            return []
        for launch in launches:
            self.on_event(transition("dispatch", task=launch.task_id, events=launch.event_ids))
        return launches

    def _fingerprint_credentials(self) -> None:
        held = self.credentials()
        if held != self._fingerprinted:
            with self.ledger.write() as connection:
                fingerprints.record_credentials(connection, held, self.clock.now())
            self._fingerprinted = held

    def stop(self, bound: timedelta) -> bool:
        deadline = self.clock.monotonic() + bound.total_seconds()
        self._stop_deadline = deadline
        self._stop.set()
        if self.shadow:
            return True
        shares = stop_shares(bound.total_seconds())
        settled = self.dispatcher.stop(timeout=shares.workers, grace=shares.grace)
        try:
            self.outbox.flush(deadline=deadline)
        except OutboxLedgerError as error:
            log.error("shutdown: the outbox could not flush: %s", error)
            return False
        return settled


def _directories(authorized: Authorization) -> dict[int, Path]:
    return {route.project_id: Path(route.directory) for route in authorized.routes}
