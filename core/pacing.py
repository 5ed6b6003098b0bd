"""Keeping under Basecamp's rate limit, as a function of what was already sent.

Rules:
1. Basecamp's first limit is about 50 requests per 10 s per IP; the client keeps to
   ``limit`` requests (default 45, a margin under 50) in any window of ``window`` seconds.
2. After a 429, no request goes before its Retry-After has passed, whatever the window says.
3. Times are monotonic seconds, handed in; nothing here reads a clock.
"""

from __future__ import annotations

from collections.abc import Sequence

DEFAULT_LIMIT = 45
DEFAULT_WINDOW_SECONDS = 10.0


def wait_before_next(
    sent_at: Sequence[float],
    now: float,
    held_until: float,
    limit: int = DEFAULT_LIMIT,
    window: float = DEFAULT_WINDOW_SECONDS,
) -> float:
    """Seconds to wait before the next request may go; ``sent_at`` is sorted, oldest first."""
    wait = max(0.0, held_until - now)
    recent = [moment for moment in sent_at if moment > now - window]
    if len(recent) >= limit:
        oldest_that_counts = recent[len(recent) - limit]
        wait = max(wait, oldest_that_counts + window - now)
    return wait
