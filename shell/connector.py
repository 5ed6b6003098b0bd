"""The connector as one running thing: its parts wired in the order the design requires.

Rules:
1. Start (before intake, admission or dispatch run) is ``shell.start.settle_previous`` with all
   its parts: the outbox reconciles what a previous process left sending; the session files a
   previous process left (they can hold a task token) are removed; the dispatcher recovers what
   a previous process left running; then the outbox sends what is due. (A pending still-running
   notice of an attempt recovery is about to end is canceled by its claim check, because
   recovery ran first.) A ledger that cannot be settled stops the start. Then every seen record
   is admitted again and the feed is read once.
2. Then three loops run together until asked to stop: intake and admission; the dispatcher;
   the outbox. Every seen record re-runs admission on start.
3. Shutdown: intake stops, workers are stopped (``shutdown``) and settled, and the outbox
   flushes their notices, all within ``shutdown_bound``; what is left is sent on the next start.
   The loops are waited for only until that bound: a request in flight on the outbox's thread
   is left in doubt (``sending``), and the next start reconciles it by listing.
4. ``shadow``: admits and logs; writes no intents, dispatches nothing and posts nothing.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path

from core.admission_matrix import AdmissionSettings
from core.configuration import Configuration
from core.feed import FeedFilters
from shell.admission import Admission
from shell.adopted_replies import ReplyAdopter
from shell.basecamp.client import BasecampClient
from shell.basecamp.reads import SummaryReads
from shell.clock import Clock
from shell.dispatcher import Dispatcher, DispatchOptions
from shell.intake import Intake, IntakeFailed
from shell.ledger import records
from shell.ledger.connection import Ledger
from shell.outbox import Outbox, OutboxLedgerError, OutboxOptions
from shell.start import StartParts, settle_previous
from shell.worker.driver import CommandDriver, WorkerCommand

log = logging.getLogger("connector.run")


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
    on_event: Callable[[str], None] = field(default=lambda line: None)
    _stop: threading.Event = field(default_factory=threading.Event)
    _stop_deadline: float | None = None  # monotonic; set by stop() (rule 3)

    def __post_init__(self) -> None:
        configuration = self.configuration
        routes = {route.project_id: Path(route.directory) for route in configuration.routes}
        settings = AdmissionSettings(
            agent_id=configuration.agent_id,
            operator_id=configuration.trust.operator_id or 0,
            trust_mode=configuration.trust.mode,
            allowlist=frozenset(configuration.trust.allow),
            routed_projects=frozenset(routes),
            watched_projects=frozenset(r.project_id for r in configuration.routes if r.watch_completions),
        )
        self.intake = Intake(
            self.ledger,
            self.client,
            FeedFilters.of(exclude_performers=("self",), actor_types=("person",)),
            self.clock,
        )
        self.admission = Admission(
            self.ledger,
            SummaryReads(self.client, configuration.agent_id, self.clock),
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

        driver = CommandDriver(
            self.worker_command,
            private_dir=self.sessions,
            ledger_path=self.ledger.path,
            clock=self.clock,
            still_running_every=configuration.timings.still_running.total_seconds(),
            agent_id=configuration.agent_id,
        )
        self.dispatcher = Dispatcher(
            self.ledger,
            routes,
            driver,
            driver,
            DispatchOptions(concurrency=configuration.concurrency, task_deadline=configuration.task_deadline),
            after_settlement=ReplyAdopter(self.ledger, self.client, configuration.agent_id).adopt,
        )

    # -- start ------------------------------------------------------------------------------

    def start(self, bound: timedelta) -> list[str]:
        """Settle what a previous process left, in order (rule 1); the attempts held for a person."""
        deadline = self.clock.monotonic() + bound.total_seconds()
        held: list[str] = []
        if not self.shadow:
            parts = StartParts(self.outbox, sessions=self.sessions, recovery=self.dispatcher)
            held = settle_previous(parts, deadline).held
        with self.ledger.read() as connection:
            seen = records.seen_ids(connection)
        for event_id in seen:
            self._admit(event_id)
        self._poll()  # the first read fixes the feed position: nothing after the start is missed
        return held

    # -- the loops --------------------------------------------------------------------------

    def run(self) -> None:
        """The three loops (rule 2), until ``stop()``."""
        loops = [threading.Thread(target=self._intake_loop, name="intake", daemon=True)]
        if not self.shadow:
            loops.append(threading.Thread(target=self._dispatch_loop, name="dispatch", daemon=True))
            loops.append(
                threading.Thread(target=self.outbox.run, args=(self._stop,), name="outbox", daemon=True)
            )
        for loop in loops:
            loop.start()
        self._stop.wait()
        for loop in loops:
            bound = None if self._stop_deadline is None else self._stop_deadline - self.clock.monotonic()
            loop.join(timeout=None if bound is None else max(0.0, bound))

    def _intake_loop(self) -> None:
        while not self._stop.is_set():
            self._poll()
            try:
                for admitted in self.admission.sweep(self.clock.now()):
                    self.on_event(
                        f"verdict event={admitted.event_id} state={admitted.state} reason={admitted.reason}"
                    )
            except Exception:
                log.exception("admission: the sweep of blocked records failed; trying again")
            self._stop.wait(self.poll_every.total_seconds())

    def _poll(self) -> None:
        try:
            result = self.intake.poll_once(self.clock.monotonic() + 30)
        except IntakeFailed as error:
            log.warning("intake: %s; trying again", error)
            return
        except Exception:
            log.exception("intake: an unexpected failure; trying again")
            return
        for event_id in result.new_ids:
            self.on_event(f"seen event={event_id}")
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
            try:
                for launch in self.dispatcher.tick():
                    self.on_event(
                        f"dispatch task={launch.task_id} events={','.join(map(str, launch.event_ids))}"
                    )
            except Exception:
                log.exception("dispatch: a tick failed; trying again")
            self._stop.wait(1.0)

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
