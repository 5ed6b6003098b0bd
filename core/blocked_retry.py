"""When a record admission leaves blocked was blocked, and when it is next retried: a pure
function of the record as loaded and the verdict settled, for ``shell.ledger.records``.

Rule: a record blocked again for the reason it was already blocked for keeps the time it was
first blocked, so its retry window (``core.admission.next_retry``) runs from then and a read
that keeps failing stops being retried when the window closes; blocked anew, or for another
reason, its window starts now. A record the verdict does not block has neither time.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from core.admission import next_retry
from core.edges import RecordState


@dataclass(frozen=True, slots=True)
class BlockedTimes:
    """What the verdict writes: ``blocked_at`` and ``next_retry_at`` (None: not written)."""

    blocked_at: datetime | None
    next_retry_at: datetime | None


@dataclass(frozen=True, slots=True)
class BlockedBefore:
    """The record as admission loaded it: its state, reason and when it was blocked."""

    state: RecordState
    reason: str
    blocked_at: datetime | None


def blocked_times(
    before: BlockedBefore, state: RecordState, reason: str, now: datetime, retry_at: datetime | None
) -> BlockedTimes:
    """The rule above, for a verdict that moves the record to ``state`` for ``reason``."""
    if state is not RecordState.blocked:
        return BlockedTimes(None, None)
    kept = before.state is RecordState.blocked and before.reason == reason and before.blocked_at is not None
    since = before.blocked_at if kept and before.blocked_at is not None else now
    return BlockedTimes(since, next_retry(reason, since, now, retry_at))
