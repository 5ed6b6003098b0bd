"""How the sender paces itself: batch sizes, and how a deadline bounds a claim and its request.

Rule 1: a running outbox sends at most ``RUN_BATCH`` intents, then lists at most
``RUN_RECONCILE_BATCH`` due destinations, every ``OUTBOX_TICK`` (rule 4): a queue arriving as
fast as it can be posted cannot starve reconciliation, and a due guard waits at most one listing.

Rule 2: one request is bounded by ``POST_TIMEOUT``, and never outlives the deadline its caller
carries (``request_timeout``).

Rule 3: with a deadline and less than ``min(MIN_POST_WINDOW, POST_TIMEOUT)`` left, nothing is
claimed (``may_claim``): a claim then would only leave the intent sending for a person. It stays
pending and goes out on the next run.

Rule 4: a running outbox waits its tick only after a batch that did not fill: a full batch means
a backlog, and the next batch goes at once (``wait_after_batch``), so a backlog drains at the rate
limit, not at the limit less a second every batch.
"""

from __future__ import annotations

from datetime import datetime, timedelta

OUTBOX_TICK = timedelta(seconds=1)
POST_TIMEOUT = timedelta(minutes=1)
MIN_POST_WINDOW = timedelta(seconds=5)
RUN_BATCH = 16
RUN_RECONCILE_BATCH = 1


def request_timeout(
    now: datetime, deadline: datetime | None, post_timeout: timedelta = POST_TIMEOUT
) -> timedelta:
    """The bound on one request made at ``now``: ``post_timeout``, cut to the deadline if sooner."""
    if deadline is None:
        return post_timeout
    return max(min(post_timeout, deadline - now), timedelta(0))


def may_claim(now: datetime, deadline: datetime | None, post_timeout: timedelta = POST_TIMEOUT) -> bool:
    """Whether there is time left before ``deadline`` to claim an intent and make its request."""
    if deadline is None:
        return True
    return deadline - now >= min(MIN_POST_WINDOW, post_timeout)


def wait_after_batch(claims: int, batch: int, tick: timedelta = OUTBOX_TICK) -> timedelta:
    """Rule 4: how long a running outbox waits after a batch that made ``claims`` claims."""
    return timedelta(0) if claims >= batch else tick
