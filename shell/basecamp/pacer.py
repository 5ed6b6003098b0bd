"""The client's one budget: every request to Basecamp takes its turn here (``core.pacing``).

Rules:
1. One ``Pacer`` a client, shared by every thread that uses the client: feed polls, reads,
   listings and posts draw on the same window, so together they stay under the limit.
2. A turn is claimed atomically: two threads never both take the last place in a window.
3. After a 429 (``hold_for``) no turn is given before its Retry-After has passed. With half the
   window spent, turns are evenly spaced (``core.pacing.spacing_wait``).
4. A yielding turn (a feed poll) first waits while half the window is spent, at most
   ``POLL_YIELD_BOUND`` seconds and never past half of what is left to its deadline
   (``core.pacing.poll_may_go``), then takes its turn like any other.
5. Waits are on the client's clock (``sleep``), so a ``FakeClock`` test waits for nothing.
"""

from __future__ import annotations

import threading
from collections import deque

from core.pacing import POLL_YIELD_BOUND, poll_may_go, spacing_wait, wait_before_next
from shell.clock import Clock

POLL_RECHECK_SECONDS = 0.25


class Pacer:
    """Thread-safe bookkeeping for ``core.pacing``."""

    def __init__(self, clock: Clock, limit: int, window: float) -> None:
        self._clock = clock
        self._limit = limit
        self._window = window
        self._sent: deque[float] = deque()
        self._held_until = 0.0
        self._lock = threading.Lock()

    def _recent(self, now: float) -> list[float]:
        while self._sent and self._sent[0] <= now - self._window:
            self._sent.popleft()
        return list(self._sent)

    def _wait(self, now: float) -> float:
        """Seconds before the next turn; the caller holds the lock."""
        recent = self._recent(now)
        return max(
            wait_before_next(recent, now, self._held_until, self._limit, self._window),
            spacing_wait(recent, now, self._limit, self._window),
        )

    def wait_seconds(self) -> float:
        with self._lock:
            return self._wait(self._clock.monotonic())

    def take_turn(self, deadline: float | None, *, yielding: bool = False) -> bool:
        """Wait for a turn and claim it; False if the turn would come after ``deadline``."""
        if yielding:
            self._yield(deadline)
        while True:
            with self._lock:
                now = self._clock.monotonic()
                wait = self._wait(now)
                if wait <= 0:
                    self._sent.append(now)
                    return True
            if deadline is not None and now + wait > deadline:
                return False
            self._clock.sleep(wait)

    def _yield(self, deadline: float | None) -> None:
        """Rule 4: let a backlog use the window first, within the bound."""
        started = self._clock.monotonic()
        bound = POLL_YIELD_BOUND if deadline is None else min(POLL_YIELD_BOUND, (deadline - started) / 2)
        while True:
            with self._lock:
                now = self._clock.monotonic()
                if poll_may_go(
                    self._recent(now), now, now - started, bound=bound, limit=self._limit, window=self._window
                ):
                    return
            self._clock.sleep(POLL_RECHECK_SECONDS)

    def held_for(self) -> float:
        """Seconds a 429's (or 503's) Retry-After still holds every request; 0 when none does."""
        with self._lock:
            return max(0.0, self._held_until - self._clock.monotonic())

    def hold_for(self, seconds: float) -> None:
        with self._lock:
            self._held_until = max(self._held_until, self._clock.monotonic() + seconds)
