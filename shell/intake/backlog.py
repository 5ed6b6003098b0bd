"""The backlog check intake makes before each read (``core.intake_status`` holds the rules).

Rules:
1. ``check`` reads the backlog (one read transaction) and answers the pause reason or None;
   it logs each crossing once: the pause (warning), the resume (info), the warning level.
2. ``paused`` answers the last reason without reading: the live lane asks it often.
3. A ledger that cannot be read pauses nothing (logged): intake's own writes will fail and
   back off on their own.
"""

from __future__ import annotations

import logging
import sqlite3

from core.intake_status import BACKLOG_STATES, BacklogLimits, backlog_reason, backlog_warns
from shell.ledger.connection import Ledger, LedgerError
from shell.ledger.lanes import count_in_states

log = logging.getLogger("connector.intake.backlog")


class Backlog:
    def __init__(self, ledger: Ledger, limits: BacklogLimits) -> None:
        self._ledger = ledger
        self._limits = limits
        self._reason: str | None = None
        self._warned = False

    def paused(self) -> str | None:
        return self._reason

    def check(self) -> str | None:
        try:
            depth = self._depth()
        except (sqlite3.Error, LedgerError) as error:
            log.warning("backlog: could not be read (%s); reading on", type(error).__name__)
            return self._reason
        found = backlog_reason(depth, self._limits)
        if found is not None and self._reason is None:
            log.warning("%s; it reads on below that", found)
        elif found is None and self._reason is not None:
            log.info("intake reads again: %d records wait (pause at %d)", depth, self._limits.pause)
        warned = backlog_warns(depth, self._limits)
        if warned and not self._warned and found is None:
            log.warning("backlog: %d records wait for a worker (warn at %d)", depth, self._limits.warn)
        self._reason, self._warned = found, warned
        return found

    def _depth(self) -> int:
        return count_in_states(self._ledger, BACKLOG_STATES)
