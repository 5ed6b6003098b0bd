"""Which record may start, and whether a conversation or a directory is live: the dispatcher's and
admission's decisions, as pure functions of one snapshot (``shell.ledger.records.live_work``).

Rules:
1. A conversation is live when a live task is on it, or an older record on it is admitted,
   queued or dispatched (``conversation_live``): a new request there waits (queued).
2. A task is created only when no live task is on its conversation or directory (``task_free``).
3. A record may start (``startable``) when it is admitted or queued, has its snapshot and a
   conversation, is in a routed project, is on no live task row, and its conversation is not
   live; oldest first, at most ``limit``.
4. A task takes every record waiting on its conversation (``joining``: admitted or queued, with
   its snapshot, on no live task row, rule 3's ``waiting``), oldest first, at launch and after.
"""

from __future__ import annotations

from collections.abc import Set
from dataclasses import dataclass

from core.edges import RecordState

OPEN_STATES = frozenset({RecordState.admitted, RecordState.queued, RecordState.dispatched})
"""A record in one of these holds its conversation (rule 1)."""
WAITING_STATES = frozenset({RecordState.admitted, RecordState.queued})


@dataclass(frozen=True, slots=True)
class OpenRecord:
    """A record admitted, queued or dispatched, as the snapshot reads it."""

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
    """Rule 1: ``conversation_key`` (of record ``event_id``) is held by a task or an older record."""
    if not conversation_key:
        return False
    if conversation_key in work.task_conversations:
        return True
    return any(
        record.conversation_key == conversation_key and record.event_id < event_id for record in work.records
    )


def task_free(work: LiveWork, conversation_key: str, work_dir: str) -> bool:
    """Rule 2: no live task on the conversation, nor in the directory."""
    return conversation_key not in work.task_conversations and work_dir not in work.task_dirs


def waiting(record: OpenRecord) -> bool:
    """Rule 3's test of the record itself: admitted or queued, with its snapshot, on no live task row."""
    return record.state in WAITING_STATES and record.has_snapshot and not record.on_live_task


def joining(work: LiveWork, conversation_key: str) -> tuple[OpenRecord, ...]:
    """Rule 4: the records waiting on ``conversation_key`` a task on it takes, oldest first."""
    on_it = [record for record in work.records if record.conversation_key == conversation_key]
    return tuple(sorted(filter(waiting, on_it), key=lambda record: record.event_id))


def startable(work: LiveWork, buckets: Set[int], limit: int) -> list[tuple[int, int]]:
    """Rule 3: (event id, project) of the oldest startable record of each free conversation."""
    oldest: dict[str, int] = {}
    for record in work.records:
        if record.conversation_key:
            key = record.conversation_key
            oldest[key] = min(record.event_id, oldest.get(key, record.event_id))
    found: list[tuple[int, int]] = []
    for record in sorted(work.records, key=lambda record: record.event_id):
        if len(found) >= limit:
            break
        if (
            waiting(record)
            and record.conversation_key
            and record.bucket_id in buckets
            and record.conversation_key not in work.task_conversations
            and oldest[record.conversation_key] == record.event_id
        ):
            found.append((record.event_id, record.bucket_id))
    return found
