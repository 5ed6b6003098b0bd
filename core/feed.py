"""What intake reads from Basecamp, as values: the account feed's pages and refusals, the agent's
inbox (``GET /inbox.json``), and the live lane's stream ticket and Action Cable frames.

A page is read whole or refused (``PageRejected``, and nothing of it is recorded): ids strictly
increasing, a position of at most ``MAX_POSITION_BYTES``, each event a thin pointer whose ``details``
are kept as given. A position the server finds too long to read back (414, 431) is refused as an
invalid one is. A feed or
inbox position, a ``next`` URL and a stream ticket are credentials: never built, parsed, logged or
shown. The filters are the checkpoint's identity: kept sorted without repeats, so two spellings
are one value, and changing one starts a new lineage. Each source's refusals are a closed set,
each saying what to do next; an answer that fits none (a 410 without an ``epoch_after_id``) means
back off, never guess.
"""

from __future__ import annotations

import hashlib
import itertools
import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from operator import attrgetter
from types import MappingProxyType
from typing import Any, TypeVar
from urllib.parse import urlsplit, urlunsplit

from returns.result import Failure, Result, Success

from core.admission import Trigger
from core.json_input import JsonRefused, decode_json
from core.links import ticket_url_allowed

MAX_BUCKETS = 100
MAX_POSITION_BYTES = 4096
POSITION_TOO_LONG = frozenset({414, 431})
_FILTER_NAMES = ("buckets", "types", "exclude_performers", "actor_types")


class ActorType(StrEnum):
    agent = "agent"
    person = "person"


@dataclass(frozen=True, slots=True)
class FeedFilters:
    """What intake asks the feed for. ``exclude_performers`` holds ids as text or ``self``."""
    buckets: tuple[int, ...] = ()
    types: tuple[str, ...] = ()
    exclude_performers: tuple[str, ...] = ()
    actor_types: tuple[str, ...] = ()

    @classmethod
    def of(cls, *, buckets: Iterable[int] = (), types: Iterable[str] = (),
           exclude_performers: Iterable[str | int] = (), actor_types: Iterable[str] = ()) -> FeedFilters:
        """Filters in canonical form; ValueError for a value the feed refuses."""
        bucket_ids = tuple(sorted({int(bucket) for bucket in buckets}))
        if len(bucket_ids) > MAX_BUCKETS:
            raise ValueError(f"at most {MAX_BUCKETS} buckets, not {len(bucket_ids)}")
        if any(bucket <= 0 for bucket in bucket_ids):
            raise ValueError("a bucket id is a positive integer")
        actors = tuple(sorted({str(actor) for actor in actor_types}))
        for actor in actors:
            ActorType(actor)  # ValueError for an unknown actor type
        performers = tuple(sorted({str(performer) for performer in exclude_performers}))
        for performer in performers:
            if performer != "self" and not performer.isdigit():
                raise ValueError(f"a performer is an id or 'self', not {performer!r}")
        kinds = tuple(sorted({str(kind) for kind in types}))
        if any(not kind or "," in kind for kind in kinds):
            raise ValueError("an event type is a non-empty name without commas")
        return cls(bucket_ids, kinds, performers, actors)

    def query(self) -> tuple[tuple[str, str], ...]:
        """The filters as query parameters (comma-separated lists; empty ones left out)."""
        pairs = ((name, ",".join(str(item) for item in getattr(self, name))) for name in _FILTER_NAMES)
        return tuple((name, value) for name, value in pairs if value)

    def digest(self) -> str:
        """The checkpoint identity: the SHA-256 of the canonical JSON."""
        canonical = json.dumps({name: list(getattr(self, name)) for name in _FILTER_NAMES},
                               sort_keys=True, separators=(",", ":"))  # fmt: skip
        return hashlib.sha256(canonical.encode()).hexdigest()


@dataclass(frozen=True, slots=True)
class FeedEvent:
    id: int
    kind: str
    action: str
    event_type: str
    bucket_id: int
    creator_id: int
    performed_by_id: int | None
    recording_id: int
    created_at: str
    details: Mapping[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class FeedPage:
    events: tuple[FeedEvent, ...]
    position: str = field(repr=False)
    next_url: str | None = field(default=None, repr=False)

    @property
    def last_id(self) -> int | None:
        return self.events[-1].id if self.events else None


@dataclass(frozen=True, slots=True)
class PageRejected:
    """Why a page cannot be recorded (no token or URL in ``reason``)."""
    reason: str


def _integer(event: Mapping[str, object], name: str) -> int:
    value = event.get(name)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"an event's {name} is an integer")
    return value


def read_event(value: object) -> FeedEvent:
    if not isinstance(value, dict):
        raise ValueError("an event is a JSON object")
    details = value.get("details")
    if details is not None and not isinstance(details, dict):
        raise ValueError("an event's details are a JSON object")
    text = {name: value.get(name) for name in ("kind", "action", "event_type", "created_at")}
    for name, found in text.items():
        if not isinstance(found, str):
            raise ValueError(f"an event's {name} is a string")
    kind, action, event_type, created_at = map(str, text.values())
    performed_by = None if value.get("performed_by_id") is None else _integer(value, "performed_by_id")
    return FeedEvent(
        _integer(value, "id"), kind, action, event_type, _integer(value, "bucket_id"),
        _integer(value, "creator_id"), performed_by, _integer(value, "recording_id"), created_at, details,
    )


Item = TypeVar("Item")


def _cursor_page(
    body: object, name: str, what: str, read: Callable[[object], Item], *, ids: str,
    key: Callable[[Item], int],
) -> Result[tuple[tuple[Item, ...], str, str | None], PageRejected]:
    """A cursor page, the feed's and the inbox's alike: every item read, their ``ids`` increasing."""
    if not isinstance(body, dict):
        return Failure(PageRejected(f"{what} is not a JSON object"))
    listed, position, next_url = body.get(name), body.get("position"), body.get("next")
    if not isinstance(listed, list):
        return Failure(PageRejected(f"{what} has no list of {name}"))
    if not isinstance(position, str) or not position:
        return Failure(PageRejected(f"{what} has no position"))
    if len(position.encode()) > MAX_POSITION_BYTES:
        return Failure(PageRejected(f"{what}'s position is over {MAX_POSITION_BYTES} bytes"))
    if next_url is not None and (not isinstance(next_url, str) or not next_url):
        return Failure(PageRejected(f"{what}'s next is not a URL"))
    try:
        items = tuple(read(item) for item in listed)
    except ValueError as error:
        return Failure(PageRejected(str(error)))
    if any(key(later) <= key(earlier) for earlier, later in itertools.pairwise(items)):
        return Failure(PageRejected(f"{what}'s {ids} are not strictly increasing"))
    return Success((items, position, next_url))


def read_page(body: object) -> Result[FeedPage, PageRejected]:
    read = _cursor_page(body, "events", "the page", read_event, ids="event ids", key=attrgetter("id"))
    if isinstance(read, Success) and any(event.id <= 0 for event in read.unwrap()[0]):
        return Failure(PageRejected("an event id is a positive integer"))
    return read.map(lambda page: FeedPage(*page))


@dataclass(frozen=True, slots=True)
class InvalidPosition:
    """400 ``invalid_position``, 414 or 431: drop the position, resume with ``since``."""


@dataclass(frozen=True, slots=True)
class InvalidFilter:
    """400 for a filter: the filters must be fixed; retrying will not help."""
    message: str


@dataclass(frozen=True, slots=True)
class FiltersChanged:
    """409: the position was minted for another filter set."""


@dataclass(frozen=True, slots=True)
class EpochPassed:
    """410: the position predates the feed's epoch; resume after ``epoch_after_id``."""
    epoch_after_id: int


@dataclass(frozen=True, slots=True)
class UnexpectedFeedAnswer:
    """Any other answer: back off and try again later."""
    status: int


FeedRefusal = InvalidPosition | InvalidFilter | FiltersChanged | EpochPassed | UnexpectedFeedAnswer
FEED_REFUSALS = frozenset({400, 409, 410, *POSITION_TOO_LONG})


def read_refusal(status: int, body: object) -> FeedRefusal:
    fields = body if isinstance(body, dict) else {}
    match status:
        case 400 if fields.get("reason") == "invalid_position":
            return InvalidPosition()
        case 414 | 431:
            return InvalidPosition()
        case 400:
            return InvalidFilter(str(fields.get("error", "invalid filter"))[:200])
        case 409:
            return FiltersChanged()
        case 410:
            after = fields.get("epoch_after_id")
            if isinstance(after, int) and not isinstance(after, bool) and after >= 0:
                return EpochPassed(after)
            return UnexpectedFeedAnswer(status)
        case _:
            return UnexpectedFeedAnswer(status)


def new_ids(page_ids: Iterable[int], known: Iterable[int]) -> tuple[int, ...]:
    """The ids of a page not in ``known``, in page order, each once."""
    seen = set(known)
    return tuple(event_id for event_id in dict.fromkeys(page_ids) if event_id not in seen)


# -- the inbox ---------------------------------------------------------------------------------
REASON_TRIGGERS: Mapping[str, Trigger | None] = MappingProxyType({
    "mentioned": Trigger.mentioned, "pinged": Trigger.mentioned, "assigned": Trigger.assigned,
    "subscribed": Trigger.subscribed, "watched": Trigger.completed, "boosted": None,
})
"""Each addressing reason Basecamp documents -> the trigger it asks for. Intake asks for those that
map onto one; the admission matrix still decides what it records (an item it discards is seen)."""

ASKED_REASONS: tuple[str, ...] = tuple(sorted(r for r, trigger in REASON_TRIGGERS.items() if trigger))


@dataclass(frozen=True, slots=True)
class InboxItem:
    addressing_id: int
    reason: str
    addressed_at: str
    event: FeedEvent


@dataclass(frozen=True, slots=True)
class InboxPage:
    items: tuple[InboxItem, ...]
    position: str = field(repr=False)
    next_url: str | None = field(default=None, repr=False)

    @property
    def last_item_id(self) -> int | None:
        return self.items[-1].addressing_id if self.items else None


def _item(value: object) -> InboxItem:
    if not isinstance(value, dict):
        raise ValueError("an inbox item is a JSON object")
    addressing_id, reason, addressed_at = map(value.get, ("addressing_id", "reason", "addressed_at"))
    if isinstance(addressing_id, bool) or not isinstance(addressing_id, int) or addressing_id <= 0:
        raise ValueError("an item's addressing_id is a positive integer")
    if not isinstance(reason, str) or not isinstance(addressed_at, str):
        raise ValueError("an item's reason and addressed_at are strings")
    return InboxItem(addressing_id, reason, addressed_at, read_event(value.get("event")))


def read_inbox_page(body: object) -> Result[InboxPage, PageRejected]:
    key = attrgetter("addressing_id")
    read = _cursor_page(body, "items", "the inbox page", _item, ids="addressing ids", key=key)
    return read.map(lambda page: InboxPage(*page))


def addressed_events(items: Iterable[InboxItem], floor: int) -> tuple[FeedEvent, ...]:
    """The items' events, each once (an event addressed for several reasons is one row), in item
    order, leaving out those at or below ``floor`` (history from before the lane entered)."""
    found: dict[int, FeedEvent] = {}
    for item in items:
        if item.event.id > floor and item.event.id > 0:
            found.setdefault(item.event.id, item.event)
    return tuple(found.values())


@dataclass(frozen=True, slots=True)
class NotForPrincipal:
    """403: the inbox is for agents only; this principal has none."""


@dataclass(frozen=True, slots=True)
class InboxGone:
    """410: the position fell behind the 30-day retention; start again at ``since=0``."""


@dataclass(frozen=True, slots=True)
class PositionRefused:
    """400 ``invalid_position``, 409, 414 or 431: drop the position, resume after the last item read."""


@dataclass(frozen=True, slots=True)
class InboxFiltersRefused:
    """Any other 400: the request's filters are wrong; retrying will not help."""


@dataclass(frozen=True, slots=True)
class UnexpectedInboxAnswer:
    status: int


InboxRefusal = NotForPrincipal | InboxGone | PositionRefused | InboxFiltersRefused | UnexpectedInboxAnswer
INBOX_REFUSALS = frozenset({400, 403, 409, 410, *POSITION_TOO_LONG})


def read_inbox_refusal(status: int, body: object) -> InboxRefusal:
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
        case 414 | 431:
            return PositionRefused()
        case 400:
            return InboxFiltersRefused()
        case _:
            return UnexpectedInboxAnswer(status)


# -- the live lane -----------------------------------------------------------------------------
CHANNEL = "EventsChannel"
SUBPROTOCOL = "actioncable-v1-json"


@dataclass(frozen=True, slots=True)
class StreamTicket:
    ticket: str = field(repr=False)
    expires_in: int
    url: str = field(repr=False)


def read_ticket(body: object, configured: str) -> StreamTicket:
    """The ticket in a 200/201 body; ValueError (naming no value) when it, or its URL, is not one."""
    if not isinstance(body, dict):
        raise ValueError("a stream ticket answer is a JSON object")
    ticket, expires_in, url = body.get("ticket"), body.get("expires_in"), body.get("url")
    if not isinstance(ticket, str) or not ticket:
        raise ValueError("a stream ticket answer has no ticket")
    if isinstance(expires_in, bool) or not isinstance(expires_in, int) or expires_in <= 0:
        raise ValueError("a stream ticket's expires_in is a positive number of seconds")
    if not isinstance(url, str) or not ticket_url_allowed(url, configured):
        raise ValueError("a stream ticket's url is not wss:// (ws:// to loopback) to the configured host")
    return StreamTicket(ticket, expires_in, url)


def redacted(url: str) -> str:
    """``url`` without its query or fragment: what a log line may show."""
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, parts.path, "", ""))


def identifier(filters: FeedFilters) -> str:
    """``EventsChannel`` with the poll lane's filters as params, in ``events.json``'s names and form."""
    return json.dumps({"channel": CHANNEL, **dict(filters.query())}, sort_keys=True, separators=(",", ":"))


def subscribe_command(filters: FeedFilters) -> str:
    return json.dumps({"command": "subscribe", "identifier": identifier(filters)})


class Signal(StrEnum):
    """A frame that is only its type."""

    welcome = "welcome"
    ping = "ping"
    confirmed = "confirm_subscription"
    rejected = "reject_subscription"


@dataclass(frozen=True, slots=True)
class Disconnect:
    reason: str
    reconnect: bool


@dataclass(frozen=True, slots=True)
class Delivered:
    events: tuple[FeedEvent, ...]


@dataclass(frozen=True, slots=True)
class Overflow:
    """The server dropped this subscriber's events after ``after_id``."""
    after_id: int


@dataclass(frozen=True, slots=True)
class Unreadable:
    why: str


Frame = Signal | Disconnect | Delivered | Overflow | Unreadable
_SIGNALS: dict[str, Frame] = {signal.value: signal for signal in Signal}


def read_frame(text: str | bytes) -> Frame:
    """A channel message's events are read as ``events.json``'s; anything else is ``Unreadable``."""
    decoded = decode_json(text)
    if isinstance(decoded, JsonRefused):
        return Unreadable(decoded.reason)
    value = decoded.value
    if not isinstance(value, dict):
        return Unreadable("not a JSON object")
    kind = value.get("type")
    if isinstance(kind, str):
        if kind == "disconnect":
            return Disconnect(str(value.get("reason", ""))[:80], value.get("reconnect") is True)
        return _SIGNALS.get(kind, Unreadable(f"an unknown frame type {kind[:40]!r}"))
    return _message(value.get("message"))


def _message(message: object) -> Frame:
    if not isinstance(message, dict):
        return Unreadable("a frame with neither a type nor a message")
    overflow = message.get("overflow")
    if isinstance(overflow, dict):
        after = overflow.get("after_id")
        if isinstance(after, int) and not isinstance(after, bool) and after >= 0:
            return Overflow(after)
        return Unreadable("an overflow without after_id")
    page = read_page({"events": message.get("events"), "position": "live"})
    if isinstance(page, Failure):
        return Unreadable(page.failure().reason)
    return Delivered(page.unwrap().events)


HEALTHY_AFTER = 3.0  # Action Cable's ping interval


def proven_healthy(confirmed_for: float | None, events_heard: int, *, after: float = HEALTHY_AFTER) -> bool:
    """Whether a connection has shown it is healthy, so its failures before are forgotten: its
    subscription confirmed ``confirmed_for`` seconds ago (None: not confirmed), and since then an
    event heard or ``after`` seconds gone by. A confirmation alone proves nothing."""
    return confirmed_for is not None and (events_heard > 0 or confirmed_for >= after)


def reconnect_delay(failures: int, draw: float, *, base: float = 0.5, cap: float = 30.0) -> float:
    """Exponential to ``cap`` with equal jitter, so connectors that lost one server come back apart."""
    ceiling = min(cap, base * 2.0 ** min(max(failures, 0), 30))
    return ceiling / 2 + ceiling / 2 * min(max(draw, 0.0), 1.0)
