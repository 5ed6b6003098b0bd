"""The records (``events``), intake's checkpoints and each lane's news (``lane_news``): the only
module that writes any of them, each function inside the transaction of whoever owns the move.

A verdict is admission's: ``commit_verdict`` applies only while the record's revision is the one the
decision loaded and the record awaits a verdict, settles an admitted verdict to queued from one
snapshot of its conversation, keeps content for admitted or queued records alone, and writes the
intents the verdict calls for in the same transaction (a ``guard_delay`` of None is a shadow
ledger's, which writes none). Every other move of a record is decided by its owner and written here."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from core.admission import EventPointer, Verdict, settle_verdict
from core.dispatch import OPEN_STATES, BlockedBefore, LiveWork, OpenRecord, blocked_times, conversation_live
from core.edges import RECORD_EDGES, Actor, RecordState
from core.feed import FeedEvent, new_ids
from core.message_kinds import intents_for_verdict
from core.timestamps import format_timestamp
from shell.ledger import outbox, snapshots
from shell.ledger.connection import stored_time
from shell.ledger.intake import Lane
from shell.ledger.rules import asked

_OPEN = tuple(sorted(map(str, OPEN_STATES)))  # what live_work fetches: core.dispatch's open states


@dataclass(frozen=True, slots=True)
class LoadedRecord:
    pointer: EventPointer
    state: RecordState
    reason: str
    revision: int
    blocked_at: datetime | None
    next_retry_at: datetime | None

    @property
    def pending(self) -> bool:
        """Whether the record still awaits a verdict (seen, or blocked and offered again)."""
        return self.state in (RecordState.seen, RecordState.blocked)


def load(connection: sqlite3.Connection, event_id: int) -> LoadedRecord | None:
    found = connection.execute(
        "SELECT id, event_type, bucket_id, creator_id, performed_by_id, recording_id, state, reason, revision,"
        " blocked_at, next_retry_at FROM events WHERE id = ?",
        (event_id,),
    ).fetchone()
    if found is None:
        return None
    identifier, event_type, bucket, creator, performer, recording, state, reason, revision, blocked_at, due = found
    pointer = EventPointer(
        id=int(identifier), event_type=str(event_type), bucket_id=int(bucket), creator_id=int(creator),
        performed_by_id=None if performer is None else int(performer),
        actor_type="person", recording_id=int(recording),  # the feed is read with actor_types=person (core.feed)
    )
    return LoadedRecord(pointer, RecordState(state), str(reason), int(revision), stored_time(blocked_at),
                        stored_time(due))


def live_work(connection: sqlite3.Connection, conversation_key: str | None = None) -> LiveWork:
    """One snapshot for ``core.dispatch``: the open records (admitted, queued, dispatched; only
    those on ``conversation_key`` when it is given) and the live tasks' conversations and
    directories. A fetch only: the rules are core's."""
    on_conversation = "" if conversation_key is None else " AND e.conversation_key = ?"
    rows = connection.execute(
        "SELECT e.id, e.bucket_id, e.conversation_key, e.state, e.snapshot IS NOT NULL,"
        " EXISTS (SELECT 1 FROM task_events te WHERE te.event_id = e.id AND te.retired_at IS NULL)"
        f" FROM events e WHERE e.state IN ({', '.join('?' * len(_OPEN))})" + on_conversation,
        (*_OPEN, *(() if conversation_key is None else (conversation_key,))),
    ).fetchall()
    tasks = connection.execute("SELECT conversation_key, work_dir FROM tasks WHERE ended_at IS NULL").fetchall()
    return LiveWork(
        records=tuple(
            OpenRecord(int(event_id), int(bucket), str(key), RecordState(state), bool(snapshot), bool(on_task))
            for event_id, bucket, key, state, snapshot, on_task in rows
        ),
        task_conversations=frozenset(str(key) for key, _ in tasks if key is not None),
        task_dirs=frozenset(str(directory) for _, directory in tasks if directory is not None),
    )


def due_blocked(connection: sqlite3.Connection, now: datetime) -> list[tuple[int, int]]:
    due = connection.execute(
        "SELECT id, revision FROM events WHERE state = 'blocked' AND next_retry_at IS NOT NULL"
        " AND next_retry_at <= ? ORDER BY id",
        (format_timestamp(now),),
    )
    return [(int(event_id), int(revision)) for event_id, revision in due]


def blocked_for(connection: sqlite3.Connection, reason: str) -> list[int]:
    sql = "SELECT id FROM events WHERE state = 'blocked' AND reason = ? ORDER BY id"
    return [int(event_id) for (event_id,) in connection.execute(sql, (reason,))]


def commit_verdict(  # noqa: PLR0917 -- a verdict's parts, positional
    connection: sqlite3.Connection, event_id: int, loaded_revision: int, verdict: Verdict, now: datetime,
    guard_delay: timedelta | None,
) -> bool:  # fmt: skip
    current = load(connection, event_id)
    if current is None or current.revision != loaded_revision or not current.pending:
        return False
    work = live_work(connection, verdict.conversation_key)
    settled = settle_verdict(verdict, conversation_live(work, event_id, verdict.conversation_key))
    if not _write_verdict(connection, current, settled, now):
        return False
    if guard_delay is not None:
        record = snapshots.record(connection, event_id)
        assert record is not None  # written above, in this transaction
        outbox.write_intents(connection, intents_for_verdict(record, now, guard_delay), now)
    return True


def _write_verdict(connection: sqlite3.Connection, current: LoadedRecord, settled: Verdict, now: datetime) -> bool:
    """The settled verdict on the record, compare-and-set on its revision; whether it was written."""
    state = asked(RECORD_EDGES, current.state, settled.state, Actor.admission)
    stamp = format_timestamp(now)
    reason = "" if settled.reason is None else str(settled.reason)
    before = BlockedBefore(current.state, current.reason, current.blocked_at)
    times = blocked_times(before, settled.state, reason, now, settled.retry_at)  # core.dispatch
    snapshot = None if settled.snapshot is None else json.dumps(dict(settled.snapshot), sort_keys=True)
    recording_url = "" if settled.snapshot is None else str(settled.snapshot.get("app_url") or "")
    recording_type = "" if settled.snapshot is None else str(settled.snapshot.get("type") or "")
    return connection.execute(
        "UPDATE events SET state = ?, reason = ?, trigger_name = ?, acknowledge = ?, conversation_key = ?,"
        " reply_kind = ?, reply_bucket_id = ?, reply_recording_id = ?, requester_id = ?, snapshot = ?,"
        " recording_url = ?, recording_type = ?, decided_at = ?, updated_at = ?, blocked_at = ?,"
        " retry_at = ?, next_retry_at = ?, revision = revision + 1"
        " WHERE id = ? AND revision = ?",
        (
            str(state), reason, "" if settled.trigger is None else str(settled.trigger), int(settled.acknowledge),
            settled.conversation_key, "" if settled.reply_kind is None else str(settled.reply_kind),
            settled.reply_bucket_id, settled.reply_recording_id, settled.requester_id, snapshot, recording_url,
            recording_type, stamp, stamp, None if times.blocked_at is None else format_timestamp(times.blocked_at),
            None if settled.retry_at is None else format_timestamp(settled.retry_at),
            None if times.next_retry_at is None else format_timestamp(times.next_retry_at),
            current.pointer.id, current.revision,
        ),
    ).rowcount == 1


def checkpoint(connection: sqlite3.Connection, digest: str) -> tuple[str, int] | None:
    row = connection.execute("SELECT position, last_served_id FROM checkpoints WHERE filter_digest = ?", (digest,)).fetchone()
    return None if row is None else (str(row[0]), int(row[1]))


def insert_seen(connection: sqlite3.Connection, events: Sequence[tuple[FeedEvent, str]], lane: Lane,
                now: str) -> tuple[int, ...]:
    """Record each (event, its created_at as a ledger timestamp) not yet known as ``seen``, with the
    lane that heard it (``ON CONFLICT(id) DO NOTHING``: one row per id); the ids newly recorded.
    When there are some, the lane's ``lane_news`` says so: it brought what no other lane had."""
    ids = [event.id for event, _ in events]
    if not ids:
        return ()
    marks = ", ".join("?" for _ in ids)
    known = [int(found[0]) for found in connection.execute(f"SELECT id FROM events WHERE id IN ({marks})", ids)]
    fresh = new_ids(ids, known)
    for event, created_at in events:
        if event.id not in fresh:
            continue
        connection.execute(
            "INSERT INTO events (id, state, event_type, bucket_id, recording_id, creator_id, performed_by_id,"
            " created_at, seen_at, updated_at, lane) VALUES (?, 'seen', ?, ?, ?, ?, ?, ?, ?, ?, ?)"
            " ON CONFLICT(id) DO NOTHING",
            (event.id, event.event_type, event.bucket_id, event.recording_id, event.creator_id,
             event.performed_by_id, created_at, now, now, lane.value),
        )
    if fresh:
        connection.execute(
            "INSERT INTO lane_news (lane, last_new_at, last_new_id, news) VALUES (?, ?, ?, ?)"
            " ON CONFLICT(lane) DO UPDATE SET last_new_at = excluded.last_new_at,"
            " last_new_id = excluded.last_new_id, news = lane_news.news + excluded.news",
            (lane.value, now, max(fresh), len(fresh)),
        )
    return fresh


def save_checkpoint(connection: sqlite3.Connection, digest: str, position: str, last_served_id: int, now: str) -> None:
    connection.execute(
        "INSERT INTO checkpoints (filter_digest, position, last_served_id, updated_at) VALUES (?, ?, ?, ?)"
        " ON CONFLICT(filter_digest) DO UPDATE SET position = excluded.position,"
        " last_served_id = excluded.last_served_id, updated_at = excluded.updated_at",
        (digest, position, last_served_id, now),
    )


def seen_ids(connection: sqlite3.Connection) -> list[int]:
    return [int(row[0]) for row in connection.execute("SELECT id FROM events WHERE state = 'seen' ORDER BY id")]


def dispatch(connection: sqlite3.Connection, event_id: int, stamp: str, dispatched: RecordState) -> sqlite3.Cursor:
    """A waiting record joins a task: dispatched, as core answered."""
    return connection.execute(
        "UPDATE events SET state = ?, revision = revision + 1, updated_at = ?"
        " WHERE id = ? AND state IN ('admitted', 'queued')",
        (str(dispatched), stamp, event_id),
    )


def settle(connection: sqlite3.Connection, event_id: int, state: RecordState, reason: str, stamp: str) -> None:
    connection.execute(
        "UPDATE events SET state = ?, reason = ?, revision = revision + 1, updated_at = ?"
        " WHERE id = ? AND state = 'dispatched'",
        (str(state), reason, stamp, event_id),
    )


def decide(
    connection: sqlite3.Connection, event_id: int, revision: int, *, state: RecordState, reason: str,
    offer_at: datetime | None, stamp: str,
) -> int:  # fmt: skip
    """A person's decision moves the record, compare-and-set on its revision; a record blocked again
    starts a fresh retry window. The row count."""
    blocked = state is RecordState.blocked
    return connection.execute(
        "UPDATE events SET state = ?, reason = ?, revision = revision + 1, updated_at = ?, decided_at = ?,"
        " blocked_at = CASE WHEN ? THEN ? END, next_retry_at = ?"
        " WHERE id = ? AND revision = ?",
        (str(state), reason, stamp, stamp, blocked, stamp,
         None if offer_at is None else format_timestamp(offer_at), event_id, revision),
    ).rowcount


def open_records(connection: sqlite3.Connection) -> list[tuple[int, RecordState, int]]:
    sql = "SELECT id, state, revision FROM events WHERE state NOT IN ('completed', 'discarded') ORDER BY id"
    return [(event_id, RecordState(state), revision) for event_id, state, revision in connection.execute(sql)]


def tag_for_review(connection: sqlite3.Connection, event_ids: Sequence[int], stamp: str) -> None:
    sql = "UPDATE events SET review = 1, updated_at = ? WHERE id = ?"
    connection.executemany(sql, [(stamp, event_id) for event_id in event_ids])


def hold(connection: sqlite3.Connection, event_id: int, revision: int, held: RecordState, stamp: str) -> int:
    """A hold moves a waiting record to held, compare-and-set on its revision; the row count."""
    return connection.execute(
        "UPDATE events SET state = ?, revision = revision + 1, updated_at = ?"
        " WHERE id = ? AND revision = ? AND state IN ('admitted', 'queued')",
        (str(held), stamp, event_id, revision),
    ).rowcount


def tombstone(connection: sqlite3.Connection, event_ids: Sequence[int], stamp: str) -> None:
    """An import's entries decided done for events this ledger never saw: discarded(imported_done)
    from their first row, so intake's ``insert_seen`` finds them known and never admits them."""
    connection.executemany(
        "INSERT INTO events (id, state, reason, seen_at, updated_at, decided_at)"
        " VALUES (?, 'discarded', 'imported_done', ?, ?, ?)",
        [(event_id, stamp, stamp, stamp) for event_id in event_ids],
    )


def recorded_among(connection: sqlite3.Connection, event_ids: Sequence[int]) -> set[int]:
    """Which of ``event_ids`` (any number: one JSON array, not a variable each) the ledger records."""
    sql = "SELECT id FROM events WHERE id IN (SELECT value FROM json_each(?))"
    found = connection.execute(sql, (json.dumps(list(event_ids)),))
    return {int(row[0]) for row in found}


def held_count(connection: sqlite3.Connection) -> int:
    return int(connection.execute("SELECT COUNT(*) FROM events WHERE state = 'held'").fetchone()[0])
