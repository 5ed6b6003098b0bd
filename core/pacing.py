"""Keeping under Basecamp's rate limit, as a function of what was already sent.

Rules:
1. Basecamp's first limit is about 50 requests per 10 s per IP; the client keeps to
   ``limit`` requests (default 45, a margin under 50) in any window of ``window`` seconds.
2. After a 429, no request goes before its Retry-After has passed, whatever the window says.
3. Times are monotonic seconds, handed in; nothing here reads a clock.
4. Every request of the connector shares one budget (feed polls, reads, listings, posts). A
   feed poll yields it to a backlog: it waits while the window is nearly full, but never more
   than ``POLL_YIELD_BOUND`` seconds (``poll_may_go``), so a drain runs at the limit and new
   mentions are still read at least that often.
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


# -- a feed poll yields to a backlog (rule 4) ------------------------------------------------

POLL_YIELD_BOUND = 20.0
POLL_HEADROOM_SHARE = 0.2


def poll_may_go(
    sent_at: Sequence[float],
    now: float,
    waited: float,
    *,
    bound: float = POLL_YIELD_BOUND,
    limit: int = DEFAULT_LIMIT,
    window: float = DEFAULT_WINDOW_SECONDS,
) -> bool:
    """Whether a feed poll may ask for its turn now: when the window has headroom (fewer than
    ``limit`` less a fifth of it sent in the last ``window``), or once it has yielded ``bound``
    seconds. While a backlog drains at the limit the window stays full, so polls space out to
    about one per ``bound``, and never further."""
    if waited >= bound:
        return True
    recent = sum(1 for moment in sent_at if moment > now - window)
    return recent < limit - max(1, int(limit * POLL_HEADROOM_SHARE))
