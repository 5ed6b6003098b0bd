"""What one create request can come to: the closed set the outbox relies on.

Rules:
1. A create is one request. Its outcome is exactly one of: ``Created`` (Basecamp created the
   message and named its id), ``Refused`` (nothing was created: Basecamp answered 4xx, or no
   connection could be opened, so the request never left), or ``Uncertain`` (the message
   may exist: a timeout, a connection lost after the request was written, a 5xx, a 2xx
   without an id). A request the client declined to make (a rate-limit wait that would pass
   the deadline) is ``Refused`` too: it never left.
2. When in doubt, ``Uncertain``. Calling a created message refused would let a person resend
   it and double it; calling a refused one uncertain only costs a listing.
3. A 429 is a refusal that also says when to ask again (``retry_after_seconds``).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any


class RefusalCause(StrEnum):
    """Why nothing was created."""

    answered = "answered"  # Basecamp answered with a 4xx
    not_connected = "not_connected"  # no connection could be opened; the request never left
    not_sent = "not_sent"  # the client would not send before the deadline (a rate-limit wait)


class UncertainCause(StrEnum):
    """Why the message may or may not exist."""

    timeout = "timeout"
    connection_lost = "connection_lost"
    server_error = "server_error"
    no_id = "no_id"


@dataclass(frozen=True, slots=True)
class Created:
    """Basecamp created the message; ``id`` is its id."""

    id: int


@dataclass(frozen=True, slots=True)
class Refused:
    """Nothing was created. ``status`` is Basecamp's answer, or None if it never answered."""

    cause: RefusalCause
    status: int | None
    detail: str
    retry_after_seconds: float | None = None


@dataclass(frozen=True, slots=True)
class Uncertain:
    """The message may exist: only a listing of the destination can tell."""

    cause: UncertainCause
    status: int | None
    detail: str


PostOutcome = Created | Refused | Uncertain


def classify_answer(status: int, body: Any, retry_after_seconds: float | None = None) -> PostOutcome:
    """Classify a create that got an HTTP answer with ``status`` and decoded JSON ``body``.

    2xx with a positive integer id is a receipt; 2xx without one is uncertain (it may have
    been created); 4xx is refused (Basecamp validates before it creates); 5xx is uncertain;
    anything else (1xx, 3xx: redirects are never followed) is uncertain.
    """
    if 200 <= status < 300:
        created = body.get("id") if isinstance(body, dict) else None
        if isinstance(created, int) and not isinstance(created, bool) and created > 0:
            return Created(created)
        return Uncertain(UncertainCause.no_id, status, f"HTTP {status} without a message id")
    if 400 <= status < 500:
        return Refused(
            RefusalCause.answered,
            status,
            f"Basecamp refused the request: HTTP {status}",
            retry_after_seconds if status == 429 else None,
        )
    if status >= 500:
        return Uncertain(UncertainCause.server_error, status, f"Basecamp answered HTTP {status}")
    return Uncertain(UncertainCause.no_id, status, f"unexpected HTTP {status}")
