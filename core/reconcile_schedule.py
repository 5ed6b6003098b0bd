"""When a sending intent is reconciled, how far back its listing reaches, and how failures back off.

Rule 1: a sending intent is reconciled by listing its destination, never by posting again.

Rule 2: a request that failed on the wire may still land, so an intent is due only once its
``sending_at`` is ``RECONCILE_AFTER`` old and its ``reconcile_at`` is not in the future; an
uncertain post counts that wait from the failure.

Rule 3: the listing reaches back to the sending (else creation) time less ``RECONCILE_SLACK``,
for clock skew.

Rule 4: a failed listing settles nothing: it counts a failure and backs off, doubling from
``BACKOFF_START`` up to ``BACKOFF_MAX``.

Rule 5: reconciliation gives up (indeterminate) when the destination cannot be listed at all, or
at ``MAX_RECONCILE_FAILURES``, recording the count that gave up."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from core import notes

RECONCILE_AFTER = timedelta(minutes=1)
"""Long enough for a request that failed on the wire to have landed, if it was going to."""

RECONCILE_SLACK = timedelta(minutes=2)
"""How far a listing reaches back past the sending time, for clock skew."""

BACKOFF_START = timedelta(seconds=30)
BACKOFF_MAX = timedelta(minutes=30)
MAX_RECONCILE_FAILURES = 10

LISTING_TIMEOUT = timedelta(seconds=30)
"""The bound on one listing; a listing cut short is a failed listing, which backs off."""


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


ListingFailure = Backoff | GiveUp


def listing_since(sending_at: datetime | None, created_at: datetime,
                  slack: timedelta = RECONCILE_SLACK) -> datetime:
    """The earliest creation time a listing for this intent must reach back to."""
    return (sending_at if sending_at is not None else created_at) - slack


def due_for_reconciliation(sending_at: datetime, reconcile_at: datetime | None, now: datetime,
                           wait: timedelta = RECONCILE_AFTER) -> bool:
    """Whether a sending intent may be listed now: old enough to have landed, and not backed off."""
    if now - sending_at < wait:
        return False
    return reconcile_at is None or reconcile_at <= now


def reconcile_at_after_uncertain_post(failed_at: datetime) -> datetime:
    """When an intent whose request may not have landed is first listed."""
    return failed_at + RECONCILE_AFTER


def backoff_delay(failures: int) -> timedelta:
    """The wait after ``failures`` failed listings (at least one): 30 s doubling, capped at 30 min."""
    if failures < 1:
        raise ValueError(f"a backoff follows at least one failed listing, not {failures}")
    doublings = min(failures - 1, 32)
    return min(BACKOFF_START * (1 << doublings), BACKOFF_MAX)


def after_failed_listing(failures_before: int, unlistable: bool, now: datetime) -> ListingFailure:
    """What a failed listing does to an intent that had ``failures_before`` failed listings."""
    failures = failures_before + 1
    if unlistable:
        return GiveUp(notes.UNLISTABLE, failures)
    if failures >= MAX_RECONCILE_FAILURES:
        return GiveUp(notes.listing_failed(failures), failures)
    return Backoff(now + backoff_delay(failures), failures)
