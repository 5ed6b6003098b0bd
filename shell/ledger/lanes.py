"""The lanes that hear feed events, and the live lane's state (migration 10).

Rules:
1. ``Lane`` names which lane heard an event; ``shell.ledger.records.insert_seen`` (the events
   table's one writer) records it: one row per id, across lanes and restarts, and never a
   checkpoint (the poll lane alone moves the position).
2. ``write_lane_state`` keeps the single ``live_lane`` row: a new state stamps ``since``; the
   same state again keeps it (the reason is the latest). ``connected`` counts a connect,
   unless the write only counts an overflow (``overflow=True``).
3. ``read_lane_state`` is for status: None when no live lane ever ran.
4. ``count_in_states`` counts records, for intake's backlog (``core.intake_status``).
5. ``read_intake_status`` is for status too: each lane's news (``lane_news``, written with the
   events rows by ``shell.ledger.records``) and the inbox lane's row (``shell.ledger.inbox_lane``),
   in one read transaction; never the inbox's position, only whether one is kept.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from enum import StrEnum

from core.intake_status import InboxStatus, LaneNews, LaneState, LaneStatus
from shell.ledger import inbox_lane
from shell.ledger.connection import Ledger


class Lane(StrEnum):
    poll = "poll"
    live = "live"
    repair = "repair"
    inbox = "inbox"  # migration 16: the agent's inbox (shell.intake.inbox_lane)


def write_lane_state(
    connection: sqlite3.Connection, state: LaneState, why: str, now: str, *, overflow: bool = False
) -> None:
    """Rule 2."""
    connected = 1 if state is LaneState.connected and not overflow else 0
    overflows = 1 if overflow else 0
    connection.execute(
        "INSERT INTO live_lane (id, state, since, why, connects, overflows, updated_at)"
        " VALUES (1, ?, ?, ?, ?, ?, ?)"
        " ON CONFLICT(id) DO UPDATE SET"
        " since = CASE WHEN live_lane.state = excluded.state THEN live_lane.since ELSE excluded.since END,"
        " why = excluded.why,"
        " state = excluded.state, connects = live_lane.connects + excluded.connects,"
        " overflows = live_lane.overflows + excluded.overflows, updated_at = excluded.updated_at",
        (state.value, now, why[:200], connected, overflows, now),
    )


def reset_lane_counts(connection: sqlite3.Connection) -> None:
    """A connector starting: counts are since this start."""
    connection.execute("UPDATE live_lane SET connects = 0, overflows = 0")


def read_lane_state(ledger: Ledger) -> LaneStatus | None:
    """Rule 3 (one read transaction)."""
    with ledger.read() as connection:
        row = connection.execute(
            "SELECT state, since, why, connects, overflows FROM live_lane WHERE id = 1"
        ).fetchone()
    if row is None:
        return None
    return LaneStatus(LaneState(str(row[0])), str(row[1]), str(row[2]), int(row[3]), int(row[4]))


def count_in_states(ledger: Ledger, states: Sequence[str]) -> int:
    """Records in any of ``states`` (one read transaction): intake's backlog."""
    marks = ", ".join("?" for _ in states)
    with ledger.read() as connection:
        (count,) = connection.execute(
            f"SELECT COUNT(*) FROM events WHERE state IN ({marks})", tuple(states)
        ).fetchone()
    return int(count)


def read_intake_status(ledger: Ledger) -> tuple[list[LaneNews], InboxStatus | None]:
    """Rule 5."""
    with ledger.read() as connection:
        news = [
            LaneNews(str(lane), str(at), int(last), int(count))
            for lane, at, last, count in connection.execute(
                "SELECT lane, last_new_at, last_new_id, news FROM lane_news ORDER BY lane"
            )
        ]
        state = inbox_lane.read_state(connection)
    if state is None:
        return news, None
    inbox = InboxStatus(
        state.verdict, state.verdict_since, state.why, bool(state.position), state.last_item_id, state.read_at
    )
    return news, inbox
