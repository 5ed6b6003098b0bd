"""``shadow promote``'s ledger work (the steps are ``core.promotion``'s): the hold each ledger stands
under, read-only (None: no ledger, no hold, or a ledger too old to hold one); what a promoted ledger
tags and holds; what the connector's ledger still has in flight, which promote will not set aside;
and sealing a ledger into one file before it is renamed."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from shell.ledger.connection import (
    BUSY_TIMEOUT_SECONDS,
    LedgerBusy,
    LedgerOutOfDate,
    checked_file,
    ledger_failure,
    open_ledger_read_only,
)
from shell.ledger.hold import standing


def hold_cause(path: Path) -> str | None:
    if not path.exists():
        return None
    try:
        with open_ledger_read_only(path) as ledger, ledger.read() as connection:
            found = standing(connection)
    except LedgerOutOfDate:
        return None
    return None if found is None else found.cause


def seal(path: Path) -> None:
    """Make the ledger at ``path`` one file: checkpoint the write-ahead log into it and leave WAL, so
    a rename moves all of it (a ``-wal`` left behind would lose its commits). Idempotent; the next
    ``open_ledger`` restores WAL. Another process in the ledger makes it ``LedgerBusy``."""
    checked_file(path)
    try:
        connection = sqlite3.connect(path, isolation_level=None, timeout=BUSY_TIMEOUT_SECONDS)
    except sqlite3.Error as error:
        raise ledger_failure(error, path, "open the ledger to seal it") from error
    busy = f"{path}: another process has the ledger open"
    try:
        found = connection.execute("PRAGMA journal_mode = DELETE").fetchone()
        if found is None or str(found[0]).lower() != "delete":
            raise LedgerBusy(f"{busy}; stop it and run promote again")
    except sqlite3.OperationalError as error:
        raise LedgerBusy(f"{busy} ({error}); run promote again") from error
    finally:
        connection.close()


def counts(path: Path) -> tuple[int, int]:
    with open_ledger_read_only(path) as ledger, ledger.read() as connection:
        sql = "SELECT COALESCE(SUM(review), 0), COALESCE(SUM(state = 'held'), 0) FROM events"
        review, held = connection.execute(sql).fetchone()
    return int(review), int(held)


def unsettled(path: Path) -> str | None:
    """The ledger's work in flight at ``path``, in words (messages not final, attempts not ended), or None."""
    if not path.exists():
        return None
    with open_ledger_read_only(path) as ledger, ledger.read() as connection:
        sql = "SELECT count(*) FROM outbox WHERE state IN ('pending', 'sending', 'indeterminate')"
        messages = connection.execute(sql).fetchone()[0]
        attempts = connection.execute("SELECT count(*) FROM attempts WHERE state <> 'ended'").fetchone()[0]
    found = [f"{messages} lifecycle message(s) not yet final"] if messages else []
    found += [f"{attempts} worker attempt(s) not ended"] if attempts else []
    return " and ".join(found) or None

