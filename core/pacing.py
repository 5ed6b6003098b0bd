"""When a request to Basecamp may go, and go again: the rate window, a read's retry, and the
refusals no retry changes. Times are monotonic seconds handed in; nothing here reads a clock.

Every request of the connector shares one budget of ``limit`` requests in any ``window`` seconds
(Basecamp allows about 50 per 10 s per address; the margin is for travel time and a worker's own
requests). After a 429 nothing goes before its Retry-After. Once half the window is spent, turns
are spaced ``window / limit`` apart, so a backlog drains evenly; a feed poll yields to everything
else meanwhile, but never longer than ``POLL_YIELD_BOUND``. The live lane's stream tickets take at
most ``TICKET_SHARE`` of the budget (at least one a window), however often its connections fail.

Only reads are retried, only after a 429 or a 503, at most ``MAX_READ_ATTEMPTS`` in all: after a
valid Retry-After (a positive whole number of seconds, or a future HTTP-date rounded up), else
exponentially from 1 s up to 30 s plus the caller's jitter; never past the caller's deadline. A
4xx is ``lasting`` (a supervisor restarting on it would restart forever) unless a later try can
pass it (401 is refreshed, then a login).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from email.utils import parsedate_to_datetime

DEFAULT_LIMIT = 47
DEFAULT_WINDOW_SECONDS = 10.0
POLL_YIELD_BOUND = 20.0
POLL_HEADROOM_SHARE = 0.5
TICKET_SHARE = 0.05


def wait_before_next(
    sent_at: Sequence[float], now: float, held_until: float, limit: int = DEFAULT_LIMIT,
    window: float = DEFAULT_WINDOW_SECONDS,
) -> float:
    """Seconds to wait before the next request may go; ``sent_at`` is sorted, oldest first."""
    wait = max(0.0, held_until - now)
    recent = [moment for moment in sent_at if moment > now - window]
    if len(recent) >= limit:
        oldest_that_counts = recent[len(recent) - limit]
        wait = max(wait, min(window, _reaching(now, oldest_that_counts + window)))  # never past a window
    return wait


def _reaching(now: float, moment: float) -> float:
    """The least wait from ``now`` that, added to it, is not short of ``moment`` once rounded."""
    wait = moment - now
    while now + wait < moment:
        wait = math.nextafter(wait, math.inf)
    return wait


def spacing_wait(
    sent_at: Sequence[float], now: float, limit: int = DEFAULT_LIMIT, window: float = DEFAULT_WINDOW_SECONDS
) -> float:
    recent = [moment for moment in sent_at if moment > now - window]
    if not recent or len(recent) * 2 < limit:
        return 0.0
    return max(0.0, recent[-1] + window / limit - now)


def poll_may_go(
    sent_at: Sequence[float], now: float, waited: float, *, bound: float = POLL_YIELD_BOUND,
    limit: int = DEFAULT_LIMIT, window: float = DEFAULT_WINDOW_SECONDS,
) -> bool:
    if waited >= bound:
        return True
    recent = sum(1 for moment in sent_at if moment > now - window)
    return recent < limit - max(1, int(limit * POLL_HEADROOM_SHARE))


def ticket_allowance(limit: int = DEFAULT_LIMIT) -> int:
    """Stream tickets allowed in any window: 2 of the default 47."""
    return max(1, int(limit * TICKET_SHARE))


def ticket_wait(minted_at: Sequence[float], now: float, limit: int = DEFAULT_LIMIT,
                window: float = DEFAULT_WINDOW_SECONDS) -> float:
    """Seconds before the next stream ticket may be asked; ``minted_at`` is sorted, oldest first."""
    return wait_before_next(minted_at, now, 0.0, ticket_allowance(limit), window)


# -- a read asked again -----------------------------------------------------------------------
RETRIED_STATUSES = frozenset({429, 503})
MAX_READ_ATTEMPTS = 3
BACKOFF_BASE_SECONDS = 1.0
BACKOFF_CAP_SECONDS = 30.0
_WHOLE_SECONDS = re.compile(r"^\s*\d+\s*$")


def parse_retry_after(value: str | None, now: datetime) -> float | None:
    """Seconds to wait per a ``Retry-After`` header, or None when it says nothing usable."""
    if value is None:
        return None
    if _WHOLE_SECONDS.match(value):
        seconds = int(value)
        return float(seconds) if seconds > 0 else None
    try:
        moment = parsedate_to_datetime(value.strip())
    except (TypeError, ValueError, IndexError):
        return None
    if moment.tzinfo is None:
        return None
    wait = (moment - now).total_seconds()
    return float(math.ceil(wait)) if wait > 0 else None


def backoff_seconds(retry_index: int, jitter: float = 0.0) -> float:
    """The exponential wait before retry number ``retry_index`` (0 for the first retry)."""
    return min(BACKOFF_BASE_SECONDS * 2.0**retry_index, BACKOFF_CAP_SECONDS) + jitter


@dataclass(frozen=True, slots=True)
class RetryAfter:
    seconds: float


@dataclass(frozen=True, slots=True)
class Final:
    """The answer stands: no further attempt."""


ReadDecision = RetryAfter | Final


def after_read(
    status: int, attempts_made: int, retry_after: str | None, now: datetime, jitter: float = 0.0
) -> ReadDecision:
    if status not in RETRIED_STATUSES or attempts_made >= MAX_READ_ATTEMPTS:
        return Final()
    told = parse_retry_after(retry_after, now)
    if told is not None:
        return RetryAfter(told)
    return RetryAfter(backoff_seconds(attempts_made - 1, jitter))


# -- a refusal Basecamp will repeat -----------------------------------------------------------
PASSING_4XX = frozenset({401, 408, 409, 423, 425, 429})
_TOO_LARGE = frozenset({413, 414, 431})


def lasting(status: int) -> bool:
    return 400 <= status < 500 and status not in PASSING_4XX  # a 4xx Basecamp would answer again


def what_to_fix(status: int, *, token_file: str, account_id: int, base_url: str) -> str:
    """One line for a lasting status, naming the file or the setting to change (never the token)."""
    if status in _TOO_LARGE:
        return (f"the request is too large for Basecamp (HTTP {status}): the token file {token_file} holds "
                "far more than a token; put the agent's token alone in it, or run bin/connect login again")
    if status == 400:
        return (f"Basecamp refused the request as malformed (HTTP 400): check that {token_file} holds the "
                f"agent's token alone, and the base URL {base_url} (bin/connect setup --base-url)")
    if status == 403:
        return (f"the token's person may not use account {account_id} (HTTP 403): check the account id "
                "(bin/connect setup --account) and that the agent is a member of that account")
    if status in (404, 410):
        return (f"no account {account_id} at {base_url} (HTTP {status}): check the account id and the "
                "base URL (bin/connect setup --account, --base-url)")
    return (f"Basecamp refused the request with HTTP {status}, which no retry changes: check the base URL "
            f"{base_url}, the account {account_id} and the token file {token_file} (bin/connect setup)")
