"""What the metrics count, from the ledger. One read transaction, so the figures agree beside a
connector committing; read-only, like status, and sharing status's counts
(``shell.ledger.status.queue_counts``). A pending intent has been due since its first retry began,
else since ``not_before``; a waiting record since it was seen."""

from __future__ import annotations

import sqlite3
from datetime import datetime

from core import notes
from core.metrics import WAITING_STATES, LedgerFigures
from core.timestamps import parse_timestamp
from shell.ledger import hold
from shell.ledger.connection import Ledger
from shell.ledger.status import queue_counts, token_outage


def read_figures(ledger: Ledger) -> LedgerFigures:
    with ledger.read() as connection:
        intents, records, blocked = queue_counts(connection)
        outage = token_outage(connection)
        return LedgerFigures(
            intents=intents, pending_since=_pending_since(connection), refused=_refused(connection),
            records=records, blocked=blocked, waiting_since=_waiting_since(connection),
            live_tasks=_live_tasks(connection), attempts=_attempts(connection),
            held=hold.standing(connection) is not None,
            token_failing_since=None if outage is None else parse_timestamp(outage.since),
        )  # fmt: skip


def _pending_since(connection: sqlite3.Connection) -> dict[str, datetime]:
    sql = ("SELECT kind, MIN(COALESCE(retrying_since, not_before)) FROM outbox WHERE state = 'pending'"
           " GROUP BY kind")
    return {str(kind): parse_timestamp(str(since)) for kind, since in connection.execute(sql)}


def _refused(connection: sqlite3.Connection) -> int:
    marks = ", ".join("?" * len(notes.RESENDABLE_NOTES))
    sql = f"SELECT COUNT(*) FROM outbox WHERE state = 'canceled' AND note IN ({marks})"
    return int(connection.execute(sql, sorted(notes.RESENDABLE_NOTES)).fetchone()[0])


def _waiting_since(connection: sqlite3.Connection) -> dict[str, datetime]:
    states = [str(state) for state in WAITING_STATES]
    sql = (f"SELECT state, MIN(seen_at) FROM events WHERE state IN ({', '.join('?' * len(states))})"
           " GROUP BY state")
    return {str(state): parse_timestamp(str(since)) for state, since in connection.execute(sql, states)}


def _live_tasks(connection: sqlite3.Connection) -> int:
    return int(connection.execute("SELECT COUNT(*) FROM tasks WHERE ended_at IS NULL").fetchone()[0])


def _attempts(connection: sqlite3.Connection) -> tuple[tuple[str, int], ...]:
    sql = "SELECT stop_reason, COUNT(*) FROM attempts WHERE state = 'ended' GROUP BY stop_reason ORDER BY 1"
    return tuple((str(reason), int(count)) for reason, count in connection.execute(sql))
