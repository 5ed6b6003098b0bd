"""The account feed's live lane, as values: a stream ticket, Action Cable's JSON frames, backoff.

Rules:
1. A stream ticket is a credential: ``StreamTicket`` never prints its ticket or URL, and
   ``redacted`` shows a URL without its query. The connector connects to ``url`` verbatim, with
   a fresh ticket each time, only when ``wss`` to the configured host (``ws`` for plain http to
   loopback), unambiguous by ``core.links`` rule 4.
2. ``read_frame`` reads Action Cable's JSON frames (a channel message's events by ``core.feed``,
   as ``events.json``'s); anything else is ``Unreadable``: the connection is not trusted further.
3. The subscription is to ``EventsChannel`` with the poll lane's filters as channel params, in
   ``events.json``'s names and form (``subscribe_command``).
4. ``reconnect_delay`` is exponential from ``base`` (at most ``cap``) with equal jitter, so many
   connectors that lost one server do not return in step.
5. The lane's state, as status shows it, is ``core.intake_status``'s."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from urllib.parse import urlsplit, urlunsplit

from returns.result import Failure

from core.feed import FeedEvent, FeedFilters, read_page
from core.json_input import JsonRefused, decode_json
from core.links import ticket_url_allowed

CHANNEL = "EventsChannel"
SUBPROTOCOL = "actioncable-v1-json"


@dataclass(frozen=True, slots=True)
class StreamTicket:
    """A minted ticket (rule 1). ``ticket`` and ``url`` never print."""

    ticket: str = field(repr=False)
    expires_in: int
    url: str = field(repr=False)


def read_ticket(body: object, configured: str) -> StreamTicket:
    """The ticket in a 200/201 body; ValueError (naming no value) when it is not one, or when its
    URL is not ``wss`` to the ``configured`` origin's host (``core.links`` rule 6)."""
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
    """``url`` without its query or fragment: what a log line may show (rule 1)."""
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, parts.path, "", ""))


def identifier(filters: FeedFilters) -> str:
    """The subscription's identifier: the channel and the filters as params (rule 3)."""
    return json.dumps({"channel": CHANNEL, **dict(filters.query())}, sort_keys=True, separators=(",", ":"))


def subscribe_command(filters: FeedFilters) -> str:
    return json.dumps({"command": "subscribe", "identifier": identifier(filters)})


# Frames (rule 2).


@dataclass(frozen=True, slots=True)
class Welcome:
    pass


@dataclass(frozen=True, slots=True)
class Ping:
    pass


@dataclass(frozen=True, slots=True)
class Confirmed:
    pass


@dataclass(frozen=True, slots=True)
class Rejected:
    pass


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


Frame = Welcome | Ping | Confirmed | Rejected | Disconnect | Delivered | Overflow | Unreadable

_TYPES: dict[str, Frame] = {
    "welcome": Welcome(),
    "ping": Ping(),
    "confirm_subscription": Confirmed(),
    "reject_subscription": Rejected(),
}


def read_frame(text: str | bytes) -> Frame:
    """What one frame from the server says (rule 2)."""
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
        return _TYPES.get(kind, Unreadable(f"an unknown frame type {kind[:40]!r}"))
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


def reconnect_delay(failures: int, draw: float, *, base: float = 0.5, cap: float = 30.0) -> float:
    """Seconds to wait before attempt ``failures + 1`` (rule 4); ``draw`` is in [0, 1)."""
    ceiling = min(cap, base * 2.0 ** min(max(failures, 0), 30))
    return ceiling / 2 + ceiling / 2 * min(max(draw, 0.0), 1.0)
