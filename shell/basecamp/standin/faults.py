"""Scripted faults: how the stand-in misbehaves on purpose, request by request.

Rules:
1. A fault matches by method (None: any) and by a substring of the request path (None: any).
2. Faults are consumed in the order they were added; the first that matches wins. A fault
   with ``times=None`` matches every request it fits and is never used up.
3. Taking a fault is atomic: two concurrent requests never both use the last ``times``.
4. What each action does is ``act``'s, said beside each ``FaultAction``. Only ``refuse``,
   ``server_error``, ``rate_limit`` and ``drop_without_create`` create nothing.
5. Waits are real seconds. A stop cuts them short, and the request is then dropped.
6. Every number is bounded (``shell.basecamp.standin.bounds``): a delay finite, at most a day;
   ``times`` at most a million; an ``oversize`` body at most 64 MiB.
"""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from http import HTTPStatus
from typing import Any
from urllib.parse import urlencode

from shell.basecamp.standin.bounds import mebibytes, seconds, whole
from shell.basecamp.standin.exchange import Incoming, Reply, error_reply
from shell.basecamp.standin.pagination import next_link, page_number
from shell.basecamp.standin.ratelimit import rate_limited_reply

FOREIGN_ORIGIN = "http://evil.example"
DEFAULT_OVERSIZE_MIB = 9


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


@dataclass(frozen=True, slots=True)
class Fault:
    """One scripted misbehaviour (rule 4)."""

    action: FaultAction
    method: str | None = None
    path_contains: str | None = None
    status: int | None = None
    retry_after: str | None = None
    delay: float = 0.0
    times: int | None = 1
    size_mib: float | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.action, FaultAction):
            raise TypeError(f"a fault's action is a FaultAction, not {self.action!r}")
        if self.times is not None and self.times < 1:
            raise ValueError(f"a fault happens at least once, not {self.times} times")
        if self.delay < 0:
            raise ValueError(f"a delay is not negative: {self.delay}")
        if self.times is not None:
            whole(self.times, "a fault's times", low=1)
        seconds(self.delay, "a fault's delay")
        if self.action is FaultAction.oversize and self.delay:
            raise ValueError("an oversize fault has no delay: its body's size is its size_mib")
        if self.size_mib is not None:
            if self.action is not FaultAction.oversize:
                raise ValueError(f"only an oversize fault has a size_mib, not a {self.action} fault")
            mebibytes(self.size_mib, "an oversize fault's size_mib")
        if self.status is not None and not 100 <= self.status <= 599:
            raise ValueError(f"not an HTTP status: {self.status}")

    def matches(self, method: str, path: str) -> bool:
        return (self.method is None or self.method.upper() == method.upper()) and (
            self.path_contains is None or self.path_contains in path
        )


def fault_from_json(value: object) -> Fault:
    """A fault from its JSON form (the control API); ValueError or TypeError when malformed."""
    if not isinstance(value, dict):
        raise TypeError("a fault is a JSON object")
    fields: dict[str, Any] = dict(value)
    unknown = set(fields) - set(Fault.__dataclass_fields__)
    if unknown:
        raise ValueError(f"unknown fault fields: {', '.join(sorted(unknown))}")
    fields["action"] = FaultAction(str(fields.get("action")))
    for name, kind in (
        ("method", str), ("path_contains", str), ("retry_after", str), ("status", int),
        ("times", int),
    ):  # fmt: skip
        if fields.get(name) is not None and not isinstance(fields[name], kind):
            raise TypeError(f"a fault's {name} is a {kind.__name__}")
    return Fault(**fields)


def fault_to_json(fault: Fault) -> dict[str, Any]:
    return {name: getattr(fault, name) for name in Fault.__dataclass_fields__}


class FaultBook:
    """The faults still to happen, in the order they were added."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._entries: list[tuple[Fault, int | None]] = []

    def add(self, fault: Fault) -> None:
        with self._lock:
            self._entries.append((fault, fault.times))

    def clear(self) -> int:
        """Remove every fault still to happen; how many there were."""
        with self._lock:
            removed = len(self._entries)
            self._entries.clear()
            return removed

    def pending(self) -> list[Fault]:
        with self._lock:
            return [fault for fault, _ in self._entries]

    def take(self, method: str, path: str) -> Fault | None:
        """The first fault matching the request, used up once (rules 2 and 3)."""
        with self._lock:
            for index, (fault, remaining) in enumerate(self._entries):
                if not fault.matches(method, path):
                    continue
                if remaining is not None:
                    if remaining <= 1:
                        del self._entries[index]
                    else:
                        self._entries[index] = (fault, remaining - 1)
                return fault
        return None


Answer = Callable[[float], Reply]
Wait = Callable[[float], bool]


def act(fault: Fault, request: Incoming, answer: Answer, wait: Wait) -> Reply | None:
    """The reply ``fault`` makes of ``request``; None means: close without answering.

    ``answer(lag)`` handles the request normally (``lag``: seconds before what it creates is
    listed); ``wait(seconds)`` sleeps, and says False when it was cut short by a stop, after
    which nothing is answered."""
    match fault.action:
        case FaultAction.refuse:
            return _error(fault.status or 403)
        case FaultAction.server_error:
            return _error(fault.status or 500)
        case FaultAction.rate_limit:
            return _rate_limited(fault.retry_after)
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
            return answer(0.0).with_header("Link", link)
        case FaultAction.no_id:
            return _without_id(answer(0.0))
        case FaultAction.loop_link:
            return _looping(request, answer(0.0))
        case FaultAction.oversize:
            reply = answer(0.0)
            padding = b" " * int((fault.size_mib or DEFAULT_OVERSIZE_MIB) * 1024 * 1024)
            return Reply(fault.status or reply.status, reply.headers, padding + reply.body)


def _error(status: int) -> Reply:
    try:
        phrase = HTTPStatus(status).phrase
    except ValueError:
        phrase = "Error"
    return error_reply(status, phrase)


def _rate_limited(retry_after: str | None) -> Reply:
    value = "1" if retry_after is None else retry_after
    return rate_limited_reply(value)


def _without_id(reply: Reply) -> Reply:
    try:
        shown = json.loads(reply.body)
    except ValueError:
        return reply
    if not isinstance(shown, dict) or "id" not in shown:
        return reply
    del shown["id"]
    return Reply(reply.status, reply.headers, json.dumps(shown, ensure_ascii=False).encode())


def _looping(request: Incoming, reply: Reply) -> Reply:
    """``reply`` with its next page, in the ``Link`` and in a body's ``next``, the URL asked."""
    asked = f"http://{request.headers.get('host', '')}{request.path}"
    if request.query:
        asked += "?" + urlencode(request.query)
    headers = tuple((name, value) for name, value in reply.headers if name.lower() != "link")
    body = reply.body
    with contextlib.suppress(ValueError):
        shown = json.loads(body)
        if isinstance(shown, dict):
            body = json.dumps({**shown, "next": asked}, ensure_ascii=False).encode()
    return Reply(reply.status, (*headers, ("Link", f'<{asked}>; rel="next"')), body)
