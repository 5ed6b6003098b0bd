"""The check ``last-word-never-still-working``: a still-running notice that lands after its attempt
ended is followed by that attempt's completion notice (``core.message_kinds``).

Rules:
1. The world makes the race (``meanwhile``): when the outbox's request for a still-running notice
   starts -- its claim committed, the notice not yet at Basecamp -- its worker, if alive and
   supervised, finishes in the meantime with probability ``IN_FLIGHT_CHANCE``: it acts (pulls,
   replies, reports) until it exits, at most ``MOST_ACTIONS`` actions, and the dispatcher
   settles its attempt, all before the request lands. Never while a crash is armed.
2. Ground truth (``request_ended``): a still-running request that stored a message at Basecamp
   while its attempt was already ended is remembered with that message's id.
3. At the end of a run, each remembered notice needs a message of its attempt's completion
   intent stored after it at the same destination; or that intent still to be sent, canceled
   or left for a person (the outbox's own checks judge those). No completion intent at all, or
   one whose message came first, is the violation: the connector's last word on ended work was
   "still working".
"""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING

from core.edges import Actor
from core.posting import PostOutcome

if TYPE_CHECKING:
    from tests.sim.whole.run import Run

CHECK = "last-word-never-still-working"
IN_FLIGHT_CHANCE = 0.75
MOST_ACTIONS = 12

_LANDED_LATE: weakref.WeakKeyDictionary[Run, list[tuple[int, str, int]]] = weakref.WeakKeyDictionary()


def _still_running_attempt(run: Run, intent_id: int) -> str | None:
    with run.connector.ledger.read() as connection:
        found = connection.execute(
            "SELECT attempt_id FROM outbox WHERE id = ? AND kind = 'still_running'", (intent_id,)
        ).fetchone()
    return None if found is None else str(found[0])


def meanwhile(run: Run, intent_id: int) -> None:
    """Rule 1: the worker of a still-running notice in flight may finish before it lands."""
    if run.basecamp.crash_at is not None:
        return
    attempt_id = _still_running_attempt(run, intent_id)
    worker = next((w for w in run.workers.alive.values() if w.attempt_id == attempt_id and w.supervised), None)
    if worker is None or run.rng.random() >= IN_FLIGHT_CHANCE:
        return
    run.cover("still-running notice in flight as its worker finishes")
    run.actors = run.actors | {Actor.worker, Actor.dispatcher}  # this step acts as them too
    for _ in range(MOST_ACTIONS):
        reason = run.workers.act(worker, run.connector.ledger)
        if reason is not None:
            run._ended(worker, reason)  # the run's own settling of an ended worker
            return


def request_ended(run: Run, intent_id: int, outcome: PostOutcome | None) -> None:
    """Rule 2: remember a still-running notice stored after its attempt ended."""
    stored = run.basecamp.by_maker.get(f"intent:{intent_id}")
    attempt_id = _still_running_attempt(run, intent_id)
    if not stored or attempt_id is None:
        return
    with run.connector.ledger.read() as connection:
        (state,) = connection.execute("SELECT state FROM attempts WHERE id = ?", (attempt_id,)).fetchone()
    if state == "ended":
        _LANDED_LATE.setdefault(run, []).append((intent_id, attempt_id, stored[-1]))
        run.cover("still-running notice landed after its attempt ended")


def judge(run: Run) -> list[tuple[str, str]]:
    """Rule 3, at the end of a run: what it found, as (check, detail)."""
    found: list[tuple[str, str]] = []
    for intent_id, attempt_id, message_id in _LANDED_LATE.get(run, []):
        with run.connector.ledger.read() as connection:
            completion = connection.execute(
                "SELECT id, state FROM outbox WHERE kind = 'completion' AND attempt_id = ?", (attempt_id,)
            ).fetchone()
        if completion is None:
            found.append((CHECK, f"attempt {attempt_id}: its still-running notice (intent {intent_id}) landed"
                                 " after it ended, and no completion notice was written"))  # fmt: skip
            continue
        completion_id, state = completion
        after = [made for made in run.basecamp.by_maker.get(f"intent:{completion_id}", []) if made > message_id]
        if state == "sent" and not after:
            found.append((CHECK, f"attempt {attempt_id}: its completion notice (intent {completion_id}) came"
                                 f" before its still-running notice (intent {intent_id})"))  # fmt: skip
    return found
