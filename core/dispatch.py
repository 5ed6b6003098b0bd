"""When a record moves on: whether a conversation or a directory is live, which record may start,
and when a blocked one is next tried.

A conversation is live when a live task is on it, or an older record on it is admitted, queued or
dispatched: a new request there waits, queued. A task is created only when no live task is on its
conversation or its directory. A record may start when it is waiting (admitted or queued, with its
snapshot, on no live task row), has a conversation, is in a routed project and is the oldest open
record of that conversation, which no task holds; oldest first, at most ``limit``. A task takes
every record waiting on its conversation, oldest first, at launch and after.

A record blocked again for the reason it was already blocked for keeps the time it was first
blocked, so its retry window (``core.admission.next_retry``) runs from then and a read that keeps
failing stops being retried when the window closes; blocked anew, or for another reason, its
window starts now. A record the verdict does not block has neither time.
"""

from __future__ import annotations

from collections.abc import Set
from dataclasses import dataclass
from datetime import datetime

from core.admission import next_retry
from core.edges import RecordState

OPEN_STATES = frozenset({RecordState.admitted, RecordState.queued, RecordState.dispatched})
WAITING_STATES = frozenset({RecordState.admitted, RecordState.queued})


@dataclass(frozen=True, slots=True)
class OpenRecord:
    event_id: int
    bucket_id: int
    conversation_key: str
    state: RecordState
    has_snapshot: bool
    on_live_task: bool  # a task row of it is not retired


@dataclass(frozen=True, slots=True)
class LiveWork:
    """One snapshot: every open record, and the conversations and directories of live tasks."""
    records: tuple[OpenRecord, ...]
    task_conversations: frozenset[str]
    task_dirs: frozenset[str]


def conversation_live(work: LiveWork, event_id: int, conversation_key: str) -> bool:
    if not conversation_key:
        return False
    if conversation_key in work.task_conversations:
        return True
    return any(
        record.conversation_key == conversation_key and record.event_id < event_id for record in work.records
    )


def task_free(work: LiveWork, conversation_key: str, work_dir: str) -> bool:
    return conversation_key not in work.task_conversations and work_dir not in work.task_dirs


def waiting(record: OpenRecord) -> bool:
    return record.state in WAITING_STATES and record.has_snapshot and not record.on_live_task


def joining(work: LiveWork, conversation_key: str) -> tuple[OpenRecord, ...]:
    on_it = [record for record in work.records if record.conversation_key == conversation_key]
    return tuple(sorted(filter(waiting, on_it), key=lambda record: record.event_id))


def startable(work: LiveWork, buckets: Set[int], limit: int) -> list[tuple[int, int]]:
    """(event id, project) of the oldest startable record of each free conversation."""
    oldest: dict[str, int] = {}
    for record in work.records:
        if record.conversation_key:
            key = record.conversation_key
            oldest[key] = min(record.event_id, oldest.get(key, record.event_id))
    found: list[tuple[int, int]] = []
    for record in sorted(work.records, key=lambda record: record.event_id):
        if len(found) >= limit:
            break
        key = record.conversation_key
        free = key and key not in work.task_conversations and oldest[key] == record.event_id
        if waiting(record) and record.bucket_id in buckets and free:
            found.append((record.event_id, record.bucket_id))
    return found


@dataclass(frozen=True, slots=True)
class BlockedTimes:
    """What the verdict writes: ``blocked_at`` and ``next_retry_at`` (None: not written)."""
    blocked_at: datetime | None
    next_retry_at: datetime | None


@dataclass(frozen=True, slots=True)
class BlockedBefore:
    state: RecordState
    reason: str
    blocked_at: datetime | None


def blocked_times(
    before: BlockedBefore, state: RecordState, reason: str, now: datetime, retry_at: datetime | None
) -> BlockedTimes:
    if state is not RecordState.blocked:
        return BlockedTimes(None, None)
    kept = before.state is RecordState.blocked and before.reason == reason and before.blocked_at is not None
    since = before.blocked_at if kept and before.blocked_at is not None else now
    return BlockedTimes(since, next_retry(reason, since, now, retry_at))
