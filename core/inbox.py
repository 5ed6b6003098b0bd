"""The agent's inbox as intake reads it (``GET /inbox.json``, Basecamp SDK 0.29.1 ``poll_inbox``).

Rules:
1. Reasons map onto the admission matrix's triggers (``REASON_TRIGGERS``); intake asks for those
   that map onto one (``ASKED_REASONS``), and what it records is admitted by the same matrix, so
   an item the matrix would discard is still recorded as seen, and discarded there.
2. A page is read whole or refused (``read_inbox_page``: ids strictly increasing, each item's
   event one the feed's own reading accepts, a position).
3. An inbox position is a credential like the feed's: no value here prints it.
4. ``addressed_events``: the events of a page's items, each once (one event can be addressed
   for several reasons: deduplicated by event id, as the ledger records one row per event), in
   item order, leaving out those at or below ``floor`` (history from before the lane entered).
5. Refusals are a closed set (``read_inbox_refusal``), each saying what to do next.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from returns.result import Failure, Result, Success

from core.admission_matrix import Trigger
from core.feed import FeedEvent, PageRejected, read_envelope, read_event

REASON_TRIGGERS: Mapping[str, Trigger | None] = MappingProxyType(
    {
        "mentioned": Trigger.mentioned,
        "pinged": Trigger.mentioned,
        "assigned": Trigger.assigned,
        "subscribed": Trigger.subscribed,
        "watched": Trigger.completed,
        "boosted": None,
    }
)
"""Each addressing reason Basecamp documents -> the trigger it asks for (rule 1)."""

ASKED_REASONS: tuple[str, ...] = tuple(sorted(r for r, trigger in REASON_TRIGGERS.items() if trigger))


@dataclass(frozen=True, slots=True)
class InboxItem:
    addressing_id: int
    reason: str
    addressed_at: str
    event: FeedEvent


@dataclass(frozen=True, slots=True)
class InboxPage:
    """A page of the inbox. ``position`` and ``next_url`` never print (rule 3)."""

    items: tuple[InboxItem, ...]
    position: str = field(repr=False)
    next_url: str | None = field(default=None, repr=False)

    @property
    def last_item_id(self) -> int | None:
        return self.items[-1].addressing_id if self.items else None


def _item(value: object) -> InboxItem:
    if not isinstance(value, dict):
        raise ValueError("an inbox item is a JSON object")
    addressing_id, reason, addressed_at = (
        value.get(name) for name in ("addressing_id", "reason", "addressed_at")
    )
    if isinstance(addressing_id, bool) or not isinstance(addressing_id, int) or addressing_id <= 0:
        raise ValueError("an item's addressing_id is a positive integer")
    if not isinstance(reason, str) or not isinstance(addressed_at, str):
        raise ValueError("an item's reason and addressed_at are strings")
    return InboxItem(addressing_id, reason, addressed_at, read_event(value.get("event")))


def read_inbox_page(body: object) -> Result[InboxPage, PageRejected]:
    """A 200 body as a page, or why it cannot be recorded (rule 2)."""
    envelope = read_envelope(body, "items", "the inbox page")
    if isinstance(envelope, Failure):
        return Failure(envelope.failure())
    raw_items, position, next_url = envelope.unwrap()
    try:
        items = tuple(_item(raw) for raw in raw_items)
    except ValueError as error:
        return Failure(PageRejected(str(error)))
    ids = [item.addressing_id for item in items]
    if any(later <= earlier for earlier, later in itertools.pairwise(ids)):
        return Failure(PageRejected("the inbox page's addressing ids are not strictly increasing"))
    return Success(InboxPage(items, position, next_url))


def addressed_events(items: Iterable[InboxItem], floor: int) -> tuple[FeedEvent, ...]:
    """Rule 4."""
    found: dict[int, FeedEvent] = {}
    for item in items:
        if item.event.id > floor and item.event.id > 0:
            found.setdefault(item.event.id, item.event)
    return tuple(found.values())


# Refusals (rule 5).


@dataclass(frozen=True, slots=True)
class NotForPrincipal:
    """403: the inbox is for agents only; this principal has none."""


@dataclass(frozen=True, slots=True)
class InboxGone:
    """410: the position fell behind the 30-day retention; start again at ``since=0``."""


@dataclass(frozen=True, slots=True)
class PositionRefused:
    """400 ``invalid_position`` or 409: drop the position, resume after the last item read."""


@dataclass(frozen=True, slots=True)
class InboxFiltersRefused:
    """Any other 400: the request's filters are wrong; retrying will not help."""


@dataclass(frozen=True, slots=True)
class UnexpectedInboxAnswer:
    status: int


InboxRefusal = NotForPrincipal | InboxGone | PositionRefused | InboxFiltersRefused | UnexpectedInboxAnswer


def read_inbox_refusal(status: int, body: object) -> InboxRefusal:
    """What a non-200 answer of the inbox means (rule 5)."""
    fields = body if isinstance(body, dict) else {}
    match status:
        case 403:
            return NotForPrincipal()
        case 410:
            return InboxGone()
        case 400 if fields.get("reason") == "invalid_position":
            return PositionRefused()
        case 409:
            return PositionRefused()
        case 400:
            return InboxFiltersRefused()
        case _:
            return UnexpectedInboxAnswer(status)
