"""The check ``a-401-is-never-given-up``: a token outage (``SimBasecamp.refuse_token``) never turns
a message into a person's work (``core.posting``'s not-created bound).

Rules:
1. The world (``outage``, a step): a stretch drawn by the seed from ``LENGTHS``, some longer than
   the bound; the first create once the token works again meets a blip half the time (a 429 or a
   refused connection, as when a day's backlog is flushed). A stretch over a day passes at once
   after the outbox has run into it (what is due meets the 401), ending within an hour; one still
   running at quiescence runs its course (``heal``).
2. Ground truth (``request_ended``): each intent's run of not-created answers, from its first.
3. At a give-up (``given_up``: sending -> canceled after a day of tries): the answer given up is
   not a 401, and the run, less the time it spent in token outages, is the bound -- less one
   longest backoff for each outage it overlaps (a wait begun before an outage runs on in it).
4. At the end (``blocked_for_good``): no record a 401 blocked is left with no next try, however
   long the outage was (``core.admission``: ``read_unauthorized`` is retried without end).
"""

from __future__ import annotations

import weakref
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from core.posting import LONGEST_RETRY_WAIT, RETRY_BOUND, PostOutcome, Refused, not_created_cause
from tests.sim.whole.basecamp import Post

if TYPE_CHECKING:
    from tests.sim.whole.run import Run

CHECK = "a-401-is-never-given-up"
LENGTHS = (60.0, 600.0, 3600.0, 6 * 3600.0, 25 * 3600.0, 30 * 3600.0)
AFTER = (None, Post.rate_limited, Post.not_connected, None)
ENDS_WITHIN = (60.0, 600.0, 3600.0)

_RUNS: weakref.WeakKeyDictionary[Run, dict[int, tuple[datetime, datetime, Refused]]] = weakref.WeakKeyDictionary()
_TOLERANCE = timedelta(milliseconds=1)


def outage(run: Run) -> None:
    """Rule 1."""
    basecamp = run.basecamp
    seconds, after = run.rng.choice(LENGTHS), run.rng.choice(AFTER)
    basecamp.refuse_token(seconds, after)
    run.note(f"token outage for {seconds:g}s{f', then {after}' if after else ''}")
    run.cover("token outage")
    if seconds > RETRY_BOUND.total_seconds():
        run.connector.outbox.run_once()
        run.clock.advance(basecamp.token_refused_until - run.clock.monotonic() - run.rng.choice(ENDS_WITHIN))
        run.note(f"the outage's day passes: it ends in {basecamp.token_refused_until - run.clock.monotonic():g}s")
        run.cover("token outage: over a day")


def heal(run: Run) -> None:
    """Quiescence: a token outage still running runs its course."""
    remaining = run.basecamp.token_refused_until - run.clock.monotonic()
    if remaining > 0:
        run.clock.advance(remaining)
        run.note(f"the token outage runs its course: +{remaining:g}s")


def request_ended(run: Run, intent_id: int, outcome: PostOutcome | None) -> None:
    """Rule 2."""
    if not isinstance(outcome, Refused) or not_created_cause(outcome) is None:
        return
    now = run.clock.now()
    runs = _RUNS.setdefault(run, {})
    began = runs[intent_id][0] if intent_id in runs else now
    runs[intent_id] = (began, now, outcome)
    if outcome.status == 401:
        run.cover("token outage: a create answered 401")


def given_up(run: Run, key: str, note: str) -> None:
    """Rule 3, when intent ``key`` is canceled with a give-up note."""
    found = _RUNS.get(run, {}).pop(int(key), None)
    if found is None:
        return
    began, at, outcome = found
    if outcome.status == 401:
        run.truth.violations.append((CHECK, f"intent {key} given up on a 401 ({note}): the token's outage"))
        return
    overlaps = [min(end, at) - max(start, began) for start, end in run.basecamp.token_outages
                if start < at and end > began]
    answered = at - began - sum(overlaps, timedelta(0))
    if answered < RETRY_BOUND - LONGEST_RETRY_WAIT * len(overlaps) - _TOLERANCE:
        run.truth.violations.append((CHECK, (
            f"intent {key} given up ({note}) after {_hours(at - began)} of tries,"
            f" {_hours(at - began - answered)} of them in {len(overlaps)} token outage(s):"
            f" {_hours(answered)} while Basecamp answered, under the {_hours(RETRY_BOUND)} bound")))
    if overlaps:
        run.cover("token outage: given up after a day of tries around an outage")


def blocked_for_good(run: Run, untried: list[int]) -> None:
    """Rule 4."""
    for event_id in untried:
        run.truth.violations.append((CHECK, f"event {event_id} blocked by a 401 and never tried again"))


def _hours(span: timedelta) -> str:
    return f"{span.total_seconds() / 3600:.2f} h"
