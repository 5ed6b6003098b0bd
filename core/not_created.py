"""A create that provably never reached Basecamp: try it again later, or give it up for a person.

Rules:
1. A ``Refused`` outcome proves nothing was created, and that Basecamp did not refuse the message
   itself when the connection never opened (``not_connected``), the request was never written
   (``not_sent``), or Basecamp answered 429 or 408. Those are ``Retry``: ``sending -> pending``
   with the cause as the note (``notes.NOT_CREATED_NOTES``). Any other 4xx is ``Refuse``:
   canceled with the refused note, for a person.
2. A retry waits as long as it has been retrying so far, within ``FIRST_RETRY_WAIT`` and
   ``LONGEST_RETRY_WAIT`` (so waits roughly double), and never before a 429's Retry-After.
3. After ``RETRY_BOUND`` of retrying the next such outcome is ``StopRetrying``: canceled with the
   cause (``notes.given_up``), for a person to resend.
4. ``retrying_since`` is when this run of tries began (None: the first); a resend clears it.
5. A 401, the client's one refresh tried, refuses the agent's token, not the message: the
   connector's own outage. It is ``Retry`` with ``notes.TOKEN_REFUSED``, due at once, never given
   up; the shell claims nothing more until a read with a token succeeds (``shell.outbox`` rule 6),
   and ``status`` and ``doctor`` name the outage (``TokenOutage``)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from core import notes
from core.posting import RefusalCause, Refused

RETRY_BOUND = timedelta(hours=24)
FIRST_RETRY_WAIT = timedelta(seconds=30)
LONGEST_RETRY_WAIT = timedelta(minutes=30)


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
    """Basecamp refused the message itself: canceled with the refused note."""

    note: str = notes.REFUSED_NOTE


AfterRefusal = Retry | StopRetrying | Refuse


@dataclass(frozen=True, slots=True)
class TokenOutage:
    """Rule 5, as the ledger shows it: an intent waits, pending, with ``notes.TOKEN_REFUSED``,
    the first refused at ``since`` (the ledger's text); ``messages`` intents are pending meanwhile."""

    messages: int
    since: str


def not_created_cause(outcome: Refused) -> str | None:
    """The note proving ``outcome`` never reached Basecamp (rule 1), or None for Basecamp's own refusal."""
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


def after_refusal(outcome: Refused, now: datetime, retrying_since: datetime | None) -> AfterRefusal:
    """What a sending intent whose one request came to ``outcome`` becomes (rules 1-3, 5)."""
    cause = not_created_cause(outcome)
    if cause is None:
        return Refuse()
    since = now if retrying_since is None else min(retrying_since, now)
    if cause == notes.TOKEN_REFUSED:
        return Retry(cause, now, since)
    tried_for = now - since
    if tried_for >= RETRY_BOUND:
        return StopRetrying(notes.given_up(cause))
    wait = min(max(tried_for, FIRST_RETRY_WAIT), LONGEST_RETRY_WAIT)
    if outcome.retry_after_seconds is not None and outcome.retry_after_seconds > 0:
        wait = max(wait, timedelta(seconds=min(outcome.retry_after_seconds, RETRY_BOUND.total_seconds())))
    return Retry(cause, now + wait, since)
