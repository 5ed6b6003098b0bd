"""Admission in the shell: load a seen or blocked record, run the core gate, read what the verdict
needs, decide (``core.admission``), commit. The summary is read only when the gate let the record
through, outside any transaction (a read never holds the ledger's lock), and the verdict is written
with its intents in one transaction; one that finds the revision moved is not applied, and that
other decision stands. ``sweep`` offers every blocked record whose retry is due back to ``admit``.
The membership read (trust mode ``project``) is not made yet, so an untrusted performer there is
blocked as unverified, retried on the schedule. ``reconfigure`` replaces the settings whole; each
decision reads them once, and none reads a summary while the configuration authorizes nothing. One
log line a decision: ids, state and reason, never content."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Protocol

from core.admission import (
    AdmissionSettings,
    Continue,
    ReadFailure,
    ReadFailureKind,
    RecordingSummary,
    Verdict,
    decide,
    gate,
)
from core.edges import RecordState
from shell.clock import Clock
from shell.ledger import records as ledger_admission
from shell.ledger.connection import Ledger
from shell.log_format import ids

log = logging.getLogger("connector.admission")

SWEEP_READ_SECONDS = 120.0  # the deadline each record a sweep offers gets for its reads


class SummaryReader(Protocol):  # shell.basecamp.reads.SummaryReads
    def summary(self, bucket_id: int, recording_id: int, event_type: str, deadline: float, *,
                event_id: int | None = None) -> RecordingSummary | ReadFailure: ...

    def deadline_in(self, seconds: float) -> float: ...


@dataclass(frozen=True, slots=True)
class Admitted:
    """``applied`` is False when the record was not pending or its revision moved."""

    event_id: int
    applied: bool
    verdict: Verdict | None
    state: RecordState | None
    reason: str


class Admission:
    def __init__(self, ledger: Ledger, reads: SummaryReader, settings: AdmissionSettings,
                 guard_delay: timedelta | None, clock: Clock) -> None:
        self._ledger = ledger
        self._reads = reads
        self._settings = settings
        self._guard_delay = guard_delay
        self._clock = clock

    def reconfigure(self, settings: AdmissionSettings) -> None:
        self._settings = settings

    @property
    def settings(self) -> AdmissionSettings:
        return self._settings

    def admit(self, event_id: int, deadline: float) -> Admitted:
        settings = self._settings
        with self._ledger.read() as connection:
            loaded = ledger_admission.load(connection, event_id)
        if loaded is None or not loaded.pending:
            state = None if loaded is None else loaded.state
            return Admitted(event_id, False, None, state, "" if loaded is None else loaded.reason)
        pointer = loaded.pointer
        read: RecordingSummary | ReadFailure = ReadFailure(ReadFailureKind.failed)
        if settings.configuration_usable and isinstance(gate(pointer, settings), Continue):
            read = self._reads.summary(pointer.bucket_id, pointer.recording_id, pointer.event_type, deadline,
                                       event_id=pointer.id)
        verdict = decide(pointer, settings, read, members=None)
        now = self._clock.now()
        with self._ledger.write() as connection:
            applied = ledger_admission.commit_verdict(connection, event_id, loaded.revision, verdict, now,
                                                      self._guard_delay)
            after = ledger_admission.load(connection, event_id)
        state, reason = (None, "") if after is None else (after.state, after.reason)
        if applied:
            log.info("verdict event %d: %s %s", event_id, state, reason, extra=ids(event_id=event_id))
        else:
            log.info("verdict event %d: already decided (%s), not applied", event_id, state,
                     extra=ids(event_id=event_id))
        return Admitted(event_id, applied, verdict, state, reason)

    def sweep(self, now: datetime) -> list[Admitted]:
        with self._ledger.read() as connection:
            due = ledger_admission.due_blocked(connection, now)
        return [self.admit(event_id, self._reads.deadline_in(SWEEP_READ_SECONDS)) for event_id, _ in due]
