"""Simulated workers: processes that live across the connector's crashes, and speak only through
the real worker side of the MCP tools (``shell.ledger.worker_calls.DispatchLedger``).

Rules:
1. A worker has a temperament, fixed at spawn from the run's random: ``honest`` (pulls, boosts
   itself when told to, replies, reports, takes follow-ups), ``slow`` (the same after a long
   wait), ``silent`` (never calls a tool), ``crashing`` (pulls, then dies failed),
   ``unreported`` (pulls and replies in Basecamp, never reports), ``self_acknowledging``
   (boosts and reports the boost on every instruction), ``twice`` (reports everything twice),
   ``deliberate`` (pulls, and acknowledges as told only a few actions later: the guard it
   canceled by pulling stays canceled while its notice falls due), ``speaking`` (hands its words
   to the tools for the connector to post: ``tests.sim.whole.words``), ``forgetful`` (pulls,
   acknowledges, works a while -- each action ``FORGETFUL_STEP`` of the clock, so still-running
   notices fall due -- then exits without reporting: with one reply, or none).
2. Each ``act`` is one tool call or one Basecamp write, or the process ending. A refusal from
   the tools is an answer (the worker carries on); a worker never sees the ledger otherwise.
3. The driver (``SimDriver``) and recovery (``SimRecovery``) are the dispatcher's seams: spawn
   gives a worker a pid (or proves nothing started), recovery ends a recorded group only when
   that process is still the one recorded (a sim worker that outlived the connector), and may
   answer that it cannot be verified (a person's case).
4. A worker whose connector died keeps running (it is another process) until recovery ends it;
   one nobody supervises any more (its process was never recorded) may still call its tools.
5. ``handed`` is every instruction a worker was given: the event its prompt names, at spawn,
   and each event it pulled. A worker replies where its instruction says (``reply_to``).
"""

from __future__ import annotations

import random
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TypeVar

from returns.result import Failure, Result, Success

from core.destinations import Destination, MessageKind
from core.dispatch_tools import ToolRefusal
from core.dispatch_tools.decisions import AckRequest, CompleteRequest, Completion, GetRequest
from core.snapshots import StopReason
from core.templates import GUARD_ACKNOWLEDGEMENT
from shell.ledger.connection import Ledger
from shell.ledger.tasks import Launch
from shell.ledger.worker_calls import DispatchLedger
from shell.worker.driver import SpawnFailed
from tests.sim.whole import words
from tests.sim.whole.basecamp import AGENT_ID, Crash, SimBasecamp

_T = TypeVar("_T")

FORGETFUL_STEP = 120.0  # seconds a forgetful worker's every action of work takes
FORGETFUL_WAITS = 20  # its actions of work: 40 minutes, inside its task's hour

TEMPERAMENTS = ("honest", "honest", "honest", "slow", "slow", "silent", "crashing", "unreported",
                "self_acknowledging", "self_acknowledging", "twice", "deliberate", "deliberate",
                words.SPEAKING, words.SPEAKING, "forgetful", "forgetful")


@dataclass(frozen=True, slots=True)
class SimStarted:
    pid: int
    pgid: int
    process_started: str


@dataclass
class Worker:
    launch: Launch
    temperament: str
    started: SimStarted | None = None
    supervised: bool = True  # False once its connector died: nobody settles it (rule 4)
    waits: int = 0
    current: int | None = None  # the event it works on
    reported: set[int] = field(default_factory=set)
    exit_reason: StopReason | None = None
    pulled: list[int] = field(default_factory=list)
    owed: tuple[int, Destination] | None = None  # an acknowledgement a deliberate worker will make
    reply_to: dict[int, Destination] = field(default_factory=dict)  # by event: its instruction's reply destination

    @property
    def attempt_id(self) -> str:
        return self.launch.attempt_id


@dataclass
class Workers:
    """Every worker process alive, and what they were handed (ground truth for the checks)."""

    rng: random.Random
    basecamp: SimBasecamp
    on: Callable[[str], None]
    alive: dict[int, Worker] = field(default_factory=dict)  # by pid
    handed: dict[int, list[str]] = field(default_factory=dict)  # event id -> attempts given it
    told_to_acknowledge: set[int] = field(default_factory=set)
    pulled_under_hold: list[tuple[str, int]] = field(default_factory=list)  # (attempt, event): a violation
    crash_at_spawn: str | None = None  # "before" (nothing started) | "after" (started, unrecorded)
    unverifiable: bool = False
    _next_pid: int = 40_000

    # -- the dispatcher's driver ---------------------------------------------------------------

    def spawn(self, launch: Launch, work_dir: Path) -> SimStarted | SpawnFailed:
        if self.crash_at_spawn == "before":
            self.crash_at_spawn = None
            raise Crash("after the launch was committed, before the worker was spawned")
        if self.rng.random() < 0.05:
            self.on("spawn failed")
            return SpawnFailed(launch.attempt_id, "the worker program could not be started")
        self._next_pid += 1
        started = SimStarted(self._next_pid, self._next_pid, f"{self._next_pid}77")
        worker = Worker(launch, self.rng.choice(TEMPERAMENTS), started)
        self.alive[started.pid] = worker
        self._given(launch.event_ids[0], worker.attempt_id)  # rule 5: its prompt names the event
        self.on(f"worker {worker.temperament}")
        if self.crash_at_spawn == "after":
            self.crash_at_spawn = None
            worker.supervised = False
            raise Crash("the worker started; its process was never recorded")
        return started

    def supervise(
        self, started: SimStarted, deadline_at: datetime, stop: threading.Event, on_tick: Callable[[], None]
    ) -> StopReason | None:
        raise AssertionError("the simulation runs a worker's life in steps, never a supervising thread")

    def release(self, started: SimStarted, resumed: bool) -> None:
        self.alive.pop(started.pid, None)

    def follow_up(self, started: SimStarted, event_ids: tuple[int, ...]) -> tuple[int, ...]:
        return ()  # a simulated worker pulls again by itself: joined events wait for its get_dispatch

    # -- recovery ----------------------------------------------------------------------------

    def end_recorded_group(self, pid: int, pgid: int, process_started: str) -> bool:
        worker = self.alive.get(pid)
        if worker is not None and worker.started is not None and worker.started.process_started != process_started:
            return True  # another process under that pid: ours is gone
        if self.unverifiable:
            self.on("recovery: group unverifiable")
            return False
        if worker is not None:
            del self.alive[pid]
            self.on("recovery: ended a worker left running")
        return True

    def connector_died(self) -> None:
        for worker in self.alive.values():
            worker.supervised = False

    # -- a worker's life -----------------------------------------------------------------------

    def act(self, worker: Worker, ledger: Ledger) -> StopReason | None:
        """One action of ``worker`` (rule 2); the reason it ended when this action was its exit."""
        tools = DispatchLedger(ledger, worker.launch.token, AGENT_ID, words_wait=0)
        match worker.temperament:
            case "silent":
                return self._exit(worker, StopReason.finished) if self.rng.random() < 0.3 else None
            case "slow" if worker.waits < 10:
                worker.waits += 1
                return None
            case "crashing" if worker.pulled:
                return self._exit(worker, StopReason.failed)
            case "deliberate" if worker.owed is not None:
                worker.waits += 1
                if worker.waits % 4 == 0:
                    self._acknowledge(worker, tools, *worker.owed)
                    worker.owed = None
                return None
            case _ if worker.owed is not None:  # the acknowledgement is the call after the pull (rule 2)
                self._acknowledge(worker, tools, *worker.owed)
                worker.owed = None
                return None
            case "forgetful" if worker.current is not None and worker.waits < FORGETFUL_WAITS:
                worker.waits += 1
                self.basecamp.clock.advance(FORGETFUL_STEP)  # its work takes a while: notices fall due meanwhile
                return None
        if worker.current is None:
            return self._get(worker, tools, ledger)
        event_id = worker.current
        match worker.temperament:
            case "unreported":
                self._reply(worker, event_id)
                worker.current = None
                return self._exit(worker, StopReason.finished)
            case words.SPEAKING:
                words.report(tools, self.rng, event_id, "succeeded" if self.rng.random() < 0.85 else "failed")
                worker.reported.add(event_id)
                worker.current = None
                return None
            case "forgetful":
                if self.rng.random() < 0.5:
                    self._reply(worker, event_id)
                worker.current = None
                return self._exit(worker, StopReason.finished)
            case _:
                replied = self.rng.random() < 0.8
                reply_id = self._reply(worker, event_id) if replied else None
                outcome = "succeeded" if self.rng.random() < 0.85 else "failed"
                self._call(lambda: tools.complete_dispatch(
                    CompleteRequest(event_id, Completion(outcome, reply_id))))
                if worker.temperament == "twice":
                    self._call(lambda: tools.complete_dispatch(
                        CompleteRequest(event_id, Completion(outcome, reply_id))))
                worker.reported.add(event_id)
                worker.current = None
                return None

    def _get(self, worker: Worker, tools: DispatchLedger, ledger: Ledger) -> StopReason | None:
        answer = self._call(lambda: tools.get_dispatch(GetRequest(None)))
        instruction = None if answer is None else answer.instruction
        if instruction is None:
            return self._exit(worker, StopReason.finished)
        event_id = instruction.event_id
        worker.reply_to[event_id] = Destination(
            MessageKind(instruction.reply_kind), instruction.bucket_id, instruction.reply_recording_id)
        if event_id not in worker.pulled:
            worker.pulled.append(event_id)
            self._given(event_id, worker.attempt_id)
            with ledger.read() as connection:
                if connection.execute("SELECT 1 FROM hold_marker").fetchone() is not None:
                    self.pulled_under_hold.append((worker.attempt_id, event_id))
        worker.current = event_id
        told = instruction.acknowledge and not instruction.guard_acknowledged
        if told:
            self.told_to_acknowledge.add(event_id)
        boost = Destination(MessageKind.boost, instruction.bucket_id, instruction.recording_id)
        if ((told and worker.temperament in ("honest", "slow", "twice", "deliberate", words.SPEAKING, "forgetful"))
                or worker.temperament == "self_acknowledging"):
            worker.owed = (event_id, boost)
        elif worker.temperament == "forgetful":
            self._call(lambda: tools.ack_dispatch(AckRequest(event_id, None)))  # delivered, in no words
        return None

    def _given(self, event_id: int, attempt_id: str) -> None:
        given = self.handed.setdefault(event_id, [])
        if attempt_id not in given:
            given.append(attempt_id)

    def _acknowledge(self, worker: Worker, tools: DispatchLedger, event_id: int, boost: Destination) -> None:
        if worker.temperament == words.SPEAKING:
            words.acknowledge(tools, self.rng, event_id)
            return
        ack_id = self.basecamp.store(boost, GUARD_ACKNOWLEDGEMENT, f"worker:{worker.attempt_id}")
        self._call(lambda: tools.ack_dispatch(AckRequest(event_id, ack_id)))

    def _reply(self, worker: Worker, event_id: int) -> int:
        where = worker.reply_to[event_id]
        self.basecamp.clock.advance(1)  # writing a reply takes a moment: it is created after the acknowledgement
        return self.basecamp.store(where, f"Done: I looked into event {event_id}.", f"worker:{worker.attempt_id}")

    def _call(self, call: Callable[[], Result[_T, ToolRefusal]]) -> _T | None:
        match call():
            case Success(value):
                return value
            case Failure(refusal):
                self.on(f"tool refused: {refusal.kind}")
        return None

    def _exit(self, worker: Worker, reason: StopReason) -> StopReason:
        worker.exit_reason = reason
        return reason
