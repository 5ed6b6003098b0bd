"""What one create request can come to, and what the outbox does next: try again, wait for a
listing, or leave the message for a person.

A create is one request, and its outcome is exactly one of ``Created`` (Basecamp named the new
message's id), ``Refused`` (nothing was created: Basecamp answered 4xx, or the request never
left) or ``Uncertain`` (the message may exist: a timeout, a connection lost after the request
was written, a 5xx, a 2xx without an id). When in doubt, ``Uncertain``: calling a created
message refused would let a person resend it and double it, while calling a refused one
uncertain only costs a listing.

A refusal that proves Basecamp never judged the message -- no connection, never written, a 429
or a 408 -- is tried again, waiting as long as it has been retrying so far (within
``FIRST_RETRY_WAIT`` and ``LONGEST_RETRY_WAIT``, never before a Retry-After), and given up for a
person after ``RETRY_BOUND`` of that. A 401 refuses the agent's token, not the message: the
connector's own outage, tried again at once and never given up. What the bound measures is the
run of tries, less the time the intent sat due and unclaimed (a token outage or a lost connection
the outbox waited out, a hold, a stopped connector): an outage never counts against the message.
Any other 4xx is Basecamp's refusal of the message: canceled for a person to resend.

Doubt is settled by listing the destination, never by posting again: an intent is listed once
its request is ``RECONCILE_AFTER`` old (long enough to have landed), reaching back to its
sending time less ``RECONCILE_SLACK``; each destination is listed once for every intent in doubt
there; a failed listing backs off, doubling from ``BACKOFF_START`` to ``BACKOFF_MAX``, and after
``MAX_RECONCILE_FAILURES`` failures, or a destination that cannot be listed at all, the intent is
left indeterminate for a person.

A running outbox claims at most ``RUN_BATCH`` intents and lists at most ``RUN_RECONCILE_BATCH``
destinations a tick, waiting its tick only after a batch that did not fill (a backlog drains at
the rate limit). A request is bounded by ``POST_TIMEOUT`` and never outlives its caller's
deadline; with less than ``MIN_POST_WINDOW`` left, nothing is claimed.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any, Protocol, TypeVar

from core import notes
from core.destinations import Destination

RETRY_BOUND = timedelta(hours=24)
FIRST_RETRY_WAIT = timedelta(seconds=30)
LONGEST_RETRY_WAIT = timedelta(minutes=30)

RECONCILE_AFTER = timedelta(minutes=1)
RECONCILE_SLACK = timedelta(minutes=2)
BACKOFF_START = timedelta(seconds=30)
BACKOFF_MAX = timedelta(minutes=30)
MAX_RECONCILE_FAILURES = 10
LISTING_TIMEOUT = timedelta(seconds=30)
"""The bound on one listing; a listing cut short is a failed listing, which backs off."""

OUTBOX_TICK = timedelta(seconds=1)
POST_TIMEOUT = timedelta(minutes=1)
MIN_POST_WINDOW = timedelta(seconds=5)
RUN_BATCH = 16
RUN_RECONCILE_BATCH = 1


class RefusalCause(StrEnum):
    answered = "answered"  # Basecamp answered with a 4xx
    not_connected = "not_connected"  # no connection could be opened; the request never left
    not_sent = "not_sent"  # the client would not send before the deadline (a rate-limit wait)


class UncertainCause(StrEnum):
    timeout = "timeout"
    connection_lost = "connection_lost"
    server_error = "server_error"
    no_id = "no_id"


@dataclass(frozen=True, slots=True)
class Created:
    id: int


@dataclass(frozen=True, slots=True)
class Refused:
    """Nothing was created. ``status`` is Basecamp's answer, or None if it never answered; a 429
    also says when to ask again."""

    cause: RefusalCause
    status: int | None
    detail: str
    retry_after_seconds: float | None = None


@dataclass(frozen=True, slots=True)
class Uncertain:

    cause: UncertainCause
    status: int | None
    detail: str


PostOutcome = Created | Refused | Uncertain


def classify_answer(status: int, body: Any, retry_after_seconds: float | None = None) -> PostOutcome:
    """A create that got an HTTP answer with ``status`` and decoded JSON ``body``: 2xx with a
    positive integer id is a receipt; 4xx is refused (Basecamp validates before it creates);
    anything else is uncertain (redirects are never followed)."""
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


# -- a refusal: try again, or give up -----------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Retry:
    """Back to pending with ``note`` (the cause), due at ``due_at``; ``since`` starts or keeps the run."""

    note: str
    due_at: datetime
    since: datetime


@dataclass(frozen=True, slots=True)
class StopRetrying:
    """Canceled with ``note``: tried for the bound and never reached Basecamp; a person may resend."""

    note: str


@dataclass(frozen=True, slots=True)
class Refuse:

    note: str = notes.REFUSED_NOTE


AfterRefusal = Retry | StopRetrying | Refuse


@dataclass(frozen=True, slots=True)
class TokenOutage:
    """A 401 as the ledger shows it: ``messages`` intents wait, pending, with
    ``notes.TOKEN_REFUSED``, the first refused at ``since`` (the ledger's text)."""

    messages: int
    since: str


def not_created_cause(outcome: Refused) -> str | None:
    """The note proving ``outcome`` never reached Basecamp, or None for Basecamp's own refusal."""
    match outcome.cause:
        case RefusalCause.not_connected:
            return notes.NOT_CONNECTED
        case RefusalCause.not_sent:
            return notes.NOT_WRITTEN
        case RefusalCause.answered if outcome.status == 429:
            return notes.RATE_LIMITED
        case RefusalCause.answered if outcome.status == 408:
            return notes.REQUEST_TIMEOUT
        case RefusalCause.answered if outcome.status == 401:
            return notes.TOKEN_REFUSED
        case RefusalCause.answered:
            return None


def after_refusal(outcome: Refused, now: datetime, retrying_since: datetime | None,
                  waited_due: timedelta = timedelta(0)) -> AfterRefusal:
    """What a sending intent whose one request came to ``outcome`` becomes; ``retrying_since`` is
    when its run of tries began (None: this is the first), moved on by ``waited_due``, how long
    the intent sat due before this try was claimed."""
    cause = not_created_cause(outcome)
    if cause is None:
        return Refuse()
    since = now if retrying_since is None else min(retrying_since + max(waited_due, timedelta(0)), now)
    if cause == notes.TOKEN_REFUSED:
        return Retry(cause, now, since)
    tried_for = now - since
    if tried_for >= RETRY_BOUND:
        return StopRetrying(notes.given_up(cause))
    wait = min(max(tried_for, FIRST_RETRY_WAIT), LONGEST_RETRY_WAIT)
    if outcome.retry_after_seconds is not None and outcome.retry_after_seconds > 0:
        wait = max(wait, timedelta(seconds=min(outcome.retry_after_seconds, RETRY_BOUND.total_seconds())))
    return Retry(cause, now + wait, since)


# -- doubt: reconcile by listing ----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Backoff:
    """Try the listing again at ``reconcile_at``; ``failures`` is the count to record."""

    reconcile_at: datetime
    failures: int


@dataclass(frozen=True, slots=True)
class GiveUp:
    """``sending -> indeterminate`` with ``note``, recording ``failures`` in the same update."""

    note: str
    failures: int


def listing_since(sending_at: datetime | None, created_at: datetime) -> datetime:
    return (sending_at if sending_at is not None else created_at) - RECONCILE_SLACK


def backoff_delay(failures: int) -> timedelta:
    if failures < 1:
        raise ValueError(f"a backoff follows at least one failed listing, not {failures}")
    return min(BACKOFF_START * (1 << min(failures - 1, 32)), BACKOFF_MAX)


def after_failed_listing(failures_before: int, unlistable: bool, now: datetime) -> Backoff | GiveUp:
    failures = failures_before + 1
    if unlistable:
        return GiveUp(notes.UNLISTABLE, failures)
    if failures >= MAX_RECONCILE_FAILURES:
        return GiveUp(notes.listing_failed(failures), failures)
    return Backoff(now + backoff_delay(failures), failures)


class AtDestination(Protocol):
    @property
    def destination(self) -> Destination: ...


Row = TypeVar("Row", bound=AtDestination)


def by_destination(due: Iterable[Row]) -> list[list[Row]]:
    """``due`` grouped by destination, each group in the order its first row came: one listing
    answers every intent of a group (a restart over 10,000 stale intents at 1,000 destinations
    makes about 1,000 listings)."""
    groups: dict[Destination, list[Row]] = {}
    for row in due:
        groups.setdefault(row.destination, []).append(row)
    return list(groups.values())


# -- how a deadline bounds a claim and its request ----------------------------------------------


def request_timeout(
    now: datetime, deadline: datetime | None, post_timeout: timedelta = POST_TIMEOUT
) -> timedelta:
    if deadline is None:
        return post_timeout
    return max(min(post_timeout, deadline - now), timedelta(0))


def may_claim(now: datetime, deadline: datetime | None, post_timeout: timedelta = POST_TIMEOUT) -> bool:
    """Whether there is time before ``deadline`` to claim an intent and make its request: a claim
    then would only leave the intent sending for a person."""
    return deadline is None or deadline - now >= min(MIN_POST_WINDOW, post_timeout)


def wait_after_batch(claims: int, batch: int, tick: timedelta = OUTBOX_TICK) -> timedelta:
    return timedelta(0) if claims >= batch else tick
