"""Which due intent the outbox sends next: what a person is waiting on first, nobody forever.

Rules:
1. Urgency by kind: the tiers are ``core.message_kinds.KINDS``'s (what a person waits on
   first); within a tier of ``URGENCY``, the oldest due first (``not_before``, then ``id``).
2. Bounded wait: an intent due for ``STARVING_AFTER`` (2 min) or longer goes before any that is
   not, whatever its kind; among those, the oldest due first. So under any stream of urgent
   intents, every due intent goes within that bound plus the ones due before it.
3. Only the order changes: which intents are due, the claim and its one request are the
   sender's (``shell.outbox``), untouched.
4. A pure function of the candidates and ``now``; it reads no clock and no ledger.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta

from core.intents import IntentKind
from core.message_kinds import urgency_tiers

STARVING_AFTER = timedelta(minutes=2)

URGENCY: tuple[frozenset[IntentKind], ...] = urgency_tiers()
"""Rule 1's tiers, most urgent first: kinds of one tier go oldest first among themselves (a
worker's note written before its reply is posted before it)."""


def rank(kind: IntentKind) -> int:
    """The tier of ``kind`` in ``URGENCY``: 0 is the most urgent."""
    return next(tier for tier, kinds in enumerate(URGENCY) if kind in kinds)


@dataclass(frozen=True, slots=True)
class Due:
    """A pending intent whose time has come, as the choice needs it."""

    id: int
    kind: IntentKind
    not_before: datetime


def send_order(
    due: Due, now: datetime, starving_after: timedelta = STARVING_AFTER
) -> tuple[int, int, datetime, int]:
    """The sort key of a due intent: starving ones first by age (rule 2), then by urgency and
    age (rule 1)."""
    if now - due.not_before >= starving_after:
        return (0, 0, due.not_before, due.id)
    return (1, rank(due.kind), due.not_before, due.id)


def next_to_send(
    candidates: Iterable[Due], now: datetime, starving_after: timedelta = STARVING_AFTER
) -> Due | None:
    """The intent to send first among ``candidates`` (each due by ``now``); None when none is."""
    return min(candidates, key=lambda due: send_order(due, now, starving_after), default=None)
