"""Keeping under Basecamp's rate limit, as a function of what was already sent.

Rules:
1. Basecamp's first limit is about 50 requests per 10 s per IP; the client keeps to ``limit``
   (a margin under 50, for a request's travel time and a worker's requests from the same
   address) in any window of ``window`` seconds.
2. After a 429, no request goes before its Retry-After has passed, whatever the window says.
3. Times are monotonic seconds, handed in; nothing here reads a clock.
4. Every request of the connector shares one budget (feed polls, reads, listings, posts). A
   feed poll yields it to everything else: it waits while half the window is spent, but never
   more than ``POLL_YIELD_BOUND`` seconds (``poll_may_go``), so a drain runs at the limit, fast
   polling never crowds out the rest, and new mentions are still read at least that often.
5. Once half the window is spent, turns are spaced at least ``window / limit`` apart
   (``spacing_wait``): a backlog drains evenly instead of in bursts that come back a window
   later, so an urgent message waits at most about one spacing for its turn.
"""

from __future__ import annotations

from collections.abc import Sequence

DEFAULT_LIMIT = 47
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


def spacing_wait(
    sent_at: Sequence[float], now: float, limit: int = DEFAULT_LIMIT, window: float = DEFAULT_WINDOW_SECONDS
) -> float:
    """Rule 5: seconds to wait so that, with half the window spent, turns are evenly spaced."""
    recent = [moment for moment in sent_at if moment > now - window]
    if not recent or len(recent) * 2 < limit:
        return 0.0
    return max(0.0, recent[-1] + window / limit - now)


# -- a feed poll yields to a backlog (rule 4) ------------------------------------------------

POLL_YIELD_BOUND = 20.0
POLL_HEADROOM_SHARE = 0.5


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
    half of ``limit`` sent in the last ``window``), or once it has yielded ``bound`` seconds.
    While a backlog drains at the limit the window stays full, so polls space out to about one
    per ``bound``, and never further."""
    if waited >= bound:
        return True
    recent = sum(1 for moment in sent_at if moment > now - window)
    return recent < limit - max(1, int(limit * POLL_HEADROOM_SHARE))
