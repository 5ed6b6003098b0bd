"""The ledger's losses and gaps (migration 10; ``core.intake_status`` holds their rules).

Rules:
1. Each function runs inside the caller's transaction (``ledger.write()`` or ``read()``),
   except ``read_loss_counts``, which is one read transaction of its own, for status.
2. ``record_loss`` opens a loss after ``after_id`` (the newest recorded event when None),
   unless an open loss still unbounded already covers it: one stretch, one loss.
3. ``bound_losses``: an event heard bounds every open unbounded loss before it; a loss whose
   bound leaves nothing between (the event right after ``after_id``) is repaired at once.
"""

from __future__ import annotations

import sqlite3

from core.intake_status import Loss, LossCounts, LossState
from core.timestamps import parse_timestamp
from shell.ledger.connection import Ledger


def record_gap(connection: sqlite3.Connection, after_id: int, resumed_after_id: int, now: str) -> None:
    connection.execute(
        "INSERT INTO gaps (after_id, resumed_after_id, recorded_at) VALUES (?, ?, ?)",
        (after_id, resumed_after_id, now),
    )


def record_loss(
    connection: sqlite3.Connection, cause: str, after_id: int | None, *, now: str, due_at: str, window_ends_at: str
) -> int | None:
    """Rule 2: the new loss's id, or None when an open unbounded one covers it."""
    if after_id is None:
        after_id = int(connection.execute("SELECT COALESCE(MAX(id), 0) FROM events").fetchone()[0])
    covering = connection.execute(
        "SELECT id FROM losses WHERE state = 'open' AND through_id IS NULL AND after_id <= ?", (after_id,)
    ).fetchone()
    if covering is not None:
        return None
    found = connection.execute(
        "INSERT INTO losses (cause, after_id, cursor, recorded_at, due_at, window_ends_at)"
        " VALUES (?, ?, ?, ?, ?, ?) RETURNING id",
        (cause, after_id, after_id, now, due_at, window_ends_at),
    ).fetchone()
    return int(found[0])


def bound_losses(connection: sqlite3.Connection, heard_id: int, now: str) -> None:
    """Rule 3."""
    connection.execute(
        "UPDATE losses SET state = 'repaired', settled_at = ?"
        " WHERE state = 'open' AND through_id IS NULL AND after_id = ? - 1",
        (now, heard_id),
    )
    connection.execute(
        "UPDATE losses SET through_id = ? - 1 WHERE state = 'open' AND through_id IS NULL AND after_id < ? - 1",
        (heard_id, heard_id),
    )


def due_losses(connection: sqlite3.Connection, now: str) -> list[Loss]:
    rows = connection.execute(
        "SELECT id, cause, after_id, through_id, cursor, window_ends_at FROM losses"
        " WHERE state = 'open' AND due_at <= ? ORDER BY id",
        (now,),
    ).fetchall()
    return [
        Loss(
            id=int(row[0]),
            cause=str(row[1]),
            after_id=int(row[2]),
            through_id=None if row[3] is None else int(row[3]),
            cursor=int(row[4]),
            window_ends_at=parse_timestamp(str(row[5])),
        )
        for row in rows
    ]


def advance_loss(connection: sqlite3.Connection, loss_id: int, cursor: int, recovered: int) -> None:
    connection.execute(
        "UPDATE losses SET cursor = MAX(cursor, ?), recovered = recovered + ? WHERE id = ? AND state = 'open'",
        (cursor, recovered, loss_id),
    )


def settle_loss(connection: sqlite3.Connection, loss_id: int, state: LossState, now: str) -> None:
    connection.execute(
        "UPDATE losses SET state = ?, settled_at = ? WHERE id = ? AND state = 'open'", (state.value, now, loss_id)
    )


def read_loss_counts(ledger: Ledger) -> LossCounts:
    with ledger.read() as connection:
        by_state = dict(connection.execute("SELECT state, COUNT(*) FROM losses GROUP BY state").fetchall())
        (gaps,) = connection.execute("SELECT COUNT(*) FROM gaps").fetchone()
    return LossCounts(
        int(by_state.get("open", 0)), int(by_state.get("repaired", 0)), int(by_state.get("unrecovered", 0)), int(gaps)
    )
