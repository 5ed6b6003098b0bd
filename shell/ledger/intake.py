"""What intake keeps besides the records: which lane heard an event, the live lane's state, the
inbox lane's position, and the stretches the feed lost (losses) or skipped (gaps). Each function
runs in its caller's transaction, except status's reads, which open one of their own.

The records themselves, and each lane's news, are ``shell.ledger.records.insert_seen``'s: one row
per id across lanes and restarts; only the poll lane moves the feed's checkpoint. The inbox lane's
position is saved inside the transaction that recorded its page's events, after them, so it is
never ahead of the records; status reads only whether one is kept, never its text. A loss is one
per stretch: an open loss still unbounded covers a new one, and an event heard bounds every open
unbounded loss before it (``core.intake_status`` holds their rules)."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING

from core.intake_status import InboxStatus, InboxVerdict, LaneNews, LaneState, LaneStatus, Loss, LossCounts
from core.timestamps import parse_timestamp
from shell.ledger.connection import Ledger

if TYPE_CHECKING:
    from core.intake_status import LossState


class Lane(StrEnum):
    poll = "poll"
    live = "live"
    repair = "repair"
    inbox = "inbox"  # the agent's inbox (shell.intake.inbox_lane)


def write_lane_state(connection: sqlite3.Connection, state: LaneState, why: str, now: str, *,
                     overflow: bool = False) -> None:
    """Keep the single ``live_lane`` row: a new state stamps ``since``, the same again keeps it (the
    reason is the latest); ``connected`` counts a connect unless the write only counts an overflow."""
    connected = 1 if state is LaneState.connected and not overflow else 0
    overflows = 1 if overflow else 0
    connection.execute(
        "INSERT INTO live_lane (id, state, since, why, connects, overflows, updated_at)"
        " VALUES (1, ?, ?, ?, ?, ?, ?) ON CONFLICT(id) DO UPDATE SET"
        " since = CASE WHEN live_lane.state = excluded.state THEN live_lane.since ELSE excluded.since END,"
        " why = excluded.why, state = excluded.state, connects = live_lane.connects + excluded.connects,"
        " overflows = live_lane.overflows + excluded.overflows, updated_at = excluded.updated_at",
        (state.value, now, why[:200], connected, overflows, now),
    )


def reset_lane_counts(connection: sqlite3.Connection) -> None:
    """A connector starting: counts are since this start."""
    connection.execute("UPDATE live_lane SET connects = 0, overflows = 0")


def read_lane_state(ledger: Ledger) -> LaneStatus | None:
    """For status: None when no live lane ever ran."""
    with ledger.read() as connection:
        sql = "SELECT state, since, why, connects, overflows FROM live_lane WHERE id = 1"
        row = connection.execute(sql).fetchone()
    return None if row is None else LaneStatus(LaneState(row[0]), *row[1:])  # every table is STRICT


def count_in_states(ledger: Ledger, states: Sequence[str]) -> int:
    """Records in any of ``states``: intake's backlog (``core.intake_status``)."""
    marks = ", ".join("?" for _ in states)
    with ledger.read() as connection:
        sql = f"SELECT COUNT(*) FROM events WHERE state IN ({marks})"
        (count,) = connection.execute(sql, tuple(states)).fetchone()
    return int(count)


def read_intake_status(ledger: Ledger) -> tuple[list[LaneNews], InboxStatus | None]:
    with ledger.read() as connection:
        sql = "SELECT lane, last_new_at, last_new_id, news FROM lane_news ORDER BY lane"
        news = [LaneNews(*row) for row in connection.execute(sql)]  # every table is STRICT
        state = read_inbox_state(connection)
    if state is None:
        return news, None
    return news, InboxStatus(state.verdict, state.verdict_since, state.why, bool(state.position),
                             state.last_item_id, state.read_at)


_INBOX_UPSERT = (
    "INSERT INTO inbox_lane (id, position, last_item_id, floor_id, verdict, verdict_since, why, read_at,"
    " updated_at) VALUES (1, ?, ?, ?, ?, ?, ?, ?, ?)"
    " ON CONFLICT(id) DO UPDATE SET position = excluded.position, last_item_id = excluded.last_item_id,"
    " floor_id = excluded.floor_id,"
    " verdict_since = CASE WHEN inbox_lane.verdict = excluded.verdict THEN inbox_lane.verdict_since"
    " ELSE excluded.verdict_since END, verdict = excluded.verdict, why = excluded.why,"
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


def read_inbox_state(connection: sqlite3.Connection) -> InboxLaneState | None:
    """None when no inbox lane ever ran on this ledger."""
    row = connection.execute(
        "SELECT position, last_item_id, floor_id, verdict, verdict_since, why, read_at, updated_at"
        " FROM inbox_lane WHERE id = 1"
    ).fetchone()
    if row is None:
        return None
    position, last, floor, verdict, *rest = row  # every table is STRICT: a value read is of its column's type
    return InboxLaneState(position, last, floor, InboxVerdict(verdict), *rest)


def save_inbox_page(connection: sqlite3.Connection, position: str, last_item_id: int, floor_id: int,
                    now: str) -> None:
    connection.execute(_INBOX_UPSERT,
                       (position, last_item_id, floor_id, InboxVerdict.available.value, now, "", now, now))


def write_inbox_verdict(
    connection: sqlite3.Connection, verdict: InboxVerdict, why: str, now: str, *, position: str | None = None,
    last_item_id: int | None = None, floor_id: int = 0,
) -> None:
    """A new verdict and its reason, keeping the position and the last item id unless given new ones
    (a dropped position after the inbox's 400/409, and the last item 0 too after its 410), and the
    floor once set (``floor_id`` sets it where none is yet); the same verdict keeps its ``since``."""
    found = read_inbox_state(connection)
    kept = "" if found is None else found.position
    last, floor = (0, floor_id) if found is None else (found.last_item_id, found.floor_id or floor_id)
    values = (kept if position is None else position, last if last_item_id is None else last_item_id, floor,
              verdict.value, now, why[:200], None, now)
    connection.execute(_INBOX_UPSERT, values)


def record_gap(connection: sqlite3.Connection, after_id: int, resumed_after_id: int, now: str) -> None:
    sql = "INSERT INTO gaps (after_id, resumed_after_id, recorded_at) VALUES (?, ?, ?)"
    connection.execute(sql, (after_id, resumed_after_id, now))


def record_loss(connection: sqlite3.Connection, cause: str, after_id: int | None, *, now: str, due_at: str,
                window_ends_at: str) -> int | None:
    """A new loss after ``after_id`` (None: the newest event), or None if an open unbounded one covers it."""
    if after_id is None:
        after_id = int(connection.execute("SELECT COALESCE(MAX(id), 0) FROM events").fetchone()[0])
    sql = "SELECT id FROM losses WHERE state = 'open' AND through_id IS NULL AND after_id <= ?"
    covering = connection.execute(sql, (after_id,)).fetchone()
    if covering is not None:
        return None
    found = connection.execute(
        "INSERT INTO losses (cause, after_id, cursor, recorded_at, due_at, window_ends_at)"
        " VALUES (?, ?, ?, ?, ?, ?) RETURNING id",
        (cause, after_id, after_id, now, due_at, window_ends_at),
    ).fetchone()
    return int(found[0])


def bound_losses(connection: sqlite3.Connection, heard_id: int, now: str) -> None:
    """An event heard bounds every open unbounded loss before it; one its bound leaves empty (the
    event right after ``after_id``) is repaired at once."""
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
    return [
        Loss(int(loss_id), str(cause), int(after_id), None if through_id is None else int(through_id),
             int(cursor), parse_timestamp(str(window_ends_at)))
        for loss_id, cause, after_id, through_id, cursor, window_ends_at in connection.execute(
            "SELECT id, cause, after_id, through_id, cursor, window_ends_at FROM losses"
            " WHERE state = 'open' AND due_at <= ? ORDER BY id",
            (now,),
        )
    ]  # fmt: skip


def advance_loss(connection: sqlite3.Connection, loss_id: int, cursor: int, recovered: int) -> None:
    connection.execute(
        "UPDATE losses SET cursor = MAX(cursor, ?), recovered = recovered + ? WHERE id = ? AND state = 'open'",
        (cursor, recovered, loss_id),
    )


def settle_loss(connection: sqlite3.Connection, loss_id: int, state: LossState, now: str) -> None:
    sql = "UPDATE losses SET state = ?, settled_at = ? WHERE id = ? AND state = 'open'"
    connection.execute(sql, (state.value, now, loss_id))


def read_loss_counts(ledger: Ledger) -> LossCounts:
    with ledger.read() as connection:
        by_state = dict(connection.execute("SELECT state, COUNT(*) FROM losses GROUP BY state").fetchall())
        (gaps,) = connection.execute("SELECT COUNT(*) FROM gaps").fetchone()
    return LossCounts(int(by_state.get("open", 0)), int(by_state.get("repaired", 0)),
                      int(by_state.get("unrecovered", 0)), int(gaps))
