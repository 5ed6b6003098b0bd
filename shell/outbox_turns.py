"""The error the outbox's ledger failures become, and the context manager that makes them so.

Rules:
1. What the ledger raises -- an SQLite error, a row that moved, a ledger failure
   (``LEDGER_FAILURES``) -- becomes an ``OutboxLedgerError`` naming what could not be done
   (``ledger_failure``; ``shell.outbox`` rule 7).
2. ``Settling`` does so for a ``with``. The send path's two writes an intent catch
   ``LEDGER_FAILURES`` themselves: a ``with`` costs two calls, an intent's ``try`` none
   (``bin/bench outbox``).
"""

from __future__ import annotations

import sqlite3
from types import TracebackType

from shell.ledger import outbox as rows
from shell.ledger.connection import LedgerError


class OutboxLedgerError(Exception):
    """The ledger could not be read or settled: the connector must not carry on as if it had."""


LEDGER_FAILURES = (sqlite3.Error, rows.IntentMoved, LedgerError)


def ledger_failure(what: str, error: BaseException) -> OutboxLedgerError:
    """Rule 1: raise it ``from error``."""
    return OutboxLedgerError(f"the ledger could not {what}: {error}")


class Settling:
    """Rule 2."""

    def __init__(self, what: str) -> None:
        self._what = what

    def __enter__(self) -> None:
        return None

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        if isinstance(error, LEDGER_FAILURES):
            raise ledger_failure(self._what, error) from error
