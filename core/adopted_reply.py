"""The adopted-reply rule (with a body-fallback filter): a worker that
replied but never reported has its reply adopted, next to its ``unknown`` outcome.

Rules:
1. A candidate is a settled task row whose outcome is ``unknown``, delivered (``delivered_at``
   set), with no ``reply_id`` and no ``adopted_reply_id`` (``is_candidate``).
2. Of the agent's messages listed at its reply destination, a reply is adoptable when created
   strictly after the row's delivery and strictly before the task's next acknowledgement (none:
   no bound), and it is not a worker's own message (any ``ack_id``, ``reply_id`` or
   ``adopted_reply_id``), a lifecycle message by receipt, or one with the words of a non-canceled
   lifecycle intent there (a canceled one provably does not exist, so its words hide nothing).
3. Exactly one adoptable reply is adopted (``choose_reply``); none or several: None, and the
   outcome stays ``unknown`` for a person. The outcome is never changed.
4. The rule runs inside the settlement's transaction, before the completion notice is written,
   so the notice asks only about what adoption left (``core.templates`` rule 6). Its listings
   are read before that transaction, for each row that ``may_become_candidate``
   (``ListedReplies``)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Set
from dataclasses import dataclass
from datetime import datetime

from core.destinations import ListedMessage
from core.states import EventOutcome


@dataclass(frozen=True, slots=True)
class AdoptionRow:
    """A row of a settled task, as the rule reads it."""

    event_id: int
    outcome: EventOutcome | None
    delivered_at: datetime | None
    reply_id: int | None = None
    adopted_reply_id: int | None = None


@dataclass(frozen=True, slots=True)
class LifecycleMessages:
    """What the connector's own lifecycle messages at one destination look like."""

    receipts: frozenset[int]
    words: frozenset[str]  # message_text of every non-canceled intent's body there


@dataclass(frozen=True, slots=True)
class ListedReplies:
    """Rule 4: the agent's messages listed at each row's reply destination, read before the
    settlement, by event id; a row whose listing failed (or was not made) is absent."""

    agent_id: int
    listed: Mapping[int, tuple[ListedMessage, ...]]


def may_become_candidate(row: AdoptionRow) -> bool:
    """Rule 4: before its task settles, whether ``row`` may be a candidate once it has."""
    return (
        row.outcome not in (EventOutcome.succeeded, EventOutcome.failed)
        and row.delivered_at is not None
        and row.reply_id is None
        and row.adopted_reply_id is None
    )


def is_candidate(row: AdoptionRow) -> bool:
    """Rule 1."""
    return (
        row.outcome == EventOutcome.unknown
        and row.delivered_at is not None
        and row.reply_id is None
        and row.adopted_reply_id is None
    )


def next_acknowledgement(row: AdoptionRow, task_rows: Iterable[AdoptionRow]) -> datetime | None:
    """The earliest acknowledgement on the task after ``row``'s own; None when there is none."""
    if row.delivered_at is None:
        return None
    later = [
        other.delivered_at
        for other in task_rows
        if other.event_id != row.event_id
        and other.delivered_at is not None
        and other.delivered_at > row.delivered_at
    ]
    return min(later, default=None)


def choose_reply(
    row: AdoptionRow,
    listed: Iterable[ListedMessage],
    *,
    agent_id: int,
    next_ack_at: datetime | None,
    workers_own: Set[int],
    lifecycle: LifecycleMessages,
) -> int | None:
    """The one reply to adopt for ``row`` (rules 2 and 3), or None."""
    if not is_candidate(row) or row.delivered_at is None:
        return None
    delivered_at = row.delivered_at
    adoptable = {
        message.id
        for message in listed
        if message.creator_id == agent_id
        and message.created_at > delivered_at
        and (next_ack_at is None or message.created_at < next_ack_at)
        and message.id not in workers_own
        and message.id not in lifecycle.receipts
        and message.text not in lifecycle.words
    }
    if len(adoptable) != 1:
        return None
    (reply_id,) = adoptable
    return reply_id
