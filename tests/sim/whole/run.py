"""One seeded run of the whole connector: the step loop, crashes and restarts, a careful person.

Rules:
1. One seed fixes everything: the run's ``random.Random(seed)`` chooses every step, fault,
   worker temperament and decision, and stands in for the ledger's own randomness (task tokens
   and attempt ids), so a seed replays the same history, step for step.
2. A step is one thing one part of the system does (the menu in ``STEPS``): Basecamp gets a
   feed event (a mention, a subscribed comment, an assignment, a completion), intake polls
   (and repairs) and admission decides, the live lane hears the cable's
   next frame, the dispatcher ticks, a worker acts, its supervision ticks or ends it, the
   outbox runs, time passes, Basecamp's next answers are scripted or its token refused for a
   while (``tests.sim.whole.token_outage``), a crash is armed or happens
   now, the connector is stopped (SIGTERM: its own ``Connector.stop``) and started, a careful person resolves,
   redispatches, discards, holds or releases, trashes or restores a card. A ``Crash`` anywhere restarts the
   connector through ``SimConnector.boot`` (``Connector.start``, the production start path).
3. After every step the named checks of ``tests.sim.whole.checks`` run; a violation stops the
   run at that step, with the step's number, the check's name and the history.
4. At the end: Basecamp heals (an outage and a lag run their course), the person releases a
   hold still standing, time passes, every part runs to quiescence (the supervisors and the
   outbox between the workers' actions), and the final checks (nothing sending, no record lost)
   run. A stop has ``SHUTDOWN_BOUND``; its flush meets a slow Basecamp half the time.
5. The run keeps one idle connection of its own to the ledger file (``keeper``, never in a
   transaction), so a connector's close is never the last: its WAL is left as a killed process
   leaves it, for the next start to read, and the file's shared index is not rebuilt at every
   restart (a third of a restart's cost).
6. A restart (a crash's or a stop's) opens the file anew the first time in a run, through
   ``open_ledger`` as a new process does: its checks, its migration step, a new connection that
   reads the dead one's WAL. Each later restart keeps the dead process's SQLite connection,
   rolled back if a transaction was open (what SQLite does with a killed writer's), under a new
   ``Ledger`` and a new connector: every start after it is the production start path all the
   same, and a run spends its time on the connector, not on parsing the schema and compiling
   the same statements again (a third of a run when every restart opened anew). Histories do
   not change: nothing the connector decides depends on which connection it was given.
"""

from __future__ import annotations

import atexit
import logging
import os
import random
import shutil
import sqlite3
import tempfile
from bisect import bisect_right
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from itertools import accumulate
from pathlib import Path

from core.destinations import Destination
from core.edges import Actor
from core.log_lines import Transition
from core.posting import PostOutcome, Refused, not_created_cause
from core.snapshots import StopReason
from shell.ledger import tasks
from shell.ledger.connection import Ledger, open_ledger
from tests.sim.whole import checks, inbox, last_word, person, rules, token_outage, words
from tests.sim.whole.basecamp import LAGGING, ROUTED, UNROUTED, Crash, Kind, Listing, Post, SimBasecamp
from tests.sim.whole.connector import STILL_RUNNING_EVERY, Failures, SimConnector
from tests.sim.whole.workers import Worker, Workers
from tests.support.ids import EVENTS_FROM, set_sequences_apart

KINDS = (Kind.mention,) * 7 + (Kind.subscribed, Kind.assigned, Kind.completed)
OUTAGES = (600.0, 3 * 3600.0, 8 * 3600.0)  # a listing outage's length: ten failed listings take ~2 h
SHUTDOWN_BOUND = 30.0  # the flush's bound at a stop, seconds

SCRATCH = os.environ.get("SIM_DIR") or (
    "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None
)


class Violation(AssertionError):
    def __init__(self, seed: int, step: int, check: str, detail: str, history: list[str]) -> None:
        super().__init__(f"seed {seed} step {step}: {check}: {detail}")
        self.seed, self.step, self.check, self.detail, self.history = seed, step, check, detail, history


class _SeededSecrets:
    """The ledger's ``secrets``, drawn from the run's random (rule 1)."""

    def __init__(self, rng: random.Random) -> None:
        self._rng = rng

    def token_urlsafe(self, size: int) -> str:
        return "tok" + "".join(self._rng.choice("abcdefghijklmnopqrstuvwxyz0123456789") for _ in range(size))

    def token_hex(self, size: int) -> str:
        return "".join(self._rng.choice("0123456789abcdef") for _ in range(size * 2))


_TEMPLATE: dict[str, Path] = {}


def template_ledger() -> Path:
    """A migrated ledger made once per process (with the simulation's audit), copied per run;
    removed at the exit of the process that made it (``bin/simulate`` makes it before its pool forks)."""
    if "path" not in _TEMPLATE:
        directory = Path(tempfile.mkdtemp(prefix="sim-template-", dir=SCRATCH))
        atexit.register(shutil.rmtree, directory, ignore_errors=True)
        os.chmod(directory, 0o700)
        path = directory / "ledger.sqlite3"
        with open_ledger(path, unsynced=True) as ledger, ledger.write() as connection:
            for statement in checks.AUDIT_SQL:
                connection.execute(statement)
            set_sequences_apart(connection)  # the world's ids apart (tests.support.ids)
        _TEMPLATE["path"] = path
    return _TEMPLATE["path"]


@dataclass
class Truth:
    """What happened, as the connector cannot see it (for the checks)."""

    requested_in_era: set[int] = field(default_factory=set)
    era_outcome: dict[int, PostOutcome | None] = field(default_factory=dict)
    not_created: dict[int, list[tuple[datetime, Refused]]] = field(default_factory=dict)  # answers unsettled
    redispatched: Counter[int] = field(default_factory=Counter)
    audit_seen: int = 0
    last_seen: tuple[int, int] = (0, 0)  # messages stored, workers told to acknowledge
    last_changes: tuple[object, int] | None = None  # (connector, its connection's total_changes)
    handed_seen: tuple[int, int] = (0, 0)  # instructions handed, redispatches: when exposures were judged
    violations: list[tuple[str, str]] = field(default_factory=list)


class Run:
    def __init__(self, seed: int, steps: int, coverage: Counter[str] | None = None) -> None:
        self.seed, self.steps = seed, steps
        self.rng = random.Random(seed)
        self.coverage: Counter[str] = coverage if coverage is not None else Counter()
        self.history: list[str] = []
        self.truth = Truth()
        self.directory = Path(tempfile.mkdtemp(prefix="sim-run-", dir=SCRATCH))
        os.chmod(self.directory, 0o700)
        (self.directory / "state").mkdir(mode=0o700)
        self.path = self.directory / "state" / "ledger.sqlite3"
        shutil.copyfile(template_ledger(), self.path)
        os.chmod(self.path, 0o600)
        self.keeper = sqlite3.connect(self.path)  # rule 5
        self.restarts = 0
        self.keeper.execute("PRAGMA user_version").fetchone()  # opens the WAL; parses no schema
        (self.directory / "sessions").mkdir(mode=0o700)
        from shell.clock import FakeClock

        self.clock = FakeClock()
        self.basecamp = SimBasecamp(self.clock, self.rng, self, on_fault=self.cover)
        inbox.attach(self)  # the agent's inbox (tests.sim.whole.inbox)
        self.workers = Workers(self.rng, self.basecamp, self.cover)
        self.next_event = EVENTS_FROM
        self.failures = Failures()
        self.actors: frozenset[Actor] = frozenset({Actor.automatic})
        self.stopping: list[int] | None = None  # the intents requested during a stop, while it runs
        self.slow_at_stop = 0.0
        self.connector = self._connector()
        self.menu = self._menu()

    # -- the run ----------------------------------------------------------------------------

    def play(self) -> None:
        tasks.secrets = _SeededSecrets(self.rng)  # type: ignore[assignment]
        logging.getLogger("connector").addHandler(self.failures)
        try:
            self._boot()
            for number in range(1, self.steps + 1):
                name, action, actors = self._choose()
                self.history.append(f"{number:4d} {name}")
                self.actors = actors
                self._guarded(action)
                self._check(number)
            self._quiesce()
            self._check(self.steps + 1, final=True)
        finally:
            logging.getLogger("connector").removeHandler(self.failures)
            self.connector.close()
            self.keeper.close()
            shutil.rmtree(self.directory, ignore_errors=True)

    def _check(self, number: int, final: bool = False) -> None:
        for failure in self.failures.found:  # what a loop of the connector caught and logged
            self.truth.violations.append(("connector-never-fails", failure))
        self.failures.found.clear()
        found = checks.after_step(self, final)
        if found:
            check, detail = found[0]
            raise Violation(self.seed, number, check, detail, self.history)

    def cover(self, path: str) -> None:
        self.coverage[path] += 1

    def note(self, line: str) -> None:
        self.history.append(f"     {line}")

    def _guarded(self, action: Callable[[], None]) -> None:
        try:
            action()
        except Crash as crash:
            self.note(f"crash: {crash}")
            self.cover("crash: " + str(crash).split(",")[0])
            self._restart()
        except Exception as error:  # the connector's own code failed: a bug the database's walls caught
            self.truth.violations.append(("connector-never-fails", f"{type(error).__name__}: {error}"))

    def _survivor(self) -> Ledger | None:
        """Rule 6: None for a run's first restart (the dead connection closed, the file opened
        anew), after it the dead process's SQLite connection, rolled back, under a new Ledger."""
        dead = self.connector.ledger
        self.restarts += 1
        if self.restarts == 1:
            self.connector.close()
            return None
        connection = dead._connection  # the one place a connection outlives its process
        if connection.in_transaction:
            connection.rollback()
        return Ledger(connection, dead.path, read_only=False, clock=self.clock, busy_timeout=dead.busy_timeout)

    def _connector(self, survivor: Ledger | None = None) -> SimConnector:
        connector = SimConnector(self.path, self.directory / "sessions", self.directory / "work",
                                 self.clock, self.basecamp, self.workers, self._seen, survivor)
        connector.dispatcher.on_stop = self._workers_stopped
        return connector

    def _seen(self, said: Transition) -> None:
        """The connector's event log (``Connector.on_event``): what the repair found first."""
        if said.fields.get("lane") == "repair":
            self.cover("repair: found an event the live lane lost")

    def _boot(self) -> None:
        self.actors = frozenset({Actor.automatic, Actor.admission, Actor.dispatcher})
        self.connector.boot()
        if self.connector.held:
            self.cover("recovery: attempt held for a person")

    def _restart(self) -> None:
        """The process died (SIGKILL): a new one opens the same file and starts (rule 2)."""
        survivor = self._survivor()
        self.workers.connector_died()
        self.basecamp.held_until = 0.0  # a Retry-After the dead process knew died with it
        self.basecamp.cable_after = self.next_event - 1  # a new subscription hears only what comes next
        self.connector = self._connector(survivor)
        self.cover("restart")
        self._guarded(self._boot)

    # -- the menu ------------------------------------------------------------------------------

    def _menu(self) -> tuple[list[int], list[tuple[str, Callable[[], None], frozenset[Actor]]]]:
        """The steps and their weights (rule 2), made once a run: (running totals, entries)."""
        auto = Actor.automatic
        menu: list[tuple[int, str, Callable[[], None], frozenset[Actor]]] = [
            (10, "mention", self._mention, frozenset({auto})),
            (12, "intake", self._intake, frozenset({auto, Actor.admission})),
            (6, "live", self._live, frozenset({auto, Actor.admission})),
            (10, "dispatch", self._dispatch, frozenset({auto, Actor.dispatcher})),
            (22, "worker", self._worker, frozenset({auto, Actor.worker, Actor.dispatcher})),
            (6, "supervision", self._supervision, frozenset({auto, Actor.dispatcher})),
            (14, "outbox", self._outbox, frozenset({auto})),
            (10, "time", self._time, frozenset({auto})),
            (8, "fault", self._fault, frozenset({auto})),
            (3, "crash", self._crash, frozenset({auto, Actor.admission, Actor.dispatcher, Actor.worker})),
            (1, "stop and start", self._stop_and_start, frozenset({auto, Actor.admission, Actor.dispatcher})),
            (6, "person", lambda: person.act(self), frozenset({auto, Actor.person})),
            (2, "braked mention", lambda: inbox.brake(self), frozenset({auto})),
            (1, "long outage", lambda: inbox.outage(self), frozenset({auto})),
            (1, "inbox fault", lambda: inbox.fault(self), frozenset({auto})),
            (1, "token outage", lambda: token_outage.outage(self), frozenset({auto})),
        ]
        return list(accumulate(weight for weight, *_ in menu)), [(name, action, actors) for _, name, action, actors in menu]

    def _choose(self) -> tuple[str, Callable[[], None], frozenset[Actor]]:
        totals, entries = self.menu
        return entries[bisect_right(totals, self.rng.randrange(totals[-1]))]

    def _mention(self) -> None:
        """Basecamp's next feed event: a mention, or one of the matrix's other triggers (``basecamp.Kind``)."""
        event_id = self.next_event
        self.next_event += 1
        bucket = ROUTED if self.rng.random() < 0.85 else UNROUTED
        recording = 555 if self.rng.random() < 0.3 else 1_000_000 + event_id
        kind = self.rng.choice(KINDS)
        chat = kind is Kind.mention and self.rng.random() < 0.2
        self.basecamp.mention(event_id, bucket, recording, chat, kind)
        self.cover(f"feed: {kind}")
        self.note(f"event {event_id} ({kind}) in {'routed' if bucket == ROUTED else 'unrouted'} {recording}{' chat' if chat else ''}")

    def _intake(self) -> None:
        self.connector.connector.intake_turn()

    def _live(self) -> None:
        """The live lane's turn: the cable's next frame, handled as its connection hands it over."""
        frame = self.basecamp.hear()
        if frame is None:
            return
        self.note(f"live: {type(frame).__name__.lower()}")
        self.cover(f"live: {type(frame).__name__.lower()}")
        self.connector.lane.on_frame(frame)  # what LiveLane._hear does with each frame it reads

    def _dispatch(self) -> None:
        held = checks.hold_stands(self)
        for launch in self.connector.connector.dispatch_turn():
            self.note(f"launch task {launch.task_id} events {launch.event_ids}")
            if held:
                self.truth.violations.append(
                    ("nothing-launched-under-a-hold", f"task {launch.task_id} launched under the hold"))
        if held:
            self.cover("dispatch under a hold")

    def _worker(self) -> None:
        dispatcher = self.connector.dispatcher
        choices: list[object] = [*dispatcher.pending, *self.workers.alive.values()]
        if not choices:
            return
        chosen = self.rng.choice(choices)
        if not isinstance(chosen, Worker):
            dispatcher.pending.remove(chosen)  # type: ignore[arg-type]
            started = dispatcher.spawned(chosen.launch, chosen.work_dir)  # type: ignore[attr-defined]
            self.note(f"spawn task {chosen.launch.task_id}: {'pid ' + str(started.pid) if started else 'failed'}")  # type: ignore[attr-defined]
            if started is None:
                dispatcher.forget(chosen.launch.task_id)  # type: ignore[attr-defined]
            else:
                self.connector.last_tick[chosen.launch.attempt_id] = self.clock.monotonic()  # type: ignore[attr-defined]
            return
        reason = self.workers.act(chosen, self.connector.ledger)
        self.note(f"worker {chosen.attempt_id[-6:]} ({chosen.temperament}) on {chosen.current}"
                  + (f": exits {reason}" if reason else ""))
        if reason is not None:
            self._ended(chosen, reason)

    def _ended(self, worker: Worker, reason: StopReason) -> None:
        assert worker.started is not None
        if not worker.supervised:
            self.workers.alive.pop(worker.started.pid, None)  # its process exits; nobody settles it
            self.cover("orphan worker exits")
            return
        self.connector.dispatcher.supervised(worker.launch, worker.started, reason)  # type: ignore[arg-type]
        self.connector.dispatcher.forget(worker.launch.task_id)
        self.cover(f"attempt ended: {reason}")

    def _supervision(self) -> None:
        """The supervising threads' turn: still-running ticks and deadlines, per the clock."""
        now = self.clock.now()
        for worker in list(self.workers.alive.values()):
            if not worker.supervised:
                continue
            if now >= self._deadline_of(worker):
                self._ended(worker, StopReason.deadline)
                continue
            last = self.connector.last_tick.get(worker.attempt_id, self.clock.monotonic())
            if self.clock.monotonic() - last >= STILL_RUNNING_EVERY:
                self.connector.last_tick[worker.attempt_id] = self.clock.monotonic()
                self.connector.dispatcher.still_running(worker.launch)
                self.cover("still-running tick")

    def _deadline_of(self, worker: Worker) -> datetime:
        with self.connector.ledger.read() as connection:
            (deadline,) = connection.execute(
                "SELECT deadline_at FROM tasks WHERE id = ?", (worker.launch.task_id,)).fetchone()
        from core.timestamps import parse_timestamp

        return parse_timestamp(deadline)

    def _outbox(self) -> None:
        outbox = self.connector.outbox
        if self.basecamp.rate_limited_for() > 0:
            self.cover("outbox ran during a 429's Retry-After")
        match self.rng.randrange(3):
            case 0:
                outbox.run_once()
            case 1:
                outbox.flush(deadline=self.clock.monotonic() + 60)
            case _:
                outbox.reconcile(deadline=self.clock.monotonic() + 60)

    def _time(self) -> None:
        seconds = self.rng.choice([1, 10, 29, 31, 61, 90, 300, 601, 1800, 3700])
        self.clock.advance(seconds)
        self.note(f"+{seconds}s")

    def _fault(self) -> None:
        basecamp = self.basecamp
        match self.rng.randrange(13):
            case 0 | 1 | 8:
                basecamp.next_posts.append(self.rng.choice(list(Post)))
                self.note(f"next post: {basecamp.next_posts[-1]}")
            case 2:
                basecamp.next_listings.append(self.rng.choice(list(Listing)))
                self.note(f"next listing: {basecamp.next_listings[-1]}")
            case 3:
                basecamp.lag_seconds = self.rng.choice([0.0, 0.0, 20.0, 90.0, LAGGING])
                self.note(f"lag {basecamp.lag_seconds}s")
            case 4:
                basecamp.feed_down = not basecamp.feed_down
                self.note(f"feed down: {basecamp.feed_down}")
            case 5:
                basecamp.reads.append(self.rng.choice(["fail", "throttled"]))
                self.note(f"next read: {basecamp.reads[-1]}")
            case 6:
                basecamp.slow_post_seconds = self.rng.choice([10.0, 50.0, 70.0])
                self.note(f"next post slow {basecamp.slow_post_seconds}s")
            case 9:  # Basecamp under load: the cable drops what it would push, the feed blips once
                basecamp.overflow, basecamp.feed_blips = True, 1
                self.note("under load: next cable frame an overflow, next feed request fails")
            case 10:
                basecamp.feed_blips = self.rng.choice([1, 2])
                self.note(f"next {basecamp.feed_blips} feed requests fail")
            case 11:
                if basecamp.feed:
                    basecamp.epoch_after_id = max(basecamp.epoch_after_id, basecamp.feed[-1].event_id - self.rng.choice([0, 1]))
                    self.note(f"the feed's epoch passes: after {basecamp.epoch_after_id}")
            case 12:
                basecamp.listings_down_until = self.clock.monotonic() + self.rng.choice(OUTAGES)
                self.note(f"listings down for {basecamp.listings_down_until - self.clock.monotonic():g}s")
            case _:
                self.workers.unverifiable = self.rng.random() < 0.3
                self.note(f"groups unverifiable: {self.workers.unverifiable}")

    def _crash(self) -> None:
        where = self.rng.choice(["now", "now", "before_landing", "after_landing", "during_listing",
                                 "during_read", "spawn_before", "spawn_before", "spawn_after"])
        self.note(f"crash armed: {where}")
        if where == "now":
            raise Crash("now, between steps")
        if where.startswith("spawn_"):
            self.workers.crash_at_spawn = where.removeprefix("spawn_")
        else:
            self.basecamp.crash_at = where

    def _stop_and_start(self) -> None:
        """SIGTERM: the connector's own stop (``Connector.stop``) within ``SHUTDOWN_BOUND``, then a
        clean start."""
        connector = self.connector
        with connector.dispatcher._lock:
            supervised = {running.launch.attempt_id for running in connector.dispatcher._running.values()}
        deadline = self.clock.monotonic() + SHUTDOWN_BOUND
        self.stopping, self.slow_at_stop = [], 0.0
        try:
            settled = connector.connector.stop(timedelta(seconds=SHUTDOWN_BOUND))
        finally:
            requested, self.stopping = self.stopping, None
        if self.slow_at_stop and not self.basecamp.slow_post_seconds:
            self.cover("stop: the flush met a slow Basecamp")
        rules.flushed_within(self, deadline)
        rules.stopped(self, settled, supervised, deadline, requested)
        survivor = self._survivor()
        self.workers.connector_died()
        self.basecamp.cable_after = self.next_event - 1
        self.connector = self._connector(survivor)
        self.cover("stopped and started")
        self._boot()

    def _workers_stopped(self) -> None:
        """The dispatcher's stop (``SimDispatcher.on_stop``): each launch not yet spawned is spawned
        and each worker supervised ends ``shutdown`` and is settled, as their threads would; then
        half the time the stop's flush meets a slow Basecamp (its next create takes longer than the
        bound)."""
        dispatcher = self.connector.dispatcher
        for pending in list(dispatcher.pending):
            dispatcher.pending.remove(pending)
            started = dispatcher.spawned(pending.launch, pending.work_dir)
            if started is not None:
                worker = self.workers.alive[started.pid]
                self._ended(worker, StopReason.shutdown)
            else:
                dispatcher.forget(pending.launch.task_id)
        for worker in list(self.workers.alive.values()):
            if worker.supervised:
                self._ended(worker, StopReason.shutdown)
        if self.rng.random() < 0.5:
            self.basecamp.slow_post_seconds = self.rng.choice([20.0, 50.0])
        self.slow_at_stop = self.basecamp.slow_post_seconds

    # -- quiescence ------------------------------------------------------------------------------

    def _quiesce(self) -> None:
        """Rule 4: Basecamp heals, and every part runs until nothing moves."""
        self.history.append("     -- quiescence --")
        basecamp = self.basecamp
        basecamp.next_posts.clear()
        basecamp.next_listings.clear()
        basecamp.reads.clear()
        basecamp.crash_at, basecamp.feed_down, basecamp.slow_post_seconds = None, False, 0.0
        basecamp.feed_blips, basecamp.overflow = 0, False
        self.workers.crash_at_spawn, self.workers.unverifiable = None, False
        inbox.heal(self)
        token_outage.heal(self)
        if checks.hold_stands(self):
            self.actors = frozenset({Actor.automatic, Actor.person})
            person.release_hold(self)
        for _ in range(40):
            self.clock.advance(3700)
            self.actors = frozenset({Actor.automatic, Actor.admission, Actor.dispatcher, Actor.worker})
            self._guarded(self._intake)
            self._guarded(self._dispatch)
            for _ in range(30):  # the workers' actions, with the supervisors' ticks and the outbox between them
                if not self.connector.dispatcher.pending and not self.workers.alive:
                    break
                self._guarded(self._worker)
                self._guarded(self._supervision)
                self._guarded(lambda: self.connector.outbox.run_once() and None)
                self._guarded(lambda: self.connector.outbox.reconcile() and None)
            self._guarded(self._supervision)
            self._guarded(lambda: self.connector.outbox.run_once() and None)
            self._guarded(lambda: self.connector.outbox.reconcile() and None)
            self._guarded(lambda: self.connector.outbox.flush() and None)
            self._check(self.steps + 1)
            if not checks.busy(self):
                return

    # -- what Basecamp tells the run (basecamp.Attribution) ------------------------------------

    def request_starts(self, destination: Destination, body: str) -> int:
        intent_id = checks.request_starts(self, destination, body)
        if self.stopping is not None:
            self.stopping.append(intent_id)
        last_word.meanwhile(self, intent_id)
        words.meanwhile(self, intent_id)
        return intent_id

    def alone(self, intent_id: int, destination: Destination, body: str) -> bool:
        return checks.alone(self, intent_id, destination, body)

    def request_ended(self, intent_id: int, outcome: PostOutcome | None) -> None:
        self.truth.era_outcome[intent_id] = outcome
        last_word.request_ended(self, intent_id, outcome)
        token_outage.request_ended(self, intent_id, outcome)
        if isinstance(outcome, Refused) and not_created_cause(outcome) is not None:
            self.truth.not_created.setdefault(intent_id, []).append((self.clock.now(), outcome))
        if isinstance(outcome, Refused) and not_created_cause(outcome) is not None:
            # provably nothing was created: the intent goes back to pending, and its retry is a
            # request of a new era (``core.posting``), not a second one of this
            self.truth.requested_in_era.discard(intent_id)
            self.cover("post: retried after nothing was created")
        self.note(f"post for intent {intent_id}: {type(outcome).__name__.lower() if outcome else 'no answer'}")
        if outcome is not None:
            self.cover(f"post: {type(outcome).__name__.lower()}")

    def read(self) -> sqlite3.Connection:
        return self.connector.ledger.read()  # type: ignore[return-value]
