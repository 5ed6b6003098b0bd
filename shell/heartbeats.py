"""The running connector's heartbeats: each loop's last turn, kept in memory and written beside the
ledger for ``status`` (``core.heartbeats`` judges them). A beat notes the wall time a loop starts a
turn and never fails. ``run``'s main thread writes them as it waits, at most every ``WRITE_EVERY``,
owner-only and whole; each step of the start is written, and told ``on_step``, as it begins. A
write that fails is logged once until one succeeds again and never stops the connector."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

from core.heartbeats import WRITE_EVERY, Beats, StartStep, beats_text, read_beats
from shell import private_files
from shell.clock import Clock

log = logging.getLogger("connector.run")

FILE_NAME = "heartbeats"


def path_beside(ledger_path: Path) -> Path:
    return ledger_path.parent / FILE_NAME


class Heartbeats:
    def __init__(self, clock: Clock, ledger_path: Path,
                 on_step: Callable[[str], None] = lambda step: None) -> None:
        self._clock = clock
        self._on_step = on_step  # told each step of the start as it begins
        self._path = path_beside(ledger_path)
        self._lock = threading.Lock()
        self._loops: dict[str, datetime] = {}
        self._written_at: float | None = None
        self._failing = False
        self._start: StartStep | None = None

    def beat(self, name: str) -> None:
        now = self._clock.now()
        with self._lock:
            self._loops[name] = now

    def beats(self) -> dict[str, datetime]:
        with self._lock:
            return dict(self._loops)

    def starting(self, step: str | None) -> None:
        """The start's step under way, written now; None: the start is over, written with the loops'
        first beats (run's first ``write_due``)."""
        self._start = None if step is None else StartStep(step, self._clock.now())
        self._written_at = None
        if step is not None:
            self.write_due()
            self._on_step(step)

    def write_due(self) -> None:
        monotonic = self._clock.monotonic()
        if self._written_at is not None and monotonic - self._written_at < WRITE_EVERY.total_seconds():
            return
        self._written_at = monotonic
        text = beats_text(self.beats(), self._clock.now(), self._start)
        try:
            private_files.write_atomically(self._path, text.encode())
        except OSError as error:
            if not self._failing:
                log.warning("heartbeats: %s could not be written (%s); status cannot see the loops",
                            self._path, error.strerror)  # fmt: skip
            self._failing = True
            return
        self._failing = False


def read(ledger_path: Path) -> Beats | None:
    """Status's read: the record, or None when there is none or it cannot be read."""
    path = path_beside(ledger_path)
    try:
        private_files.check_file(path, "heartbeats file")
        return read_beats(path.read_bytes())
    except (OSError, private_files.PrivatePathError):
        return None
