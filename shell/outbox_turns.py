"""The outbox's two plain context managers, and the error its ledger failures become.

Rules:
1. ``Turn``: the outbox's one lock for a ``with``, when acquired within its timeout (-1: however
   long); ``as`` gives whether it was (``shell.outbox`` rule 5).
2. ``Settling``: what the ledger raises inside a ``with`` -- an SQLite error, a row that moved,
   a ledger failure -- becomes an ``OutboxLedgerError`` naming what could not be done
   (``shell.outbox`` rule 7).
3. Classes, not generators: a flush enters each twice an intent, and a generator's context
   costs more (``bin/bench outbox``).
"""

from __future__ import annotations

import sqlite3
import threading
from types import TracebackType

from shell.ledger import outbox as rows
from shell.ledger.connection import LedgerError


class OutboxLedgerError(Exception):
    """The ledger could not be read or settled: the connector must not carry on as if it had."""


class Turn:
    """Rule 1."""

    def __init__(self, lock: threading.Lock, timeout: float) -> None:
        self._lock = lock
        self._timeout = timeout
        self._acquired = False

    def __enter__(self) -> bool:
        self._acquired = self._lock.acquire(timeout=self._timeout)
        return self._acquired

    def __exit__(self, *_: object) -> None:
        if self._acquired:
            self._lock.release()


class Settling:
    """Rule 2."""

    def __init__(self, what: str) -> None:
        self._what = what

    def __enter__(self) -> None:
        return None

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        if isinstance(error, (sqlite3.Error, rows.IntentMoved, LedgerError)):
            raise OutboxLedgerError(f"the ledger could not {self._what}: {error}") from error
