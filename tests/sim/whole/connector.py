"""The connector under simulation: the production parts, wired as ``shell.connector`` wires them,
over the simulated Basecamp and workers, and started through the one start path.

Rules:
1. Every part is the production class: ``Intake``, ``Admission``, ``Outbox``, ``Dispatcher`` (its
   ``_start`` alone is replaced: the worker's life runs in the simulation's steps, not on a
   thread, through the dispatcher's own ``spawned`` / ``still_running`` / ``supervised``).
2. ``boot`` opens the ledger file and runs ``shell.start.settle_previous`` with all three parts
   (reconcile, sweep, recover, send), then admits every seen record again and reads the feed
   once: ``shell.connector.Connector.start``'s order.
3. A crash (``Crash``, at any point) abandons this object and its connection; the next ``boot``
   opens the same file, as a restarted process would.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path

from core.admission_matrix import AdmissionSettings
from core.feed import FeedFilters
from shell.admission import Admission
from shell.clock import FakeClock
from shell.dispatcher import Dispatcher, DispatchOptions, _Running
from shell.intake.poll_lane import Intake, IntakeFailed
from shell.ledger import records
from shell.ledger.connection import Ledger, open_ledger
from shell.ledger.tasks import Launch
from shell.outbox import Outbox, OutboxOptions
from shell.start import StartParts, settle_previous
from tests.sim.whole.basecamp import AGENT_ID, OPERATOR_ID, ROUTED, SimBasecamp
from tests.sim.whole.workers import Workers

STILL_RUNNING_EVERY = 600.0
TASK_DEADLINE = timedelta(hours=1)


@dataclass
class Pending:
    """A launch committed whose worker the dispatcher's thread has not spawned yet."""

    launch: Launch
    work_dir: str
    deadline_at: datetime


@dataclass
class SimDispatcher(Dispatcher):
    pending: list[Pending] = field(default_factory=list)

    def _start(self, launch: Launch, work_dir: str, deadline_at: datetime) -> None:
        with self._lock:
            self._running[launch.task_id] = _Running(launch, work_dir, threading.Thread())
        self.pending.append(Pending(launch, work_dir, deadline_at))

    def forget(self, task_id: int) -> None:
        """The worker's thread ended (the ``finally`` of ``Dispatcher._work``)."""
        with self._lock:
            self._running.pop(task_id, None)


class SimConnector:
    def __init__(  # noqa: PLR0917 -- the parts a process is made of
        self, path: Path, sessions: Path, work_dir: Path, clock: FakeClock,
                 basecamp: SimBasecamp, workers: Workers) -> None:
        self.clock = clock
        self.ledger: Ledger = open_ledger(path, clock=clock)
        self.sessions = sessions
        settings = AdmissionSettings(agent_id=AGENT_ID, operator_id=OPERATOR_ID,
                                     routed_projects=frozenset({ROUTED}))
        self.intake = Intake(self.ledger, basecamp,
                             FeedFilters.of(exclude_performers=("self",), actor_types=("person",)), clock, start=0)
        self.admission = Admission(self.ledger, basecamp, settings, timedelta(seconds=30), clock)
        self.outbox = Outbox(self.ledger, basecamp, AGENT_ID, OutboxOptions(reconcile_after=timedelta(seconds=60)))
        self.dispatcher = SimDispatcher(self.ledger, {ROUTED: work_dir}, workers, workers,
                                        DispatchOptions(concurrency=2, task_deadline=TASK_DEADLINE, driver_name="sim"))
        self.held: list[str] = []
        self.last_tick: dict[str, float] = {}

    def boot(self) -> None:
        """Rule 2: the production start order."""
        started = settle_previous(
            StartParts(self.outbox, sessions=self.sessions, recovery=self.dispatcher),
            self.clock.monotonic() + 60,
        )
        self.held = started.held
        with self.ledger.read() as connection:
            seen = records.seen_ids(connection)
        for event_id in seen:
            self.admission.admit(event_id, self.clock.monotonic() + 60)
        self.poll()

    def poll(self) -> None:
        """One turn of the intake loop: read the feed, admit what is new, sweep the blocked."""
        try:
            result = self.intake.poll_once(self.clock.monotonic() + 30)
        except IntakeFailed:
            return
        for event_id in result.new_ids:
            self.admission.admit(event_id, self.clock.monotonic() + 60)

    def sweep(self) -> None:
        self.admission.sweep(self.clock.now())

    def close(self) -> None:
        self.ledger.close()
