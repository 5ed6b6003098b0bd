"""A seeded simulation of the outbox, in the spirit of TigerBeetle's VOPR: random interleavings of
the transitions that write intents, a Basecamp that lands, refuses, loses answers, lags and
cannot list, a clock that jumps, crashes at the worst moments, a careful person, and the hold --
with the outbox's promises checked after every step.

Each hypothesis example is one run: a fresh owner-only directory with a real SQLite ledger,
a ``FakeClock``, a ``FakeBasecamp`` behind ``SimBasecamp`` (which attributes every request to
the intent it was claimed for, and can crash the process before or after the message is
stored), and a current ``Outbox``. A crash discards the ``Outbox`` and its ledger connection;
the restart opens the same file again and calls ``start(deadline)`` first, as the connector
does. A failure shrinks to a minimal sequence of steps, printed with a ``@reproduce_failure``
blob so it replays.

The steps: admission's verdicts through ``LedgerWorld`` (requests, some on one shared card so
their guard boosts have the very same words; ``no_route`` blocks and the route arriving);
the dispatcher's tasks and workers (get_dispatch, a worker's own acknowledgement boost and
replies by the same agent, reports, still-running ticks, the attempt's end); any of those
committing while a request is in flight; the hold on and off; the clock; the next posts'
and listings' behaviour, lag, slow requests and listings, listings down, Basecamp
unreachable; flush, run_once, reconcile (any age, limit, deadline), start, a running
connector's minutes of ticks; a crash armed before or after the message lands or during a
listing, or a crash now; a careful person deciding through ``shell.ledger.resolution``
(sent when the message exists, resend only when it is truly absent, or abandon), and a
person trying what must be refused.

Checked after every step:

1. never two messages for one intent: every message the agent has at any destination is
   attributed to the one claimed intent whose request stored it (or is a worker's own
   acknowledgement), each intent has at most one message (the simulated person is careful:
   resend only when the message is truly absent, mark sent when it exists), and per
   (destination, words) no more messages than intents there that may have one;
2. a sent intent's receipt is a message at its destination with its words, created by its
   own request, and no receipt is owned by two intents; a receipt never changes;
3. every state change (read from an audit trigger this test adds to its ledger, and again
   from snapshot to snapshot) is an edge of ``core.edges.INTENT_EDGES``, taken by its actor:
   the connector never takes a person's edge;
4. (at the end of the run) after hours on the clock and the outbox run to quiescence with
   listings answering: every intent is sent, canceled, pending-and-due-later or
   pending-while-held, or indeterminate/abandoned with a note -- nothing stays sending;
5. no request is made while the hold marker stands (checked at the request);
6. every refused intent carries the refused note, and only refused ones do;

and beside them: a request is made only for an intent freshly claimed (sending, committed,
not yet requested in its era); a guard is fired from its claim, and a worker told to
acknowledge itself never also gets the connector's guard; a receipt returned is recorded;
nothing stays sending after ten failed listings (invariant 10).

Counted, not asserted: a still-running notice or a holding reply requested after a
transition that committed between its claim and its request made it late. No check can close
that window: whatever the sender checks, the worker (another process) can report, or admission
re-decide, after the check and before the request lands, and a request cannot be recalled. The
design bounds it instead: at most that one message, recorded sent, never doubled; and an
attempt that ends while its still-running notice is sending writes the short completion notice,
which follows it (``core.message_kinds``). The two tests at the end of this file pin both.

Budget: ``OUTBOX_SIM_EXAMPLES`` (default 200) examples of ``OUTBOX_SIM_STEPS`` (default 50) steps;
``OUTBOX_SIM_DIR`` names where run directories go (default ``/dev/shm`` when writable, else the
system's temporary directory); ``OUTBOX_SIM_STATS=1`` prints what the runs covered at exit.
Replay a failure with the ``@reproduce_failure`` blob hypothesis prints, or with
``--hypothesis-seed=<seed>``; the example database (``.hypothesis/``) replays it first anyway.
"""

from __future__ import annotations

import atexit
import os
import shutil
import sqlite3
import sys
import tempfile
from collections import Counter, deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule
from returns.result import Success

from core import notes
from core.destinations import Destination, MessageKind
from core.edges import INTENT_EDGES, Actor, IntentState
from core.posting import MAX_RECONCILE_FAILURES, Created, PostOutcome, Refused, Uncertain, not_created_cause
from core.resolution import Abandon, Resend, Sent
from core.templates import GUARD_ACKNOWLEDGEMENT
from core.text import message_text
from core.timestamps import parse_timestamp
from shell.basecamp.errors import ListingFailed
from shell.clock import FakeClock
from shell.connector import StartParts, settle_previous
from shell.ledger.connection import Ledger, open_ledger
from shell.ledger.resolution import ResolutionRefused, resolve_intent, waits_for_person
from shell.outbox import Outbox
from tests.support.fake_basecamp import AGENT_ID, FakeBasecamp, Listing, Post
from tests.support.ids import EVENTS_FROM, set_sequences_apart
from tests.support.ledger_world import CAMPFIRE, PROJECT, LedgerWorld, comment_on

EXAMPLES = int(os.environ.get("OUTBOX_SIM_EXAMPLES", "200"))
STEPS = int(os.environ.get("OUTBOX_SIM_STEPS", "50"))

SCRATCH = os.environ.get("OUTBOX_SIM_DIR") or (
    "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None
)
"""Where each run's owner-only directory is made. A crash here is a process's, never the disk's,
so a memory-backed file system keeps the simulation's fsyncs from being its cost."""

STATS: Counter[str] = Counter()
"""What the runs covered; printed at exit when ``OUTBOX_SIM_STATS`` is set."""


def _print_stats() -> None:
    for name, count in sorted(STATS.items()):
        print(f"outbox-sim {name}: {count}", file=sys.stderr)


if os.environ.get("OUTBOX_SIM_STATS"):
    atexit.register(_print_stats)

SHARED_RECORDING = 555  # two requests here have identical guard boosts: a rival for each other
PERSON = "person:26909558"
QUIET_STATES = frozenset({IntentState.sent, IntentState.canceled, IntentState.indeterminate,
                          IntentState.abandoned})
MAY_HAVE_A_MESSAGE = frozenset({IntentState.sending, IntentState.sent, IntentState.indeterminate,
                                IntentState.abandoned})

# The audit the simulation adds to its own ledger: every insert and every change of state or
# receipt of an outbox row, in order, with the note the row carried before the change.
AUDIT_SQL = (
    "CREATE TABLE IF NOT EXISTS sim_audit (seq INTEGER PRIMARY KEY AUTOINCREMENT,"
    " intent_id INTEGER NOT NULL, old_state TEXT, new_state TEXT NOT NULL, old_note TEXT,"
    " old_receipt INTEGER, new_receipt INTEGER, new_note TEXT)",
    "CREATE TRIGGER IF NOT EXISTS sim_audit_insert AFTER INSERT ON outbox BEGIN"
    " INSERT INTO sim_audit (intent_id, old_state, new_state, old_note, old_receipt, new_receipt)"
    " VALUES (NEW.id, NULL, NEW.state, NULL, NULL, NEW.receipt_id); END",
    "CREATE TRIGGER IF NOT EXISTS sim_audit_update AFTER UPDATE ON outbox"
    " WHEN NEW.state IS NOT OLD.state OR NEW.receipt_id IS NOT OLD.receipt_id BEGIN"
    " INSERT INTO sim_audit (intent_id, old_state, new_state, old_note, old_receipt, new_receipt, new_note)"
    " VALUES (NEW.id, OLD.state, NEW.state, OLD.note, OLD.receipt_id, NEW.receipt_id, NEW.note); END",
)


class Crash(BaseException):
    """The connector process died here."""


@dataclass(frozen=True)
class Row:
    id: int
    kind: str
    state: IntentState
    note: str
    receipt_id: int | None
    destination: Destination
    body: str
    event_id: int | None
    attempt_id: str | None
    not_before: str
    reconcile_failures: int


@dataclass
class EventModel:
    id: int
    recording: int
    reply_kind: str
    state: str  # seen, admitted, queued, unacknowledged, blocked, discarded, dispatched, returned, completed
    task_id: int | None = None


@dataclass
class TaskModel:
    id: int
    event_ids: tuple[int, ...]
    attempt_id: str | None = None
    live: bool = False  # its attempt is running
    ended: bool = False


def reachable(source: IntentState, target: IntentState, actors: frozenset[Actor]) -> bool:
    """Whether ``target`` can follow ``source`` through the table's edges ``actors`` may take."""
    seen = {source}
    frontier = deque([source])
    while frontier:
        state = frontier.popleft()
        if state == target:
            return True
        for edge in INTENT_EDGES.edges:
            if edge.source == state and edge.actors & actors and edge.target not in seen:
                seen.add(edge.target)
                frontier.append(edge.target)
    return False


class SimBasecamp:
    """The outbox's Poster: a ``FakeBasecamp`` with the simulation's eyes and its crashes."""

    def __init__(self, sim: OutboxSimulation, fake: FakeBasecamp) -> None:
        self._sim = sim
        self._fake = fake

    def post(self, destination: Destination, body: str, deadline: float | None = None) -> PostOutcome:
        intent_id = self._sim.request_starts(destination, body)
        before = self._sim.agent_message_ids(destination)
        try:
            if self._sim.armed_crash == "after_landing":
                self._sim.armed_crash = None
                self._fake.posts.insert(0, Post.land)
                self._fake.post(destination, body, deadline)
                raise Crash("after the message was stored, before its receipt was recorded")
            unscripted = not self._fake.posts
            if unscripted:
                self._fake.posts.append(self._sim.unscripted_post())
            try:
                outcome = self._fake.post(destination, body, deadline)  # before_post may crash
            except Crash:
                if unscripted:
                    self._fake.posts.clear()
                raise
        finally:
            self._sim.request_ended(intent_id, destination, before)
        self._sim.outcome_returned(intent_id, outcome)
        return outcome

    def list(self, destination, since, creator_id, deadline):  # type: ignore[no-untyped-def]
        if self._sim.armed_crash == "during_listing":
            self._sim.armed_crash = None
            raise Crash("during a listing")
        slow, self._sim.slow_listing_seconds = self._sim.slow_listing_seconds, 0
        if slow:  # the client gives up at the bound it was handed, as shell.basecamp.client does
            allowed = max(0.0, deadline - self._sim.clock.monotonic())
            self._sim.clock.advance(min(slow, allowed))
            if slow >= allowed:
                raise ListingFailed("the listing ran out of time")
        if self._sim.listings_down:
            raise ListingFailed("Basecamp's listings are down")
        return self._fake.list(destination, since, creator_id, deadline)

    def rate_limited_for(self) -> float:
        return self._fake.rate_limited_for()

    def probe(self, deadline: float) -> None:
        self._fake.probe(deadline)


class OutboxSimulation(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.directory = Path(tempfile.mkdtemp(prefix="outbox-sim-", dir=SCRATCH))
        os.chmod(self.directory, 0o700)
        self.path = self.directory / "state" / "ledger.sqlite3"
        self.clock = FakeClock()
        self.ledger: Ledger = open_ledger(self.path, clock=self.clock)
        with self.ledger.write() as connection:
            for statement in AUDIT_SQL:
                connection.execute(statement)
            set_sequences_apart(connection)
        self.world = LedgerWorld(self.ledger)
        self.fake = FakeBasecamp(self.clock)
        self.fake.before_post = self._before_post
        self.poster = SimBasecamp(self, self.fake)
        self.outbox = Outbox(self.ledger, self.poster, AGENT_ID)
        # the world
        self.next_event = EVENTS_FROM
        self.events: dict[int, EventModel] = {}
        self.tasks: dict[int, TaskModel] = {}
        self.worker_told_to_acknowledge: set[int] = set()  # events whose get_dispatch said canceled
        self.worker_messages: set[int] = set()
        # scripted behaviour and crashes
        self.slow_request_seconds = 0
        self.slow_listing_seconds = 0
        self.listings_down = False
        self.every_post: tuple[Post, ...] = (Post.land,)  # unscripted posts do these in turn
        self.unscripted_posts = 0
        self.armed_crash: str | None = None
        self.in_flight: Callable[[], None] | None = None
        # ground truth, kept by SimBasecamp
        self.requested_in_era: set[int] = set()  # intents requested since their last (re)start
        self.era_outcome: dict[int, PostOutcome] = {}
        self.retrying: set[int] = set()  # whose last request provably never reached Basecamp
        self.ever_retried: set[int] = set()
        self.messages_of: dict[int, list[int]] = {}
        self.owner_of_message: dict[int, int] = {}
        self.requests = 0
        # checking
        self.rows: dict[int, Row] = {}
        self.audit_seen = 0
        self.person_acted = False
        self.clean = True
        self.restarts = 0

    # -- the machinery under SimBasecamp ----------------------------------------------------

    def _before_post(self, destination: Destination, body: str) -> None:
        slow, self.slow_request_seconds = self.slow_request_seconds, 0
        self.clock.advance(slow)  # a slow request: its answer comes this much later
        if self.armed_crash == "before_landing":
            self.armed_crash = None
            raise Crash("after the claim, before the request reached Basecamp")

    def request_starts(self, destination: Destination, body: str) -> int:
        """A request is about to leave: which intent is it, and may it leave at all?"""
        self.requests += 1
        with self.ledger.read() as connection:
            held = connection.execute("SELECT 1 FROM hold_marker").fetchone() is not None
            sending = [row for row in self._read_rows(connection) if row.state is IntentState.sending]
            # a retry of a request that never reached Basecamp starts a new era: one more request
            fresh = [row for row in sending if row.id not in self.requested_in_era or row.id in self.retrying]
            assert not held, f"invariant 5: a request to {destination} while the hold marker stands"
            assert len(fresh) == 1, (
                f"invariant 3/4: a request to {destination} must follow exactly one fresh claim; "
                f"sending and not yet requested: {[row.id for row in fresh]}"
            )
            (row,) = fresh
            assert (row.destination, row.body) == (destination, body), (
                f"the request for intent {row.id} went to {destination} with other words"
            )
            if row.kind == "guard_ack" and row.event_id is not None:
                guards = [
                    guard
                    for (guard,) in connection.execute(
                        "SELECT guard FROM task_events WHERE event_id = ?", (row.event_id,)
                    )
                ]
                assert not {"armed", "canceled"} & set(guards), (
                    f"invariant 9: guard intent {row.id} requested while its task rows read {guards}"
                )
        self.requested_in_era.add(row.id)
        self.retrying.discard(row.id)
        self.era_outcome.pop(row.id, None)
        action, self.in_flight = self.in_flight, None
        if action is not None:
            action()  # another part of the connector commits while this request is in flight
            self._observe_a_stale_request(row)
        return row.id

    def _observe_a_stale_request(self, row: Row) -> None:
        """Counted, not asserted: the claim's check is not the request's (see the last two tests)."""
        with self.ledger.read() as connection:
            if row.kind == "still_running" and row.attempt_id is not None:
                (state,) = connection.execute(
                    "SELECT state FROM attempts WHERE id = ?", (row.attempt_id,)
                ).fetchone()
                if state == "ended":
                    STATS["stale request: still-running after its attempt ended"] += 1
            if row.kind == "holding_reply" and row.event_id is not None:
                (state,) = connection.execute(
                    "SELECT state FROM events WHERE id = ?", (row.event_id,)
                ).fetchone()
                if state != "blocked":
                    STATS["stale request: holding reply after its record moved on"] += 1

    def request_ended(self, intent_id: int, destination: Destination, before: set[int]) -> None:
        for message_id in sorted(self.agent_message_ids(destination) - before):
            self.messages_of.setdefault(intent_id, []).append(message_id)
            self.owner_of_message[message_id] = intent_id

    def outcome_returned(self, intent_id: int, outcome: PostOutcome) -> None:
        self.era_outcome[intent_id] = outcome
        STATS[f"request: {type(outcome).__name__.lower()}"] += 1
        if isinstance(outcome, Refused) and not_created_cause(outcome) is not None:
            self.retrying.add(intent_id)
            self.ever_retried.add(intent_id)
            STATS["request: never reached Basecamp"] += 1

    def agent_message_ids(self, destination: Destination) -> set[int]:
        return {
            stored.message.id
            for stored in self.fake.stored.get(destination, [])
            if stored.message.creator_id == AGENT_ID
        }

    # -- reading the ledger -----------------------------------------------------------------

    @staticmethod
    def _read_rows(connection: sqlite3.Connection) -> list[Row]:
        return [
            Row(
                id=identifier,
                kind=kind,
                state=IntentState(state),
                note=note,
                receipt_id=receipt_id,
                destination=Destination(MessageKind(message_kind), bucket_id, recording_id),
                body=body,
                event_id=event_id,
                attempt_id=attempt_id,
                not_before=not_before,
                reconcile_failures=failures,
            )
            for (identifier, kind, state, note, receipt_id, message_kind, bucket_id, recording_id, body,
                 event_id, attempt_id, not_before, failures) in connection.execute(
                "SELECT id, kind, state, note, receipt_id, message_kind, bucket_id, recording_id, body,"
                " event_id, attempt_id, not_before, reconcile_failures FROM outbox ORDER BY id"
            )
        ]

    def _snapshot(self) -> tuple[list[Row], list[tuple], bool]:
        with self.ledger.read() as connection:
            rows = self._read_rows(connection)
            audit = connection.execute(
                "SELECT seq, intent_id, old_state, new_state, old_note, old_receipt, new_receipt, new_note"
                " FROM sim_audit WHERE seq > ? ORDER BY seq",
                (self.audit_seen,),
            ).fetchall()
            held = connection.execute("SELECT 1 FROM hold_marker").fetchone() is not None
        return rows, audit, held

    # -- running the outbox, and dying --------------------------------------------------------

    def _drive(self, action: Callable[[Outbox], object]) -> None:
        try:
            action(self.outbox)
        except Crash:
            self._restart()

    def _restart(self) -> None:
        """The process died: a new one opens the same ledger file and starts its outbox first."""
        self.restarts += 1
        STATS["restarts"] += 1
        self.in_flight = None
        self.ledger.close()
        self.ledger = open_ledger(self.path, clock=self.clock)
        self.world.ledger = self.ledger
        self.fake.held_until = 0.0  # the dead process's knowledge of a Retry-After died with it
        self.outbox = Outbox(self.ledger, self.poster, AGENT_ID)
        try:
            settle_previous(StartParts(self.outbox), self.clock.monotonic() + 60)
        except Crash:
            self._restart()

    # -- the world: intents written by the transitions that call for them --------------------

    def _new_event(self, shared: bool, reply_kind: str) -> EventModel:
        event_id = self.next_event
        self.next_event += 1
        recording = SHARED_RECORDING if shared else 1_000_000 + event_id
        self.world.seen(event_id, recording_id=recording, reply_kind=reply_kind)
        model = EventModel(event_id, recording, reply_kind, "seen")
        self.events[event_id] = model
        return model

    @rule(shared=st.sampled_from([False, True, True]), reply_kind=st.sampled_from(["comment", "chat_line"]),
          verdict=st.sampled_from(["admitted", "queued", "unacknowledged"]),
          dispatched=st.sampled_from(["later", "task", "worker", "worker pulls"]))
    def a_request_is_admitted(self, shared: bool, reply_kind: str, verdict: str, dispatched: str) -> None:
        """Admission's verdict; the dispatcher may take it up at once, and its worker too."""
        self.clean = False
        event = self._new_event(shared, reply_kind)
        if verdict == "unacknowledged":
            self.world.verdict(event.id, "admitted", acknowledge=False)
        else:
            self.world.verdict(event.id, verdict)
        event.state = verdict
        if dispatched == "later" or event not in self._startable():
            return
        task_id = self._make_task_for(event)
        if dispatched != "task":
            self._launch(task_id)
        if dispatched == "worker pulls":
            self._get_dispatch_of(self.tasks[task_id], event.id, acknowledges=True)

    @rule(verdict=st.sampled_from(["admitted", "queued"]), worker_pulls=st.booleans())
    def another_request_on_the_busy_card(self, verdict: str, worker_pulls: bool) -> None:
        """One more mention on the shared recording: guards there have the very same words, and
        so has a worker's own acknowledgement there."""
        self.clean = False
        event = self._new_event(True, "comment")
        self.world.verdict(event.id, verdict)
        event.state = verdict
        if worker_pulls and event in self._startable():
            task_id = self._make_task_for(event)
            self._launch(task_id)
            self._get_dispatch_of(self.tasks[task_id], event.id, acknowledges=True)

    @rule(reply_kind=st.sampled_from(["comment", "chat_line"]))
    def a_request_is_blocked_for_no_route(self, reply_kind: str) -> None:
        self.clean = False
        event = self._new_event(False, reply_kind)
        self.world.verdict(event.id, "blocked", "no_route")
        event.state = "blocked"

    def _events_in(self, *states: str) -> list[EventModel]:
        return [event for event in self.events.values() if event.state in states]

    @precondition(lambda self: self._events_in("blocked"))
    @rule(pick=st.integers(0, 63), verdict=st.sampled_from(["admitted", "discarded"]))
    def a_blocked_request_moves_on(self, pick: int, verdict: str) -> None:
        self.clean = False
        self._move_blocked(pick, verdict)

    def _move_blocked(self, pick: int, verdict: str) -> None:
        blocked = self._events_in("blocked")
        if not blocked:
            return
        event = blocked[pick % len(blocked)]
        self.world.verdict(event.id, verdict)  # the route arrived: a guard now, the reply stands down
        event.state = verdict

    @precondition(lambda self: self._events_in("admitted", "queued", "unacknowledged"))
    @rule(pick=st.integers(0, 63))
    def a_waiting_request_is_discarded(self, pick: int) -> None:
        self.clean = False
        waiting = self._events_in("admitted", "queued", "unacknowledged")
        event = waiting[pick % len(waiting)]
        self.world.verdict(event.id, "discarded")
        event.state = "discarded"

    def _startable(self) -> list[EventModel]:
        live_conversations = {
            self.events[task.event_ids[0]].recording for task in self.tasks.values() if not task.ended
        }
        return [
            event
            for event in self._events_in("admitted", "queued", "unacknowledged", "returned")
            if event.recording not in live_conversations
        ]

    @precondition(lambda self: self._startable())
    @rule(pick=st.integers(0, 63))
    def the_dispatcher_makes_a_task(self, pick: int) -> None:
        self.clean = False
        self._make_task(pick)

    @precondition(lambda self: self._startable())
    @rule(pick=st.integers(0, 63))
    def the_dispatcher_starts_a_worker(self, pick: int) -> None:
        self.clean = False
        task_id = self._make_task(pick)
        if task_id is not None:
            self._launch(task_id)

    def _held(self) -> bool:
        with self.ledger.read() as connection:
            return connection.execute("SELECT 1 FROM hold_marker").fetchone() is not None

    def _launch(self, task_id: int) -> None:
        if self._held():  # the dispatcher launches nothing while the hold stands (migration 9 refuses it)
            STATS["launch waited for the hold's release"] += 1
            return
        task = self.tasks[task_id]
        task.attempt_id = self.world.attempt(task_id)
        task.live = True

    def _make_task_quietly(self, pick: int) -> None:
        self._make_task(pick)

    def _make_task(self, pick: int) -> int | None:
        startable = self._startable()
        if not startable:
            return None
        return self._make_task_for(startable[pick % len(startable)])

    def _make_task_for(self, first: EventModel) -> int:
        startable = self._startable()
        joined = [event for event in startable if event.recording == first.recording and event is not first]
        event_ids = (first.id, *(event.id for event in joined))  # follow-ups on one conversation
        task_id = self.world.task(*event_ids)
        self.tasks[task_id] = TaskModel(task_id, event_ids)
        for event_id in event_ids:
            self.events[event_id].state = "dispatched"
            self.events[event_id].task_id = task_id
        return task_id

    def _tasks(self, predicate: Callable[[TaskModel], bool]) -> list[TaskModel]:
        return [task for task in self.tasks.values() if predicate(task)]

    @precondition(lambda self: self._tasks(lambda task: task.attempt_id is None))
    @rule(pick=st.integers(0, 63))
    def a_worker_is_launched(self, pick: int) -> None:
        self.clean = False
        waiting = self._tasks(lambda task: task.attempt_id is None)
        self._launch(waiting[pick % len(waiting)].id)

    @precondition(lambda self: self._tasks(lambda task: task.live))
    @rule(pick=st.integers(0, 63), acknowledges=st.booleans())
    def a_worker_calls_get_dispatch(self, pick: int, acknowledges: bool) -> None:
        self.clean = False
        self._get_dispatch(pick, acknowledges)

    def _get_dispatch(self, pick: int, acknowledges: bool) -> None:
        rows = [(task, event_id) for task in self._tasks(lambda task: task.live) for event_id in task.event_ids]
        if not rows:
            return
        task, event_id = rows[pick % len(rows)]
        self._get_dispatch_of(task, event_id, acknowledges)

    def _get_dispatch_of(self, task: TaskModel, event_id: int, acknowledges: bool) -> None:
        if task.attempt_id is None or self._held():  # no worker yet, or its pull refused under the hold
            return
        guard = self.world.get_dispatch(task.id, event_id)
        STATS[f"get_dispatch: {guard or 'unarmed'}"] += 1
        if guard == "canceled":
            self.worker_told_to_acknowledge.add(event_id)
            if acknowledges:  # the worker's own boost, in the guard's very words, reported
                self._worker_acknowledges(task.id, event_id)

    def _worker_acknowledges(self, task_id: int, event_id: int) -> None:
        """ack_dispatch: the worker boosts the recording and reports the boost's id."""
        with self.ledger.read() as connection:
            (delivery, ack_id) = connection.execute(
                "SELECT delivery, ack_id FROM task_events WHERE task_id = ? AND event_id = ?",
                (task_id, event_id),
            ).fetchone()
        if delivery != "exposed" or ack_id is not None:
            return  # acknowledged already, or finished
        event = self.events[event_id]
        boost = Destination(MessageKind.boost, PROJECT, event.recording)
        message_id = self.fake.seed(boost, GUARD_ACKNOWLEDGEMENT)
        self.worker_messages.add(message_id)
        self.world.ack(task_id, event_id, message_id)

    @precondition(lambda self: self._tasks(lambda task: task.live))
    @rule(pick=st.integers(0, 63), outcome=st.sampled_from(["succeeded", "failed"]),
          replied=st.sampled_from(["reported", "unreported", "no"]))
    def a_worker_reports(self, pick: int, outcome: str, replied: str) -> None:
        self.clean = False
        self._report(pick, outcome, replied)

    def _report(self, pick: int, outcome: str, replied: str) -> None:
        """complete_dispatch, for an instruction the worker pulled."""
        live = {task.id: task for task in self._tasks(lambda task: task.live)}
        with self.ledger.read() as connection:
            rows = [
                (live[task_id], event_id, ack_id)
                for task_id, event_id, ack_id in connection.execute(
                    "SELECT task_id, event_id, ack_id FROM task_events WHERE pulled_at IS NOT NULL"
                    " AND delivery IN ('exposed', 'delivered') ORDER BY task_id, event_id"
                )
                if task_id in live
            ]
        if not rows:
            return
        task, event_id, ack_id = rows[pick % len(rows)]
        reply_id = None
        if replied != "no":  # the worker's own reply, by the agent, where the notices go
            event = self.events[event_id]
            where = Destination(MessageKind(event.reply_kind), PROJECT,
                                CAMPFIRE if event.reply_kind == "chat_line" else event.recording)
            message_id = self.fake.seed(where, f"Done: I looked into event {event_id}.")
            self.worker_messages.add(message_id)
            reply_id = message_id if replied == "reported" else None
        self.world.report(task.id, event_id, outcome, reply_id=reply_id, ack_id=ack_id)
        self.events[event_id].state = "completed"

    @precondition(lambda self: self._tasks(lambda task: task.live))
    @rule(pick=st.integers(0, 63),
          stop_reason=st.sampled_from(["finished", "failed", "deadline", "shutdown", "lost"]))
    def an_attempt_ends(self, pick: int, stop_reason: str) -> None:
        self.clean = False
        self._end_attempt(pick, stop_reason)

    def _end_attempt(self, pick: int, stop_reason: str) -> None:
        live = self._tasks(lambda task: task.live)
        if not live:
            return
        task = live[pick % len(live)]
        assert task.attempt_id is not None
        self.world.end_attempt(task.attempt_id, stop_reason)
        task.live, task.ended = False, True
        with self.ledger.read() as connection:
            for event_id, delivery in connection.execute(
                "SELECT event_id, delivery FROM task_events WHERE task_id = ?", (task.id,)
            ):
                # settled, or never exposed: returned, still dispatched, for a task of its own
                self.events[event_id].state = "completed" if delivery == "completed" else "returned"

    @precondition(lambda self: self._tasks(lambda task: task.live))
    @rule(pick=st.integers(0, 63))
    def a_still_running_tick(self, pick: int) -> None:
        self.clean = False
        self._tick(pick)

    def _tick(self, pick: int) -> None:
        live = self._tasks(lambda task: task.live)
        if not live:
            return
        task = live[pick % len(live)]
        assert task.attempt_id is not None
        self.world.tick(task.attempt_id)

    @rule(action=st.sampled_from(["end_attempt", "get_dispatch", "route_arrives", "discard_blocked",
                                  "task", "report", "tick"]),
          pick=st.integers(0, 63))
    def another_transition_lands_during_the_next_request(self, action: str, pick: int) -> None:
        """Between a claim and its request, the dispatcher, a worker or admission commits."""
        self.clean = False
        self.in_flight = {
            "end_attempt": lambda: self._end_attempt(pick, "finished"),
            "get_dispatch": lambda: self._get_dispatch(pick, acknowledges=True),
            "route_arrives": lambda: self._move_blocked(pick, "admitted"),
            "discard_blocked": lambda: self._move_blocked(pick, "discarded"),
            "task": lambda: self._make_task_quietly(pick),
            "report": lambda: self._report(pick, "succeeded", replied="reported"),
            "tick": lambda: self._tick(pick),
        }[action]

    @rule()
    def the_hold_goes_on_or_off(self) -> None:
        self.clean = False
        with self.ledger.read() as connection:
            held = connection.execute("SELECT 1 FROM hold_marker").fetchone() is not None
        if held:
            self.world.release()
        else:
            self.world.hold()

    # -- time and Basecamp's behaviour ------------------------------------------------------

    @rule(seconds=st.one_of(st.sampled_from([1, 29, 31, 59, 61, 90, 150, 600, 1800, 3600]),
                            st.integers(0, 3600)))
    def time_passes(self, seconds: int) -> None:
        self.clean = False
        self.clock.advance(seconds)

    @precondition(lambda self: len(self.fake.posts) < 4)
    @rule(behaviour=st.sampled_from(list(Post)))
    def basecamp_will_answer_a_post(self, behaviour: Post) -> None:
        self.clean = False
        self.fake.posts.append(behaviour)

    @rule(pattern=st.lists(st.sampled_from([Post.land, Post.lost_after_landing, Post.lost_before_landing,
                                            Post.refuse, Post.not_connected, Post.rate_limited]),
                           min_size=1, max_size=3))
    def basecamp_answers_posts_in_turn(self, pattern: list[Post]) -> None:
        """Until told otherwise, the posts not scripted one by one do these, in turn."""
        self.clean = False
        self.every_post = tuple(pattern)
        self.unscripted_posts = 0

    def unscripted_post(self) -> Post:
        behaviour = self.every_post[self.unscripted_posts % len(self.every_post)]
        self.unscripted_posts += 1
        return behaviour

    @rule(seconds=st.sampled_from([10, 50, 70]))
    def the_next_request_is_slow(self, seconds: int) -> None:
        self.clean = False
        self.slow_request_seconds = seconds

    @precondition(lambda self: len(self.fake.listings) < 4)
    @rule(behaviour=st.sampled_from(list(Listing)))
    def basecamp_will_answer_a_listing(self, behaviour: Listing) -> None:
        self.clean = False
        self.fake.listings.append(behaviour)

    @rule(seconds=st.sampled_from([0.0, 5.0, 45.0, 90.0, 400.0]))
    def basecamp_lags(self, seconds: float) -> None:
        self.clean = False
        self.fake.lag_seconds = seconds

    @rule(seconds=st.sampled_from([5, 20, 40]))
    def the_next_listing_is_slow(self, seconds: int) -> None:
        self.clean = False
        self.slow_listing_seconds = seconds

    @rule()
    def basecamp_listings_go_down_or_up(self) -> None:
        """Every listing fails until they come back: reconciliation backs off, then gives up."""
        self.clean = False
        self.listings_down = not self.listings_down

    @rule()
    def basecamp_becomes_reachable_or_not(self) -> None:
        self.clean = False
        self.fake.reachable = not self.fake.reachable

    # -- the outbox -------------------------------------------------------------------------

    @rule(limit=st.sampled_from([None, 1, 2]), window=st.sampled_from([None, 3.0, 10.0, 60.0]))
    def flush(self, limit: int | None, window: float | None) -> None:
        self.clean = False
        deadline = None if window is None else self.clock.monotonic() + window
        self._drive(lambda outbox: outbox.flush(deadline=deadline, limit=limit))

    @rule()
    def run_once(self) -> None:
        self.clean = False
        self._drive(lambda outbox: outbox.run_once())

    @rule(seconds=st.sampled_from([1, 5, 31, 61, 300]))
    def the_running_connector_ticks(self, seconds: int) -> None:
        self.clean = False
        self.clock.advance(seconds)
        self._drive(lambda outbox: outbox.run_once())

    @rule(age=st.sampled_from([None, None, 0, 30, 120]), limit=st.sampled_from([None, 1]),
          window=st.sampled_from([None, 10.0, 60.0]))
    def reconcile(self, age: int | None, limit: int | None, window: float | None) -> None:
        self.clean = False
        wait = None if age is None else timedelta(seconds=age)
        deadline = None if window is None else self.clock.monotonic() + window
        self._drive(lambda outbox: outbox.reconcile(age=wait, limit=limit, deadline=deadline))

    @rule(minutes=st.integers(1, 150))
    def the_connector_runs_for_a_while(self, minutes: int) -> None:
        """Outbox.run's loop, a tick a minute: a batch of sends, then at most one listing."""
        self.clean = False
        for _ in range(minutes):
            self.clock.advance(60)
            self._drive(lambda outbox: outbox.run_once())

    @rule(window=st.sampled_from([3.0, 10.0, 60.0]))
    def start(self, window: float) -> None:
        self.clean = False
        self._drive(lambda outbox: settle_previous(StartParts(outbox), self.clock.monotonic() + window))

    @rule(where=st.sampled_from(["before_landing", "after_landing", "during_listing"]))
    def the_process_will_die(self, where: str) -> None:
        self.clean = False
        self.armed_crash = where

    @rule()
    def the_process_dies_now(self) -> None:
        self.clean = False
        self._restart()

    # -- a careful person -------------------------------------------------------------------

    def _resolvable(self) -> list[Row]:
        return [
            row
            for row in self.rows.values()
            if row.state is IntentState.indeterminate
            or (row.state is IntentState.canceled and notes.resendable(row.note))
        ]

    @precondition(lambda self: self._resolvable())
    @rule(pick=st.integers(0, 63), abandon=st.booleans())
    def a_person_decides(self, pick: int, abandon: bool) -> None:
        """Sent when the message exists, resend only when it is truly absent, or abandon."""
        self.clean = False
        candidates = self._resolvable()
        row = candidates[pick % len(candidates)]
        messages = self.messages_of.get(row.id, [])
        if row.state is IntentState.indeterminate and abandon:
            decision: Sent | Abandon | Resend = Abandon(PERSON)
        elif messages:
            assert row.state is IntentState.indeterminate, (
                f"intent {row.id} is {row.state} ({row.note}) but its message {messages} exists"
            )
            decision = Sent(messages[0], PERSON)
        else:
            decision = Resend(PERSON)
        resolve_intent(self.ledger, row.id, decision)  # bin/outbox-resolve's own write
        with self.ledger.read() as connection:
            self._check_audit(connection, person=True)
        self.person_acted = True
        STATS[f"person: {type(decision).__name__.lower()}"] += 1
        if isinstance(decision, Resend):
            self.requested_in_era.discard(row.id)  # a new era: one more request is the person's call
            self.era_outcome.pop(row.id, None)

    @precondition(lambda self: self.rows)
    @rule(pick=st.integers(0, 63), decision=st.sampled_from(["sent", "abandon", "resend"]))
    def a_person_tries_what_is_refused(self, pick: int, decision: str) -> None:
        """A decision the table forbids (or a receipt another intent owns) is refused, unwritten."""
        self.clean = False
        rows = list(self.rows.values())
        row = rows[pick % len(rows)]
        owned = [other.receipt_id for other in rows if other.receipt_id is not None
                 and other.destination.kind == row.destination.kind and other.id != row.id]
        if waits_for_person(row.state, row.note):
            if not (owned and row.state is IntentState.indeterminate):
                return
            resolution: Sent | Abandon | Resend = Sent(owned[0], PERSON)  # someone else's message
        else:
            resolution = {"sent": Sent(owned[0] if owned else 1_069_479_000, PERSON),
                          "abandon": Abandon(PERSON), "resend": Resend(PERSON)}[decision]
        with pytest.raises(ResolutionRefused):
            resolve_intent(self.ledger, row.id, resolution)
        STATS["person: refused"] += 1

    # -- the promises -----------------------------------------------------------------------

    def _check_audit(self, connection: sqlite3.Connection, person: bool) -> None:
        audit = connection.execute(
            "SELECT seq, intent_id, old_state, new_state, old_note, old_receipt, new_receipt, new_note"
            " FROM sim_audit WHERE seq > ? ORDER BY seq",
            (self.audit_seen,),
        ).fetchall()
        self._judge_audit(audit, Actor.person if person else Actor.automatic)

    def _judge_audit(self, audit: list[tuple], actor: Actor) -> None:
        for seq, intent_id, old_state, new_state, old_note, old_receipt, new_receipt, new_note in audit:
            self.audit_seen = seq
            if old_state is None:
                assert new_state == IntentState.pending, f"intent {intent_id} was written {new_state}"
                continue
            if old_receipt is not None:
                assert new_receipt == old_receipt, (
                    f"invariant 6: intent {intent_id}'s receipt changed {old_receipt} -> {new_receipt}"
                )
            if old_state != new_state:
                retry = (old_state, new_state) == (IntentState.sending, IntentState.pending)
                note = new_note if retry else old_note  # a retry's edge reads the cause it writes
                moved = INTENT_EDGES.step(IntentState(old_state), IntentState(new_state), actor, note)
                assert isinstance(moved, Success), (
                    f"invariant 7: intent {intent_id} moved {old_state} -> {new_state} by {actor}: {moved}"
                )

    @invariant()
    def the_outbox_keeps_its_promises(self) -> None:
        rows, audit, _ = self._snapshot()
        self._judge_audit(audit, Actor.automatic)  # whatever moved outside a person's decision
        current = {row.id: row for row in rows}
        actors = frozenset({Actor.automatic, Actor.person} if self.person_acted else {Actor.automatic})
        self.person_acted = False
        # 3. snapshot to snapshot, every intent moved along the connector's edges
        for row in rows:
            before = self.rows.get(row.id)
            if before is not None and before.state != row.state:
                if row.state in (IntentState.indeterminate, IntentState.sent):
                    STATS[f"became {row.state}: {row.note or 'receipt'}"] += 1
                assert reachable(before.state, row.state, actors), (
                    f"invariant 7: intent {row.id} went {before.state} -> {row.state} within one step"
                )
            if before is not None and before.receipt_id is not None:
                assert row.receipt_id == before.receipt_id, f"invariant 6: intent {row.id}'s receipt changed"
        # 1. never two messages for one intent
        for intent_id, messages in self.messages_of.items():
            assert len(messages) <= 1, f"invariant 1: intent {intent_id} has {len(messages)} messages: {messages}"
        words_at: Counter[tuple[Destination, str]] = Counter()
        for destination, stored in self.fake.stored.items():
            for message in stored:
                if message.message.creator_id != AGENT_ID or message.message.id in self.worker_messages:
                    continue
                assert message.message.id in self.owner_of_message, (
                    f"a message {message.message.id} at {destination} no request of the outbox made"
                )
                words_at[(destination, message.message.text)] += 1
        for (destination, words), count in words_at.items():
            could = [
                row.id
                for row in rows
                if row.destination == destination and message_text(row.body) == words
                and row.state in MAY_HAVE_A_MESSAGE
            ]
            assert count <= len(could), (
                f"invariant 1: {count} messages at {destination} with the words {words!r}, "
                f"but only intents {could} may have one"
            )
        # 2. a receipt is the intent's own message, at its destination, with its words, owned once
        receipts = Counter(row.receipt_id for row in rows if row.receipt_id is not None)
        for row in rows:
            if row.state is IntentState.sent:
                assert row.receipt_id is not None
                assert receipts[row.receipt_id] == 1, f"invariant 6: receipt {row.receipt_id} owned twice"
                listed = {stored.message.id: stored.message for stored in self.fake.stored.get(row.destination, [])}
                assert row.receipt_id in listed, (
                    f"invariant 2: intent {row.id}'s receipt {row.receipt_id} is not at {row.destination}"
                )
                assert listed[row.receipt_id].text == message_text(row.body), (
                    f"invariant 2: intent {row.id}'s receipt {row.receipt_id} has other words"
                )
                assert self.owner_of_message.get(row.receipt_id) == row.id, (
                    f"invariant 5: intent {row.id} owns message {row.receipt_id}, "
                    f"which the request of intent {self.owner_of_message.get(row.receipt_id)} created"
                    + (" (a worker's own)" if row.receipt_id in self.worker_messages else "")
                )
        # the state agrees with what the requests did; 6. refused intents carry the refused note
        for row in rows:
            outcome = self.era_outcome.get(row.id)
            requested = row.id in self.requested_in_era
            if row.state is IntentState.sending:
                assert requested, f"invariant 3: intent {row.id} is sending with no request made"
                assert row.reconcile_failures < MAX_RECONCILE_FAILURES, (
                    f"invariant 10: intent {row.id} still sending after {row.reconcile_failures} failed listings"
                )
            retried = row.id in self.retrying
            if row.state is IntentState.pending:
                assert not requested or retried, f"intent {row.id} is pending again after its request"
                if retried:
                    assert row.note in notes.NOT_CREATED_NOTES, (
                        f"intent {row.id} is pending again without a cause proving nothing was created"
                    )
            cause = not_created_cause(outcome) if isinstance(outcome, Refused) else None
            if isinstance(outcome, Refused) and cause is None:
                assert (row.state, row.note) == (IntentState.canceled, notes.REFUSED_NOTE), (
                    f"invariant 6: intent {row.id} was refused but is {row.state} ({row.note!r})"
                )
            if cause is not None:
                assert (row.state, row.note) == (IntentState.pending, cause) or (
                    row.state is IntentState.canceled and row.note != notes.REFUSED_NOTE
                ), f"intent {row.id} never reached Basecamp ({cause}) but is {row.state} ({row.note!r})"
                assert not self.messages_of.get(row.id), f"intent {row.id} never reached Basecamp yet has a message"
            if row.state is IntentState.canceled and row.note == notes.REFUSED_NOTE:
                assert isinstance(outcome, Refused), f"intent {row.id} carries the refused note unrefused"
                assert cause is None, f"intent {row.id} carries the refused note, yet never reached Basecamp"
            if row.state is IntentState.canceled:
                assert row.note, f"intent {row.id} canceled without a note"
                assert notes.resendable(row.note) or not requested or retried, (
                    f"intent {row.id} canceled ({row.note}) after its request"
                )
                if row.note in notes.GIVEN_UP_NOTES:
                    assert retried, f"intent {row.id} given up without its request failing to reach Basecamp"
            if row.state in (IntentState.indeterminate, IntentState.abandoned):
                assert row.note, f"invariant 4: intent {row.id} is {row.state} without a note"
            if isinstance(outcome, Created):
                assert (row.state, row.receipt_id) == (IntentState.sent, outcome.id), (
                    f"intent {row.id} got receipt {outcome.id} but is {row.state} ({row.receipt_id})"
                )
            if isinstance(outcome, Uncertain):
                assert row.state in MAY_HAVE_A_MESSAGE, f"intent {row.id} uncertain, then {row.state}"
        # 8/9. a worker told to acknowledge itself never also gets the connector's guard
        for row in rows:
            if row.kind == "guard_ack" and row.event_id in self.worker_told_to_acknowledge:
                assert not self.messages_of.get(row.id), (
                    f"invariant 8/9: event {row.event_id} acknowledged twice: its worker was told "
                    f"to, and guard intent {row.id} posted {self.messages_of[row.id]}"
                )
        self.rows = current
        STATS["steps"] += 1
        self.clean = True

    # -- the end of a run -------------------------------------------------------------------

    def teardown(self) -> None:
        try:
            if self.clean:
                self._run_to_quiescence()
        finally:
            self.ledger.close()
            shutil.rmtree(self.directory, ignore_errors=True)

    def _run_to_quiescence(self) -> None:
        self.armed_crash = None
        self.in_flight = None
        self.fake.posts.clear()
        self.slow_request_seconds = 0
        self.fake.listings.clear()
        self.fake.reachable = True
        self.listings_down = False
        self.slow_listing_seconds = 0
        self.every_post = (Post.land,)
        for _ in range(60):
            self.clock.advance(3600)
            self.outbox.run_once()
            self.outbox.reconcile()
            self.outbox.flush()
            with self.ledger.read() as connection:
                busy = connection.execute(
                    "SELECT COUNT(*) FROM outbox WHERE state = 'sending'"
                    " OR (state = 'pending' AND NOT EXISTS (SELECT 1 FROM hold_marker))"
                ).fetchone()[0]
            if not busy:
                break
        self.the_outbox_keeps_its_promises()
        rows, _, held = self._snapshot()
        now = self.clock.now()
        STATS["runs completed"] += 1
        STATS["requests"] += self.requests
        for row in rows:
            STATS[f"final: {row.kind} {row.state}" + (f" ({row.note})" if row.note else "")] += 1
            if row.state is IntentState.pending:
                assert held or parse_timestamp(row.not_before) > now, (
                    f"invariant 4: intent {row.id} is still pending, due, and nothing holds it"
                )
            else:
                assert row.state in QUIET_STATES, f"invariant 4: intent {row.id} stays {row.state}"
            if row.state in (IntentState.indeterminate, IntentState.abandoned, IntentState.canceled):
                assert row.note, f"invariant 4: intent {row.id} is {row.state} without a note"
            if row.id in self.ever_retried:  # a connect failure or a 429: neither lost nor doubled
                STATS[f"final after a retry: {row.state}"] += 1
                assert len(self.messages_of.get(row.id, [])) <= 1
                if row.state is IntentState.sent:
                    assert self.messages_of.get(row.id) == [row.receipt_id]
                assert row.state is not IntentState.canceled or row.note not in notes.NOT_CREATED_NOTES


OutboxSimulation.TestCase.settings = settings(
    max_examples=EXAMPLES,
    stateful_step_count=STEPS,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large],
)
TestOutboxSimulation = pytest.mark.timeout(120 + EXAMPLES)(pytest.mark.slow(OutboxSimulation.TestCase))


# -- what the simulation's in-flight transitions can reach: the claim's check is not the post's ---


@pytest.fixture
def quiet_world(tmp_path: Path) -> Iterator[tuple[LedgerWorld, FakeBasecamp, Outbox]]:
    directory = tmp_path / "state"
    directory.mkdir(mode=0o700)
    clock = FakeClock()
    with open_ledger(directory / "ledger.sqlite3", clock=clock) as ledger:
        basecamp = FakeBasecamp(clock)
        yield LedgerWorld(ledger), basecamp, Outbox(ledger, basecamp, AGENT_ID)


def test_a_still_running_notice_in_flight_when_its_work_ends_lands_once_and_the_end_has_the_last_word(
    quiet_world: tuple[LedgerWorld, FakeBasecamp, Outbox],
) -> None:
    """The request already on its way lands, once; the attempt's end saw it sending and wrote the
    short completion notice (``core.message_kinds``), which follows it."""
    world, basecamp, outbox = quiet_world
    world.request(101)
    task_id = world.task(101)
    attempt_id = world.attempt(task_id)
    world.get_dispatch(task_id, 101)
    world.tick(attempt_id)  # a still-running notice, due now

    def the_worker_finishes_while_the_notice_is_in_flight(destination: Destination, body: str) -> None:
        basecamp.before_post = None  # once: the notice's own request
        world.report(task_id, 101, "succeeded", reply_id=9)
        world.end_attempt(attempt_id, "finished")  # every event answered, but a notice is in flight

    basecamp.before_post = the_worker_finishes_while_the_notice_is_in_flight
    outbox.flush()
    outbox.flush()
    posted = [message.text for message in basecamp.messages_at(comment_on(101))]
    assert len(posted) == 2, "the one request already on its way lands, once; the end's notice follows"
    assert "Working on this as of" in posted[0]
    assert posted[1].startswith(f"Task {task_id} ended: the worker finished."), "the last word is the end"
    assert [row[1:3] for row in world.outbox() if row[1] == "still_running"] == [("still_running", "sent")]
    assert basecamp.post_count() == 2


def test_a_holding_reply_in_flight_when_the_route_arrives_lands_once_and_is_recorded(
    quiet_world: tuple[LedgerWorld, FakeBasecamp, Outbox],
) -> None:
    world, basecamp, outbox = quiet_world
    world.seen(101)
    world.verdict(101, "blocked", "no_route")  # the holding reply, due now

    def the_route_arrives_while_the_reply_is_in_flight(destination: Destination, body: str) -> None:
        world.verdict(101, "admitted")

    basecamp.before_post = the_route_arrives_while_the_reply_is_in_flight
    outbox.flush()
    outbox.flush()
    posted = [message.text for message in basecamp.messages_at(comment_on(101))]
    assert len(posted) == 1, "the one request already on its way lands; nothing follows it"
    assert [row[1:3] for row in world.outbox() if row[1] == "holding_reply"] == [("holding_reply", "sent")]
    assert basecamp.post_count() == 1
