"""A worker's words in the whole-connector simulation: the ``speaking`` worker,
and the named checks on what the connector posted for it.

Rules:
1. A ``speaking`` worker hands its words to its tools, never to Basecamp: ``ack_dispatch`` with a
   text (a boost, or a comment when long), sometimes a note (``reply_dispatch``), and
   ``complete_dispatch`` with its reply; each call sometimes twice, as a worker that never saw
   the answer would (a repeat must be the same message).
2. ``worker-words-once-or-indeterminate``: every worker message's intent made at most one message
   (ground truth: ``SimBasecamp.by_maker``); at the end, each is sent with the one it made,
   indeterminate or abandoned for a person, or canceled with nothing made: never two.
3. ``worker-words-one-per-call``: one acknowledgement and one reply intent per task row, and one
   note per text, however often the worker called.
4. ``worker-words-recorded``: a worker's acknowledgement or reply that landed is its task row's
   ``ack_id`` or ``reply_id``, so the event never reads "no reply reported" for want of an id.
5. ``completion-notice-is-the-last-word``: the world makes the race (``meanwhile``): when the
   outbox's request for a worker's acknowledgement or note starts, with ``IN_FLIGHT_CHANCE`` it
   never connects (back to pending for its 30 s retry), half the time the request after it is
   refused, and its worker, alive and supervised, finishes meanwhile (at most ``MOST_ACTIONS``
   actions) and its attempt is settled -- never while a crash is armed. At the end of a run, no
   message of a worker's words Basecamp holds was made after the first message of its task's
   completion notice (ground truth: the order ``SimBasecamp`` stored them in), unless a person
   resent those words.
"""

from __future__ import annotations

import random
from collections import Counter
from typing import TYPE_CHECKING, Any

from core.dispatch_tools.decisions import AckRequest, CompleteRequest, Completion, ReplyRequest
from core.edges import Actor
from core.intent_kinds import REPORTED_AS, WORKER_KINDS, IntentKind
from shell.ledger.worker_calls import DispatchLedger
from tests.sim.whole.basecamp import Post

if TYPE_CHECKING:
    from tests.sim.whole.run import Run

SPEAKING = "speaking"

LAST_WORD = "completion-notice-is-the-last-word"
CHECKS = (
    "worker-words-once-or-indeterminate",
    "worker-words-one-per-call",
    "worker-words-recorded",
    LAST_WORD,
)
IN_FLIGHT_CHANCE = 0.5
MOST_ACTIONS = 12

_WORDS = (
    "SELECT o.id, o.kind, o.state, o.receipt_id, o.task_id, o.event_id, te.ack_id, te.reply_id"
    " FROM outbox o LEFT JOIN task_events te ON te.task_id = o.task_id AND te.event_id = o.event_id"
    " WHERE o.kind IN (" + ", ".join(f"'{kind}'" for kind in sorted(WORKER_KINDS)) + ") ORDER BY o.id"
)


def acknowledge(tools: DispatchLedger, rng: random.Random, event_id: int) -> None:
    """Rule 1: the acknowledgement in a few words (a boost) or in a sentence (a comment)."""
    text = "on it" if rng.random() < 0.7 else f"Looking into **event {event_id}** now."
    for _ in range(2 if rng.random() < 0.3 else 1):
        tools.ack_dispatch(AckRequest(event_id, None, text))


def report(tools: DispatchLedger, rng: random.Random, event_id: int, outcome: str) -> None:
    """Rule 1: perhaps a note, then the outcome with the reply, each perhaps twice."""
    if rng.random() < 0.5:
        for _ in range(2 if rng.random() < 0.3 else 1):
            tools.reply_dispatch(ReplyRequest(event_id, f"A note on event {event_id}: _halfway_."))
    reply = f"Done: I looked into event {event_id}. See [the change](https://example.com/{event_id})."
    for _ in range(2 if rng.random() < 0.3 else 1):
        tools.complete_dispatch(CompleteRequest(event_id, Completion(outcome, reply=reply)))


def judge(run: Run, final: bool) -> None:
    """Rules 2 to 4, on the ledger as the step left it."""
    with run.connector.ledger.read() as connection:
        rows = connection.execute(_WORDS).fetchall()
    if final and rows:
        run.cover("a worker's words through the outbox")
    per_row: Counter[tuple[object, ...]] = Counter()
    for identifier, kind, state, receipt, task_id, event_id, ack_id, reply_id in rows:
        made = run.basecamp.by_maker.get(f"intent:{identifier}", [])
        _once(run, (identifier, kind, state, receipt), made, final)
        if kind != IntentKind.worker_note:
            per_row[(kind, task_id, event_id)] += 1
        if state == "sent":
            if final:
                run.cover(f"{kind} sent")
            _recorded(run, (identifier, kind, receipt), ack_id, reply_id)
    for found, count in per_row.items():
        if count > 1:
            run.truth.violations.append(("worker-words-one-per-call", f"{count} intents for {found}"))


def _once(run: Run, row: tuple[int, str, str, Any], made: list[int], final: bool) -> None:
    identifier, kind, state, receipt = row
    name = "worker-words-once-or-indeterminate"
    if len(made) > 1:
        run.truth.violations.append((name, f"{kind} intent {identifier} made {len(made)} messages: {made}"))
    if not final:
        return
    if state == "sent" and made and receipt not in made:
        run.truth.violations.append((name, f"{kind} intent {identifier} sent as {receipt}, not its own {made}"))
    if state == "canceled" and made:
        run.truth.violations.append((name, f"{kind} intent {identifier} canceled, yet it made {made}"))


def _recorded(run: Run, sent: tuple[int, str, int], ack_id: Any, reply_id: Any) -> None:
    identifier, kind, receipt = sent
    column = REPORTED_AS.get(IntentKind(kind))
    if column is None:
        return
    recorded = ack_id if column == "ack_id" else reply_id
    if recorded != receipt:
        run.truth.violations.append(
            ("worker-words-recorded", f"{kind} intent {identifier} sent as {receipt}; the row's {column} is {recorded}")
        )


def meanwhile(run: Run, intent_id: int) -> None:
    """Rule 5: a worker's acknowledgement or note fails to connect while its worker finishes."""
    if run.basecamp.crash_at is not None:
        return
    with run.connector.ledger.read() as connection:
        found = connection.execute(
            "SELECT task_id FROM outbox WHERE id = ? AND kind IN ('worker_ack', 'worker_note')", (intent_id,)
        ).fetchone()
    worker = None if found is None else next(
        (w for w in run.workers.alive.values() if w.launch.task_id == found[0] and w.supervised), None)
    if worker is None or run.rng.random() >= IN_FLIGHT_CHANCE:
        return
    run.cover("a worker's word fails to connect as its worker finishes")
    run.basecamp.next_posts[:0] = [Post.not_connected, *([Post.refuse] if run.rng.random() < 0.5 else [])]
    run.actors = run.actors | {Actor.worker, Actor.dispatcher}  # this step acts as them too
    for _ in range(MOST_ACTIONS):
        reason = run.workers.act(worker, run.connector.ledger)
        if reason is not None:
            run._ended(worker, reason)  # the run's own settling of an ended worker
            return


def judge_last_word(run: Run) -> list[tuple[str, str]]:
    """Rule 5, at the end of a run: what it found, as (check, detail)."""
    with run.connector.ledger.read() as connection:
        rows = connection.execute(
            "SELECT o.id, o.task_id, o.kind, o.resolved_by FROM outbox o WHERE o.task_id IN"
            " (SELECT task_id FROM outbox WHERE kind = 'completion' AND state = 'sent') ORDER BY o.id"
        ).fetchall()
    first_notice: dict[int, tuple[int, int]] = {}
    for identifier, task_id, kind, _ in rows:
        made = run.basecamp.by_maker.get(f"intent:{identifier}", [])
        if kind == IntentKind.completion and made:
            first_notice[task_id] = (identifier, min(made))
    found: list[tuple[str, str]] = []
    for identifier, task_id, kind, resolved_by in rows:
        if kind not in WORKER_KINDS or task_id not in first_notice or resolved_by:
            continue
        notice, first = first_notice[task_id]
        later = [made for made in run.basecamp.by_maker.get(f"intent:{identifier}", []) if made > first]
        if later:
            found.append((LAST_WORD, f"task {task_id}: {kind} intent {identifier} landed as {later} after its"
                                     f" completion notice (intent {notice}, message {first})"))
        elif run.basecamp.by_maker.get(f"intent:{identifier}"):
            run.cover("a worker's word, then its task's completion notice")
    return found
