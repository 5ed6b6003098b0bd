"""The connector under simulation: the production ``shell.connector.Connector``, built over the
simulated Basecamp and workers, started through its own ``start``.

Rules:
1. The connector is the production class, built by its own ``__post_init__`` (intake, admission,
   outbox, dispatcher, the adopted-reply rule, backlog, repair); ``Seams`` (``shell.connector``)
   puts the simulated Basecamp's reads and workers where the client's reads and
   ``CommandDriver`` go, and ``SimDispatcher`` where ``Dispatcher`` goes: its ``_start`` is
   replaced, so a worker's life runs in the simulation's steps, not on a thread, through the
   dispatcher's own ``spawned`` / ``still_running`` / ``supervised``; at its ``stop`` the run
   plays those threads' part (each worker ends ``shutdown``) before the dispatcher's own wait. The live lane is the
   connector's own (``LiveLane``, wired to the repair), never run: it has no WebSocket, and the
   run hands it the cable's frames (``SimBasecamp.hear``) as its connection would.
2. ``boot`` opens the ledger file (unsynced: a throwaway on a memory-backed directory) and calls
   ``Connector.start``: the production start path, settle_previous's steps and the re-admission
   and first read after them. A step of intake or dispatch is the connector's own turn of that
   loop (``intake_turn``, ``dispatch_turn``).
3. A stop is the connector's own (``Connector.stop``: the dispatcher's stop, then the shutdown
   flush within its bound). A crash (``Crash``, at any point) or a stop abandons this object; the next one is built over
   the file opened anew (``open_ledger``, as a restarted process opens it) or over the dead
   one's SQLite connection, rolled back (``survivor``: ``tests.sim.whole.run``'s ``_survivor`` says when).
4. What the connector logs with a traceback (``log.exception``: a loop caught something it did
   not expect) is a violation: ``Failures`` collects it for the ``connector-never-fails`` check.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, cast

from core.configuration import Configuration, Route, Timings, Trust
from core.log_lines import Transition
from shell.basecamp.client import BasecampClient
from shell.clock import FakeClock
from shell.connector import Connector, Seams
from shell.dispatcher import Dispatcher, _Running
from shell.ledger.connection import Ledger, open_ledger
from shell.ledger.tasks import Launch
from shell.worker.command import WorkerCommand
from tests.sim.whole.basecamp import AGENT_ID, OPERATOR_ID, ROUTED, SimBasecamp
from tests.sim.whole.workers import Workers

STILL_RUNNING_EVERY = 600.0
TASK_DEADLINE = timedelta(hours=1)
START_BOUND = timedelta(seconds=60)


@dataclass
class Pending:
    """A launch committed whose worker the dispatcher's thread has not spawned yet."""

    launch: Launch
    work_dir: str
    deadline_at: datetime


@dataclass
class SimDispatcher(Dispatcher):
    pending: list[Pending] = field(default_factory=list)
    on_stop: Callable[[], None] = field(default=lambda: None)  # the run ends each worker as its thread would

    def stop(self, timeout: float, *options: Any, **named: Any) -> bool:
        """The dispatcher's own stop, its worker threads' part played by the run (``on_stop``):
        every worker it supervises sees the shutdown, ends ``shutdown`` and is settled."""
        self._shutdown.set()
        self.on_stop()
        return super().stop(timeout, *options, **named)

    def _start(self, launch: Launch, work_dir: str, deadline_at: datetime) -> None:
        with self._lock:
            self._running[launch.task_id] = _Running(launch, work_dir, threading.Thread())
        self.pending.append(Pending(launch, work_dir, deadline_at))

    def forget(self, task_id: int) -> None:
        """The worker's thread ended (the ``finally`` of ``Dispatcher._work``)."""
        with self._lock:
            self._running.pop(task_id, None)


class Failures(logging.Handler):
    """Rule 4: every record the connector logged with a traceback."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.found: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.exc_info is not None:
            error = record.exc_info[1]
            self.found.append(f"{record.getMessage()}: {type(error).__name__}: {error}")


class SimConnector:
    def __init__(  # noqa: PLR0917 -- the parts a process is made of
        self, path: Path, sessions: Path, work_dir: Path, clock: FakeClock,
                 basecamp: SimBasecamp, workers: Workers, on_event: Callable[[Transition], None],
                 survivor: Ledger | None = None) -> None:
        self.clock = clock
        self.ledger: Ledger = open_ledger(path, clock=clock, unsynced=True) if survivor is None else survivor
        configuration = Configuration(
            account_id=999, base_url="https://3.basecampapi.com", agent_id=AGENT_ID, token_file="unused",
            trust=Trust(operator_id=OPERATOR_ID), routes=(Route(ROUTED, str(work_dir)),),
            task_deadline=TASK_DEADLINE,
            timings=Timings(still_running=timedelta(seconds=STILL_RUNNING_EVERY)),
        )
        self.connector = Connector(
            configuration, self.ledger, cast(BasecampClient, basecamp), clock, WorkerCommand.configured(None),
            sessions, seams=Seams(basecamp, workers, workers, SimDispatcher), on_event=on_event,
        )
        assert self.connector.live_lane is not None
        self.lane = self.connector.live_lane
        self.dispatcher = cast(SimDispatcher, self.connector.dispatcher)
        self.outbox = self.connector.outbox
        self.held: list[str] = []
        self.last_tick: dict[str, float] = {}

    def boot(self) -> None:
        """Rule 2: the production start path."""
        self.held = self.connector.start(START_BOUND)

    def close(self) -> None:
        self.ledger.close()
