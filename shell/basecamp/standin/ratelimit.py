"""Basecamp's first rate limit, enforced: a sliding window of requests per client address.

Rules:
1. At most ``requests`` in any ``window`` seconds from one client address (by default
   Basecamp's 50 per 10 s); ``RateLimit.off()`` admits everything; both bounded
   (``shell.basecamp.standin.bounds``).
2. A request over the limit is answered 429 with ``Retry-After`` (whole seconds until the oldest
   admitted request leaves the window, at least 1); it creates nothing and takes no fault.
3. A refused request does not count: a client that waits its Retry-After is admitted then.
4. The window runs on a monotonic clock of real seconds (injectable), not the stand-in's
   ``clock``, so a test may freeze the stamps without freezing the limit.
5. The control API (``/__standin/``) is never limited. Deciding is atomic."""

from __future__ import annotations

import math
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

from shell.basecamp.standin.bounds import seconds, whole
from shell.basecamp.standin.exchange import Reply, error_reply

BASECAMP_REQUESTS = 50
BASECAMP_WINDOW_SECONDS = 10.0


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
        count, _, seconds = words.partition("/")
        try:
            limit = cls(int(count), float(seconds) if seconds else BASECAMP_WINDOW_SECONDS)
        except ValueError as error:
            raise ValueError(f"a rate limit is 'off' or N/SECONDS (like 50/10), not {text!r}") from error
        if limit.requests == 0:
            raise ValueError("a rate limit of 0 requests is written 'off'")
        return limit

    @property
    def enforced(self) -> bool:
        return self.requests > 0

    def describe(self) -> str:
        return "off" if self.requests == 0 else f"{self.requests}/{self.window:g}"


def rate_limited_reply(retry_after: str) -> Reply:
    """Basecamp's 429: ``Retry-After`` (none when ``retry_after`` is empty), and the SDK schema's
    body, ``retry_after`` included when it is a whole number of seconds."""
    headers = (("Retry-After", retry_after),) if retry_after else ()
    extra = {"retry_after": int(retry_after)} if retry_after.isdigit() else {}
    return error_reply(429, "Rate limit exceeded", headers, **extra)


class Limiter:
    """The windows of every client address (rules 1, 3 and 5)."""

    def __init__(self, limit: RateLimit, monotonic: Callable[[], float] = time.monotonic) -> None:
        self._limit = limit
        self._monotonic = monotonic
        self._admitted: dict[str, deque[float]] = {}
        self._lock = threading.Lock()

    @property
    def limit(self) -> RateLimit:
        return self._limit

    def set_limit(self, limit: RateLimit) -> None:
        """A new limit, from now on; what was admitted still counts."""
        with self._lock:
            self._limit = limit

    def admit(self, address: str) -> Reply | None:
        """None when the request may be answered; else the 429 to answer instead (rule 2)."""
        with self._lock:
            limit = self._limit
            if not limit.enforced:
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
