"""What befalls a request before Basecamp answers it: the record, the rate limit, scripted faults.

The record keeps every request as it is read, before any fault acts (a dropped POST still counts), and the
status once written; it never keeps a secret (the ``Authorization`` and ``X-Standin-Secret`` headers, and
each secret or code a query or form carries, read ``REDACTED``). Basecamp's rate limit is enforced per
client address: at most ``requests`` in any sliding ``window`` (50 per 10 s), on a monotonic clock, not the
stand-in's. A request over it is a 429 whose ``Retry-After`` is whole seconds until the oldest admitted one
leaves the window (at least 1); it creates nothing, takes no fault, and does not count.

A fault matches by method and path substring; faults are taken in the order added, atomically, the first
match winning, and ``times=None`` never wears out. What each action does is said beside it; its waits are
real seconds a stop cuts short. Every number is finite and bounded: a duration up to a day, a count up to a
million, an ``oversize`` body up to 64 MiB.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import math
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from http import HTTPStatus
from typing import Any, Generic, TypeVar
from urllib.parse import parse_qsl, urlencode

from shell.basecamp.standin.api import Incoming, Reply, error_reply, next_link, page_number

MAX_SECONDS = 86_400.0
MAX_COUNT = 1_000_000
MAX_OVERSIZE_MIB = 64
DEFAULT_OVERSIZE_MIB = 9
LONG_POSITION_BYTES = 1 << 20
TRICKLE_SECONDS = 2.0
FOREIGN_ORIGIN = "http://evil.example"
BASECAMP_REQUESTS = 50
BASECAMP_WINDOW_SECONDS = 10.0
REDACTED = "REDACTED"
SECRET_HEADERS = frozenset({"authorization", "x-standin-secret"})
SECRET_FIELDS = frozenset({"client_secret", "code", "refresh_token", "device_code", "access_token",
                           "code_verifier", "password"})


def seconds(value: object, what: str, *, positive: bool = False) -> float:
    """``value`` as seconds (NaN and Infinity refused, never slept on), or ValueError naming ``what``."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"{what} is a number of seconds, not {value!r}")
    if not math.isfinite(value) or value < 0 or value > MAX_SECONDS or (positive and value == 0):
        low = "more than 0" if positive else "0"
        raise ValueError(f"{what} is a finite number of seconds from {low} to {MAX_SECONDS:g}, not {value!r}")
    return float(value)


def whole(value: object, what: str, *, low: int = 0, high: int = MAX_COUNT) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{what} is a whole number, not {value!r}")
    if not low <= value <= high:
        raise ValueError(f"{what} is from {low} to {high}, not {value}")
    return value


def check_use(action: object, actions: type[StrEnum], times: int | None, delay: float, what: str) -> None:
    """A fault's ``action``, ``times`` (None: for ever) and ``delay``, as every fault takes them."""
    if not isinstance(action, actions):
        raise TypeError(f"{what}'s action is a {actions.__name__}, not {action!r}")
    if times is not None and times < 1:
        raise ValueError(f"a fault happens at least once, not {times} times")
    if delay < 0:
        raise ValueError(f"a delay is not negative: {delay}")
    if times is not None:
        whole(times, f"{what}'s times", low=1)
    seconds(delay, f"{what}'s delay")


def known_fields(value: object, fields: dict[str, Any], what: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise TypeError(f"a {what} is a JSON object")
    if unknown := set(value) - set(fields):
        raise ValueError(f"unknown {what} fields: {', '.join(sorted(unknown))}")
    return dict(value)


class FaultAction(StrEnum):
    refuse = "refuse"  # answers ``status`` (default 403)
    rate_limit = "rate_limit"  # 429 with ``Retry-After`` (default "1"; "" sends none)
    server_error = "server_error"  # answers ``status`` (default 500)
    create_then_drop = "create_then_drop"  # handles it (a POST creates), closes without an answer
    create_then_delay = "create_then_delay"  # handles it, answers after ``delay`` seconds
    drop_without_create = "drop_without_create"  # closes without an answer
    hang = "hang"  # waits ``delay`` seconds, then handles it
    lag = "lag"  # a POST's creation shows in listings ``delay`` (stand-in) seconds later; by id at once
    bad_link = "bad_link"  # answers with a ``Link`` to another origin
    no_id = "no_id"  # answers without the created thing's ``"id"``
    loop_link = "loop_link"  # a ``Link`` (and JSON ``next``) naming the URL asked: a walk loops
    oversize = "oversize"  # ``status`` (200) and ``size_mib`` MiB (9) of padded body; no ``delay``
    long_position = "long_position"  # a JSON answer's ``position`` made 1 MiB long
    trickle = "trickle"  # handles it; the headers at once, then a byte of body every ``delay`` (2) s


@dataclass(frozen=True, slots=True)
class Fault:
    action: FaultAction
    method: str | None = None
    path_contains: str | None = None
    status: int | None = None
    retry_after: str | None = None
    delay: float = 0.0
    times: int | None = 1
    size_mib: float | None = None

    def __post_init__(self) -> None:
        check_use(self.action, FaultAction, self.times, self.delay, "a fault")
        if self.action is FaultAction.oversize and self.delay:
            raise ValueError("an oversize fault has no delay: its body's size is its size_mib")
        if self.size_mib is not None:
            if self.action is not FaultAction.oversize:
                raise ValueError(f"only an oversize fault has a size_mib, not a {self.action} fault")
            value, what = self.size_mib, "an oversize fault's size_mib"
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise ValueError(f"{what} is a number of MiB, not {value!r}")
            if not math.isfinite(value) or not 0 < value <= MAX_OVERSIZE_MIB:
                raise ValueError(f"{what} is more than 0 MiB and at most {MAX_OVERSIZE_MIB}, not {value!r}")
        if self.status is not None and not 100 <= self.status <= 599:
            raise ValueError(f"not an HTTP status: {self.status}")

    def matches(self, method: str, path: str) -> bool:
        same_method = self.method is None or self.method.upper() == method.upper()
        return same_method and (self.path_contains is None or self.path_contains in path)


def fault_from_json(value: object) -> Fault:
    fields = known_fields(value, Fault.__dataclass_fields__, "fault")
    fields["action"] = FaultAction(str(fields.get("action")))
    for name, kind in (("method", str), ("path_contains", str), ("retry_after", str), ("status", int),
                       ("times", int)):  # fmt: skip
        if fields.get(name) is not None and not isinstance(fields[name], kind):
            raise TypeError(f"a fault's {name} is a {kind.__name__}")
    return Fault(**fields)


F = TypeVar("F", "Fault", "LiveFault")


class Book(Generic[F]):
    """Faults still to happen, in the order added."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._entries: list[list[Any]] = []  # [fault, uses left or None]

    def add(self, fault: F) -> None:
        with self._lock:
            self._entries.append([fault, fault.times])

    def clear(self) -> int:
        """How many there were."""
        with self._lock:
            removed, self._entries = len(self._entries), []
            return removed

    def pending(self) -> list[F]:
        with self._lock:
            return [entry[0] for entry in self._entries]

    def take_first(self, fits: Callable[[F], bool]) -> tuple[F, bool] | None:
        """The first fault that fits, used once, and whether that was its last use."""
        with self._lock:
            for index, (fault, remaining) in enumerate(self._entries):
                if not fits(fault):
                    continue
                if remaining is None:
                    return fault, False
                if remaining <= 1:
                    del self._entries[index]
                    return fault, True
                self._entries[index][1] = remaining - 1
                return fault, False
        return None


class FaultBook(Book[Fault]):
    def take(self, method: str, path: str) -> Fault | None:
        taken = self.take_first(lambda fault: fault.matches(method, path))
        return taken[0] if taken else None


def act(fault: Fault, request: Incoming, answer: Callable[[float], Reply],
        wait: Callable[[float], bool]) -> Reply | None:
    """The reply ``fault`` makes of ``request``; None: close without answering. ``answer(lag)``
    handles the request (``lag``: seconds before what it creates is listed); ``wait(seconds)``
    sleeps, False when a stop cut it short."""
    match fault.action:
        case FaultAction.refuse:
            return _error(fault.status or 403)
        case FaultAction.server_error:
            return _error(fault.status or 500)
        case FaultAction.rate_limit:
            return rate_limited_reply("1" if fault.retry_after is None else fault.retry_after)
        case FaultAction.drop_without_create:
            return None
        case FaultAction.create_then_drop:
            answer(0.0)
            return None
        case FaultAction.create_then_delay:
            reply = answer(0.0)
            return reply if wait(fault.delay) else None
        case FaultAction.hang:
            return answer(0.0) if wait(fault.delay) else None
        case FaultAction.lag:
            return answer(fault.delay)
        case FaultAction.bad_link:
            link = next_link(FOREIGN_ORIGIN, request.path, request.query, page_number(request.query))
            return _with_link(answer(0.0), link)
        case FaultAction.no_id:
            reply = answer(0.0)
            shown = _json_object(reply)
            if shown is None or "id" not in shown:
                return reply
            del shown["id"]
            return Reply(reply.status, reply.headers, json.dumps(shown, ensure_ascii=False).encode())
        case FaultAction.loop_link:
            return _looping(request, answer(0.0))
        case FaultAction.trickle:
            return dataclasses.replace(answer(0.0), trickle=fault.delay or TRICKLE_SECONDS)
        case FaultAction.oversize:
            reply = answer(0.0)
            padding = b" " * int((fault.size_mib or DEFAULT_OVERSIZE_MIB) * 1024 * 1024)
            return Reply(fault.status or reply.status, reply.headers, padding + reply.body)
        case FaultAction.long_position:
            reply = answer(0.0)
            shown = _json_object(reply)
            if shown is None or "position" not in shown:
                return reply
            shown["position"] = "p" * LONG_POSITION_BYTES
            return Reply(reply.status, reply.headers, json.dumps(shown, ensure_ascii=False).encode())


def _error(status: int) -> Reply:
    return error_reply(status, next((known.phrase for known in HTTPStatus if known == status), "Error"))


def _json_object(reply: Reply) -> dict[str, Any] | None:
    with contextlib.suppress(ValueError):
        shown = json.loads(reply.body)
        return shown if isinstance(shown, dict) else None
    return None


def _with_link(reply: Reply, link: str, body: bytes | None = None) -> Reply:
    headers = tuple((name, value) for name, value in reply.headers if name.lower() != "link")
    return Reply(reply.status, (*headers, ("Link", link)), reply.body if body is None else body)


def _looping(request: Incoming, reply: Reply) -> Reply:
    """``reply`` naming the URL asked as its next page, in the ``Link`` and in a body's ``next``."""
    asked = f"http://{request.headers.get('host', '')}{request.path}"
    if request.query:
        asked += "?" + urlencode(request.query)
    shown = _json_object(reply)
    body = None if shown is None else json.dumps({**shown, "next": asked}, ensure_ascii=False).encode()
    return _with_link(reply, f'<{asked}>; rel="next"', body)


class LiveAction(StrEnum):
    """A live fault: at the upgrade (``refuse``, ``expire_ticket``), as a subscription is confirmed
    (``garble``) or instead of sending an event to a subscriber (the others), each only at its own moment."""

    refuse = "refuse"  # the upgrade answered ``status`` (503) after ``delay`` seconds, no WebSocket
    expire_ticket = "expire_ticket"  # the ticket counts as expired: 401, no WebSocket
    drop = "drop"  # the TCP connection cut (no close frame) instead of the event
    stall = "stall"  # nothing sent, not even a ping, for ``delay``; then the event and what followed
    skip = "skip"  # not sent; after the ``times``-th an overflow frame names the id dropped after
    garble = "garble"  # a frame no client can read, sent right after the confirmation


@dataclass(frozen=True, slots=True)
class LiveFault:
    """``times`` counts uses across connections (None: for ever)."""

    action: LiveAction
    status: int | None = None
    delay: float = 0.0
    times: int | None = 1

    def __post_init__(self) -> None:
        check_use(self.action, LiveAction, self.times, self.delay, "a live fault")
        if self.status is not None and not 400 <= self.status <= 599:
            raise ValueError(f"an upgrade is refused with a 4xx or 5xx, not {self.status}")

    @property
    def at_upgrade(self) -> bool:
        return self.action in (LiveAction.refuse, LiveAction.expire_ticket)

    @property
    def at_event(self) -> bool:
        return self.action in (LiveAction.drop, LiveAction.stall, LiveAction.skip)


def live_fault_from_json(value: object) -> LiveFault:
    fields = known_fields(value, LiveFault.__dataclass_fields__, "live fault")
    status, delay, times = fields.get("status"), fields.get("delay", 0.0), fields.get("times", 1)
    if status is not None and (isinstance(status, bool) or not isinstance(status, int)):
        raise TypeError("a live fault's status is an integer")
    if isinstance(delay, bool) or not isinstance(delay, int | float):
        raise TypeError("a live fault's delay is a number of seconds")
    if times is not None and (isinstance(times, bool) or not isinstance(times, int)):
        raise TypeError("a live fault's times is an integer, or null for ever")
    return LiveFault(LiveAction(str(fields.get("action"))), status, float(delay), times)


@dataclass(frozen=True, slots=True)
class RateLimit:
    """``requests`` per ``window`` seconds per client address; ``requests == 0`` is off."""

    requests: int = BASECAMP_REQUESTS
    window: float = BASECAMP_WINDOW_SECONDS

    def __post_init__(self) -> None:
        whole(self.requests, "a rate limit's requests")
        seconds(self.window, "a rate limit's window", positive=True)

    @classmethod
    def off(cls) -> RateLimit:
        return cls(0, BASECAMP_WINDOW_SECONDS)

    @classmethod
    def parse(cls, text: str) -> RateLimit:
        """``off``, or ``N/S`` (N requests per S seconds), or ``N`` (per 10 s)."""
        words = text.strip().lower()
        if words == "off":
            return cls.off()
        count, _, window = words.partition("/")
        try:
            limit = cls(int(count), float(window) if window else BASECAMP_WINDOW_SECONDS)
        except ValueError as error:
            raise ValueError(f"a rate limit is 'off' or N/SECONDS (like 50/10), not {text!r}") from error
        if limit.requests == 0:
            raise ValueError("a rate limit of 0 requests is written 'off'")
        return limit

    def describe(self) -> str:
        return "off" if self.requests == 0 else f"{self.requests}/{self.window:g}"


def rate_limited_reply(retry_after: str) -> Reply:
    """Basecamp's 429: ``Retry-After`` (none when empty), and the SDK schema's body, with
    ``retry_after`` when it is whole seconds."""
    headers = (("Retry-After", retry_after),) if retry_after else ()
    extra = {"retry_after": int(retry_after)} if retry_after.isdigit() else {}
    return error_reply(429, "Rate limit exceeded", headers, **extra)


class Limiter:
    def __init__(self, limit: RateLimit, monotonic: Callable[[], float] = time.monotonic) -> None:
        self.limit = limit
        self._monotonic = monotonic
        self._admitted: dict[str, deque[float]] = {}
        self._lock = threading.Lock()

    def set_limit(self, limit: RateLimit) -> None:
        """From now on; what was admitted still counts."""
        with self._lock:
            self.limit = limit

    def admit(self, address: str) -> Reply | None:
        """None when the request may be answered, else the 429 to answer instead."""
        with self._lock:
            limit = self.limit
            if limit.requests == 0:
                return None
            now = self._monotonic()
            admitted = self._admitted.setdefault(address, deque())
            while admitted and admitted[0] <= now - limit.window:
                admitted.popleft()
            while len(admitted) > limit.requests:  # a lowered limit: only the newest matter
                admitted.popleft()
            if len(admitted) < limit.requests:
                admitted.append(now)
                return None
            wait = admitted[0] + limit.window - now
        return rate_limited_reply(str(max(1, math.ceil(wait))))


@dataclass(frozen=True, slots=True)
class RecordedRequest:
    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    body: bytes
    status: int | None  # None: dropped, or the answer could not be written
    fault: FaultAction | None
    at: datetime

    def to_json(self) -> dict[str, object]:
        shown = {name: getattr(self, name) for name in self.__dataclass_fields__}
        return {**shown, "body": self.body.decode("utf-8", errors="replace"), "at": self.at.isoformat()}


def _redacted_body(body: bytes) -> bytes:
    """A form body with its secrets' values replaced; any other body as it is."""
    try:
        pairs = parse_qsl(body.decode("utf-8"), keep_blank_values=True)
    except ValueError:  # UnicodeDecodeError too
        return body
    if not any(name in SECRET_FIELDS for name, _ in pairs):
        return body
    return urlencode([(name, REDACTED if name in SECRET_FIELDS else value) for name, value in pairs]).encode()


class RequestLog:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._requests: list[RecordedRequest] = []

    def record(self, request: Incoming, at: datetime) -> int:
        """The number ``note`` names it by."""
        headers = {name: REDACTED if name in SECRET_HEADERS else value
                   for name, value in request.headers.items()}
        query = {name: REDACTED if name in SECRET_FIELDS else value for name, value in request.query.items()}
        recorded = RecordedRequest(request.method, request.path, query, headers,
                                   _redacted_body(request.body), None, None, at)
        with self._lock:
            self._requests.append(recorded)
            return len(self._requests) - 1

    def note(self, number: int, **changes: Any) -> None:
        with self._lock:
            self._requests[number] = dataclasses.replace(self._requests[number], **changes)

    def requests(self) -> list[RecordedRequest]:
        with self._lock:
            return list(self._requests)
