"""The one start path: what a previous process left is settled, in one order, before anything runs.

Rules:
1. The steps (``START_STEPS``), each logged as it begins (``start: <step>``): ``reconcile`` lists
   the destinations of what was left sending, each within ``OutboxOptions.listing_timeout`` and
   all within the start's deadline; ``sweep`` removes left session directories (they can hold a
   task token); ``recover`` settles attempts left running and names those held for a person;
   ``send`` sends what is due, stopping at the first send that may not have landed.
2. A start is assembled from ``StartParts``: the outbox always; the session directory and the
   recovery when a dispatcher runs. The connector passes all three; a test may pass the outbox.
3. Without a recovery the send step leaves every still-running notice pending: each live attempt
   is a previous process's, and whether its worker runs is recovery's to say. With one, recovery
   has run before the send, so the claim check decides.
4. A ledger that cannot be read or settled raises ``OutboxLedgerError``: the start stops there.
5. Once ``stop`` is set (``shell.connector`` rule 10) no step begins and each stops short
   (``shell.outbox`` rule 10; ``shell.dispatcher`` rule 1; send claims nothing more). What was
   settled stays; the rest waits for the next start. ``StartReport.stopped`` names the step.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from core.intent_kinds import IntentKind
from shell.outbox import FlushSummary, Outbox
from shell.worker.driver import sweep_sessions

log = logging.getLogger("connector.start")

START_STEPS = ("reconcile", "sweep", "recover", "send")


class AttemptRecovery(Protocol):
    """What settles the attempts a previous process left: ``shell.dispatcher.Dispatcher``."""

    def recover(self, stop: threading.Event | None) -> list[str]: ...


@dataclass(frozen=True, slots=True)
class StartParts:
    outbox: Outbox
    sessions: Path | None = None
    recovery: AttemptRecovery | None = None


@dataclass(frozen=True, slots=True)
class StartReport:
    held: list[str]  # the attempts recovery left for a person
    sent: FlushSummary
    stopped: str | None = None  # the step a stop ended (rule 5); None: every step ran whole


def settle_previous(parts: StartParts, deadline: float, stop: threading.Event | None = None) -> StartReport:
    """Rule 1's steps, in order, within ``deadline`` (monotonic seconds on the ledger's clock),
    until ``stop`` (rule 5)."""
    _begin("reconcile")
    parts.outbox.reconcile(deadline=deadline, stop=stop)
    if _stopped(stop, "reconcile"):
        return StartReport([], FlushSummary(), "reconcile")
    _begin("sweep")
    if parts.sessions is not None:
        swept = sweep_sessions(parts.sessions)
        if swept:
            log.info("start: removed %d session directories a previous process left", len(swept))
    _begin("recover")
    held = [] if parts.recovery is None else parts.recovery.recover(stop)
    if _stopped(stop, "recover"):
        return StartReport(held, FlushSummary(), "recover")
    _begin("send")
    leaving = frozenset({IntentKind.still_running}) if parts.recovery is None else frozenset()
    sent = parts.outbox.flush(deadline=deadline, stop_when_uncertain=True, leaving=leaving, stop=stop)
    return StartReport(held, sent, "send" if _stopped(stop, "send") else None)


def _begin(step: str) -> None:
    log.info("start: %s", step)


def _stopped(stop: threading.Event | None, step: str) -> bool:
    """Rule 5: whether a stop ended ``step``; logged once, when it did."""
    if stop is None or not stop.is_set():
        return False
    log.info("start: stopped during %s; what it had not settled is left as it was, for the next start", step)
    return True
