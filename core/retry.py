"""When a read is asked again: Basecamp's SDK policy, as values.

Rules (basecamp/API.md section 7):
1. Only reads are retried, and only after a 429 or a 503. Every other answer is final. (Below
   this policy, the shell's client asks a read once more on a fresh connection when a kept-alive
   one turns out closed before any answer: that is no answer at all, and not counted here.)
2. At most 3 attempts in all.
3. A valid ``Retry-After`` replaces the backoff: a positive whole number of seconds, or an
   HTTP-date in the future (rounded up to the next second). ``0``, a negative number, a
   past date or anything unreadable (``120junk``) is ignored.
4. Otherwise the wait is exponential from 1 s (1, 2, 4, ...), capped at 30 s, plus the jitter
   the caller draws (the SDK adds up to 100 ms).
5. A wait that would end past the caller's deadline is not waited: the read fails instead.
   (The shell checks that; this module only says how long.)
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from datetime import datetime
from email.utils import parsedate_to_datetime

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
    """Ask again after ``seconds``."""

    seconds: float


@dataclass(frozen=True, slots=True)
class Final:
    """The answer stands: no further attempt."""


ReadDecision = RetryAfter | Final


def after_read(
    status: int, attempts_made: int, retry_after: str | None, now: datetime, jitter: float = 0.0
) -> ReadDecision:
    """Whether a read that was answered ``status`` on attempt ``attempts_made`` goes again."""
    if status not in RETRIED_STATUSES or attempts_made >= MAX_READ_ATTEMPTS:
        return Final()
    told = parse_retry_after(retry_after, now)
    if told is not None:
        return RetryAfter(told)
    return RetryAfter(backoff_seconds(attempts_made - 1, jitter))
