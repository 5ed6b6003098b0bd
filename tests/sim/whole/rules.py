"""Checks that judge a rule by its own terms, not by the outcome a run usually shows.

A check of ``tests.sim.whole.checks`` that asks only whether the usual outcome came out passes a
bug whose outcome is the same in most worlds: the newest of two matches adopted is most often
the intent's own message; a backoff computed from the wrong bound agrees with the right one when
the two bounds are equal. These judge the rule itself, from what the audit recorded of a move
and what the simulated Basecamp answered.

Rules:
1. Adoption (``core.adoption``): an intent adopted by reconciliation was adopted from a listing
   that reached back to its sending time less the slack, held exactly one match (its words, by
   the agent, not a worker's, not another intent's receipt), and had no rival (another intent
   there with no receipt, in a rival state, with the same words) -- whoever was picked.
   A reconciliation that found no match or several listed from its sending time less the slack
   too (``core.posting``'s reconcile schedule).
2. No adopted reply (``core.settlement``) is a message the simulated Basecamp records as made
   by one of the connector's own intents: a lifecycle notice, whatever its intent's state.
3. A guard or a holding reply is written only for a request (a mention or an assignment), and a
   guard is due exactly the configured delay after its verdict (``core.message_kinds.GUARD_DELAY``).
4. A retry after a request that provably never reached Basecamp is due no sooner than the first
   backoff and the 429's ``Retry-After``, and no later than the longer of the longest backoff
   and that ``Retry-After`` (``core.posting``'s not-created retry); after a 401, at once.
5. A stop's flush returns by its deadline, however slow Basecamp is (``shell.outbox``'s flush).
6. The connector's own stop (``Connector.stop``) says it settled; it leaves no attempt live of
   those its dispatcher supervised; with time left in its bound (a claim's window) and nothing
   holding the outbox back (the hold, a 429's Retry-After, a read awaited after a failed
   connection), nothing due is left unclaimed; and nothing it requested that Basecamp created
   is left ``sending``.
"""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING, Any

from core import notes
from core.adoption import RIVAL_STATES
from core.configuration import Timings
from core.intent_kinds import WORKER_KINDS
from core.posting import FIRST_RETRY_WAIT, LONGEST_RETRY_WAIT, MIN_POST_WINDOW, RECONCILE_SLACK, Created
from core.text import message_text
from core.timestamps import parse_timestamp
from tests.sim.whole.basecamp import REQUESTS

if TYPE_CHECKING:
    from tests.sim.whole.run import Run

ADOPTION = "outbox-5 adoption only of its own message"
NOTICE_ADOPTED = "no-notice-adopted-as-a-reply"
GUARD_FOR_A_REQUEST = "no-guard-without-a-request"
GUARD_DELAY = "a-guard-waits-its-delay"
RETRY_WAIT = "a-retry-waits-its-backoff-and-retry-after"
LISTING_WINDOW = "reconciliation-lists-back-to-the-sending-time"
SHUTDOWN_BOUND = "a-stop-flushes-within-its-bound"
STOP_SETTLES = "a-stop-settles-its-workers-and-sends-what-is-due"
NAMES = (NOTICE_ADOPTED, GUARD_FOR_A_REQUEST, GUARD_DELAY, RETRY_WAIT, LISTING_WINDOW, SHUTDOWN_BOUND, STOP_SETTLES)

_TOLERANCE = timedelta(milliseconds=1)
_DECIDED_BY_A_LISTING = (notes.matching_messages(0).removeprefix("0"), notes.rival_could_claim(0).removeprefix("intent 0"))


def _found(run: Run, check: str, detail: str) -> None:
    run.truth.violations.append((check, detail))


def written(run: Run, key: str, kind: str, due: str | None, at: str | None) -> None:
    """Rule 3, when an intent is written (its audit row's ``due`` and ``at``)."""
    if kind not in ("guard_ack", "holding_reply"):
        return
    with run.connector.ledger.read() as connection:
        (event_id,) = connection.execute("SELECT event_id FROM outbox WHERE id = ?", (int(key),)).fetchone()
    made = run.basecamp.kind_of(event_id)
    if made not in REQUESTS:
        _found(run, GUARD_FOR_A_REQUEST, f"intent {key} ({kind}) written for event {event_id}, a {made}: it asks nothing")
    if kind == "guard_ack" and due is not None and at is not None:
        waited = parse_timestamp(due) - parse_timestamp(at)
        delay = Timings().guard_delay
        if abs(waited - delay) > _TOLERANCE:
            _found(run, GUARD_DELAY, f"guard intent {key} due {waited.total_seconds():g} s after its verdict, not {delay}")
        run.cover("guard: due its delay after the verdict")


def retried(run: Run, key: str, note: str, due: str | None) -> None:
    """Rule 4, when a sending intent goes back to pending with a not-created cause, or is given
    up after a day of them: judged against the answer it settled (the oldest unsettled one)."""
    answers = run.truth.not_created.get(int(key))
    if not answers:
        return
    answered, outcome = answers.pop(0)
    if due is None or note in notes.GIVEN_UP_NOTES:
        return
    told = timedelta(seconds=outcome.retry_after_seconds or 0.0)
    waited = parse_timestamp(due) - answered
    if outcome.status == 401:  # the token's outage: due again at once, the outbox waiting for a read
        if abs(waited) > _TOLERANCE:
            _found(run, RETRY_WAIT, f"intent {key} ({note}) due {waited.total_seconds():g} s after its 401, not at once")
        return
    soonest, latest = max(FIRST_RETRY_WAIT, told), max(LONGEST_RETRY_WAIT, told)
    if waited < soonest - _TOLERANCE or waited > latest + _TOLERANCE:
        _found(run, RETRY_WAIT, f"intent {key} ({note}) due {waited.total_seconds():g} s after its answer;"
               f" the backoff and Retry-After {told.total_seconds():g} s allow {soonest.total_seconds():g}"
               f"..{latest.total_seconds():g} s")
    if outcome.status == 429:
        run.cover("429: Retry-After " + ("above" if told > FIRST_RETRY_WAIT else
                                         "below" if told < FIRST_RETRY_WAIT else "at") + " the first backoff")


def reply_adopted(run: Run, key: str, reply_id: int) -> None:
    """Rule 2, when a task row's adopted_reply_id is written."""
    maker = next((made_by for made_by, ids in run.basecamp.by_maker.items() if reply_id in ids), "nobody")
    if maker.startswith("intent:"):
        _found(run, NOTICE_ADOPTED, f"task row {key} adopted message {reply_id} as its reply: {maker}'s own")
    run.cover("adopted reply: a worker's" if maker.startswith("worker:") else f"adopted reply: {maker}'s")


def reconciled(run: Run, moves: list[tuple[int, str, int | None, int]], rows: list[tuple[Any, ...]],
               written: dict[int, int]) -> None:
    """Rule 1, for each (intent, new state, receipt, audit row) reconciliation decided in this step;
    ``written``: the audit row of each intent written in the step (one written after the decision
    was no rival of it)."""
    by_id = {row[0]: row for row in rows}
    for identifier, state, receipt, seq in moves:
        row = by_id[identifier]
        kind, body, sending_at = row[5], row[8], row[14]
        destination = (kind, row[7])
        words = message_text(body)
        listed = [listing for listing in run.basecamp.listed
                  if (str(listing.destination.kind), listing.destination.recording_id) == destination]
        reach = None if sending_at is None else parse_timestamp(sending_at) - RECONCILE_SLACK
        if reach is not None and listed and not any(listing.since <= reach + _TOLERANCE for listing in listed):
            _found(run, LISTING_WINDOW, f"intent {identifier} ({state}) was decided from listings since"
                   f" {min(listing.since for listing in listed).isoformat()}, after {reach.isoformat()}")
        if state != "sent":
            continue
        owned = {other[4] for other in rows if other[0] != identifier and other[4] is not None and other[5] == kind}
        workers = {message for made_by, ids in run.basecamp.by_maker.items() if made_by.startswith("worker:")
                   for message in ids}
        counts = [len({message.id for message in listing.messages if message.text == words
                       and message.id not in owned and message.id not in workers})
                  for listing in listed if any(message.id == receipt for message in listing.messages)]
        if counts and min(counts) > 1:
            _found(run, ADOPTION, f"intent {identifier} adopted message {receipt} of {min(counts)} matches listed")
        rival = next((other[0] for other in rows if other[0] != identifier and (other[5], other[7]) == destination
                      and other[4] is None and other[2] in RIVAL_STATES and message_text(other[8]) == words
                      and written.get(other[0], 0) < seq), None)
        if rival is not None:
            _found(run, ADOPTION, f"intent {identifier} adopted message {receipt} while intent {rival} could own it")


def decided_by_a_listing(old: str, new: str, new_note: str, adopted: bool) -> bool:
    """Whether an audited move is reconciliation's decision from a listing it was answered."""
    if old != "sending":
        return False
    return (new == "sent" and adopted) or (new == "indeterminate" and new_note.endswith(_DECIDED_BY_A_LISTING))


def flushed_within(run: Run, deadline: float) -> None:
    """Rule 5, after a stop's flush."""
    late = run.clock.monotonic() - deadline
    if late > 1e-6:
        _found(run, SHUTDOWN_BOUND, f"the stop's flush returned {late:g} s after its deadline")



def stopped(run: Run, settled: bool, supervised: set[str], deadline: float, requested: list[int]) -> None:
    """Rule 6, after ``Connector.stop`` returned: ``supervised``, the attempts its dispatcher ran when
    the stop began; ``requested``, the intents whose requests it made."""
    if not settled:
        _found(run, STOP_SETTLES, "the stop said it did not settle (a worker unsettled, or the outbox could not flush)")
    now = run.clock.now()
    with run.connector.ledger.read() as connection:
        live = sorted(supervised & {attempt for (attempt,) in connection.execute(
            "SELECT id FROM attempts WHERE state <> 'ended'")})
        words = {str(kind) for kind in WORKER_KINDS}
        unlanded = connection.execute(  # a task's words, held back behind the earliest not landed
            "SELECT task_id, kind, id FROM outbox WHERE state IN ('pending', 'sending') AND task_id IS NOT NULL"
        ).fetchall()
        first_word: dict[int, int] = {}
        for task_id, kind, identifier in unlanded:
            if kind in words:
                first_word[task_id] = min(identifier, first_word.get(task_id, identifier))
        due = [(identifier, kind) for identifier, kind, not_before, task_id in connection.execute(
            "SELECT id, kind, not_before, task_id FROM outbox WHERE state = 'pending'")
            if parse_timestamp(not_before) <= now and identifier not in requested
            and not (task_id in first_word and first_word[task_id] < identifier)]
        held = connection.execute("SELECT 1 FROM hold_marker").fetchone() is not None
        sending = {identifier for (identifier,) in connection.execute("SELECT id FROM outbox WHERE state = 'sending'")}
    if live:
        _found(run, STOP_SETTLES, f"attempts {live} are still live after the stop that supervised them")
    left = deadline - run.clock.monotonic()
    waiting = held or run.basecamp.rate_limited_for() > 0 or run.connector.outbox._needs_a_read
    if due and not waiting and left >= MIN_POST_WINDOW.total_seconds():
        _found(run, STOP_SETTLES, f"intents {due} were due and left unclaimed with {left:g} s of the stop's bound left")
    for identifier in sorted(sending & set(requested)):
        if isinstance(run.truth.era_outcome.get(identifier), Created):
            _found(run, STOP_SETTLES, f"intent {identifier} was created during the stop and left sending")
    if supervised:
        run.cover("stop: settled the workers it supervised")
