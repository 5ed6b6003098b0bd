"""The inbox lane's row (migration 16): its position and what is known of the agent's inbox.

Rules:
1. ``inbox_lane`` is written here alone, one row (id 1). ``save_page`` writes the position, the
   last item id and the floor, and the verdict ``available`` -- inside the transaction that
   recorded the page's events (``shell.ledger.records.insert_seen``), after them: the position
   is never ahead of the records.
2. ``write_verdict`` changes the verdict (and its reason) and keeps the position and the last
   item id, unless given new ones (a dropped position after the inbox's 400/409, and the last
   item 0 too after its 410), and the floor once set (``floor_id`` sets it where none is yet); a
   new verdict stamps ``verdict_since``, the same again keeps it.
3. ``read_state`` answers None when no inbox lane ever ran on this ledger.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field

from core.intake_status import InboxVerdict

_UPSERT = (
    "INSERT INTO inbox_lane (id, position, last_item_id, floor_id, verdict, verdict_since, why, read_at,"
    " updated_at) VALUES (1, ?, ?, ?, ?, ?, ?, ?, ?)"
    " ON CONFLICT(id) DO UPDATE SET position = excluded.position, last_item_id = excluded.last_item_id,"
    " floor_id = excluded.floor_id,"
    " verdict_since = CASE WHEN inbox_lane.verdict = excluded.verdict THEN inbox_lane.verdict_since"
    " ELSE excluded.verdict_since END,"
    " verdict = excluded.verdict, why = excluded.why,"
    " read_at = COALESCE(excluded.read_at, inbox_lane.read_at), updated_at = excluded.updated_at"
)


@dataclass(frozen=True, slots=True)
class InboxLaneState:
    """The row as committed. ``position`` is '' when there is none; it never prints."""

    position: str = field(repr=False)
    last_item_id: int
    floor_id: int
    verdict: InboxVerdict
    verdict_since: str
    why: str
    read_at: str | None
    updated_at: str


def read_state(connection: sqlite3.Connection) -> InboxLaneState | None:
    """Rule 3."""
    row = connection.execute(
        "SELECT position, last_item_id, floor_id, verdict, verdict_since, why, read_at, updated_at"
        " FROM inbox_lane WHERE id = 1"
    ).fetchone()
    if row is None:
        return None
    position, last, floor, verdict, since, why, read_at, updated = row
    return InboxLaneState(
        str(position), int(last), int(floor), InboxVerdict(str(verdict)), str(since), str(why),
        None if read_at is None else str(read_at), str(updated),
    )  # fmt: skip


def save_page(
    connection: sqlite3.Connection, position: str, last_item_id: int, floor_id: int, now: str
) -> None:
    """Rule 1."""
    connection.execute(
        _UPSERT, (position, last_item_id, floor_id, InboxVerdict.available.value, now, "", now, now)
    )


def write_verdict(
    connection: sqlite3.Connection,
    verdict: InboxVerdict,
    why: str,
    now: str,
    *,
    position: str | None = None,
    last_item_id: int | None = None,
    floor_id: int = 0,
) -> None:
    """Rule 2."""
    found = read_state(connection)
    kept = "" if found is None else found.position
    last, floor = (0, floor_id) if found is None else (found.last_item_id, found.floor_id or floor_id)
    values = (
        kept if position is None else position, last if last_item_id is None else last_item_id, floor,
        verdict.value, now, why[:200], None, now,
    )  # fmt: skip
    connection.execute(_UPSERT, values)
