"""The careful person: resolves what the outbox left for a person, redispatches and discards.

Rules:
1. Resolution follows what is true in Basecamp, as a careful person looks before deciding:
   ``sent`` with the message the intent's own request made when there is one; otherwise
   ``resend`` (the message is truly absent) or, for an indeterminate intent, sometimes
   ``abandon``. Every decision goes through ``shell.ledger.resolution.resolve_intent``.
2. Redispatch and discard go through ``shell.ledger.decisions.decide``, on any record that
   might take them (a held one too); a refusal is an answer. A redispatch done widens what the
   ``no-instruction-twice`` check allows for that event by one worker.
3. Hold and release go through ``shell.ledger.hold`` (what ``bin/connect hold`` and ``release``
   call): a hold stands until this person releases it, at the latest when the run ends.
4. A person may put the card of a recent mention in the trash (by mistake): Basecamp then
   refuses every create at it (``SimBasecamp.trashed``), and a careful person resends nothing
   refused there meanwhile. Later they restore it and resend every refused intent at it (what
   ``bin/connect status`` lists): a refused guard may come back after a worker pulled its
   instruction, and its claim must then cancel it (``core.message_kinds``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from core.decisions import Action
from core.edges import IntentState
from core.resolution import Abandon, Resend, Sent
from shell.ledger import decisions
from shell.ledger.hold import release, set_hold
from shell.ledger.resolution import resolve_intent, waits_for_person
from tests.sim.whole.basecamp import ROUTED

if TYPE_CHECKING:
    from tests.sim.whole.run import Run

PERSON = "person:26909558"


def act(run: Run) -> None:
    match run.rng.randrange(15):
        case 0 | 1 | 2 | 3 | 4:
            _resolve(run)
        case 5 | 6 | 7:
            _decide(run, Action.redispatch)
        case 8 | 9:
            _decide(run, Action.discard)
        case 10:
            set_hold(run.connector.ledger, PERSON, "a look at the queue", run.clock.now())
            run.note("person: hold")
            run.cover("person: hold set")
        case 11:
            release_hold(run)
        case _ if run.basecamp.trashed:
            _restore(run)
        case _:
            _trash(run)


def release_hold(run: Run) -> None:
    released = release(run.connector.ledger, PERSON, run.clock.now())
    run.note(f"person: release: {released.summary}")
    run.cover("person: hold released" if released.hold is not None else "person: release, none stood")


def _resolve(run: Run) -> None:
    with run.connector.ledger.read() as connection:
        waiting = [
            (identifier, state, note)
            for identifier, state, note, recording in connection.execute(
                "SELECT id, state, note, recording_id FROM outbox ORDER BY id")
            if waits_for_person(IntentState(state), note)
            and not (state == "canceled" and recording in run.basecamp.trashed)  # refused again (rule 4)
        ]
    if not waiting:
        return
    identifier, state, _ = run.rng.choice(waiting)
    mine = run.basecamp.by_maker.get(f"intent:{identifier}", [])
    if mine:
        resolution: Sent | Abandon | Resend = Sent(mine[0], PERSON)
    elif state == "indeterminate" and run.rng.random() < 0.3:
        resolution = Abandon(PERSON)
    else:
        resolution = Resend(PERSON)
    resolve_intent(run.connector.ledger, identifier, resolution)
    run.note(f"person: intent {identifier} {type(resolution).__name__.lower()}")
    run.cover(f"person: {type(resolution).__name__.lower()} {state}")
    if isinstance(resolution, Resend):
        run.truth.requested_in_era.discard(identifier)
        run.truth.era_outcome.pop(identifier, None)


def _trash(run: Run) -> None:
    recent = run.basecamp.feed[-3:]
    if recent:
        recording = run.rng.choice(recent).recording_id
        run.basecamp.trashed.add(recording)
        run.note(f"person: trashed recording {recording}")
        run.cover("person: trashed a recording")


def _restore(run: Run) -> None:
    recording = run.rng.choice(sorted(run.basecamp.trashed))
    run.basecamp.trashed.discard(recording)
    with run.connector.ledger.read() as connection:
        refused = [identifier for identifier, state, note in connection.execute(
            "SELECT id, state, note FROM outbox WHERE recording_id = ? ORDER BY id", (recording,))
            if state == "canceled" and waits_for_person(IntentState(state), note)]
    _resend(run, refused, f"restored recording {recording}")
    run.cover("person: restored a recording, resent what it refused" if refused else "person: restored a recording")


def _resend(run: Run, identifiers: list[int], why: str) -> None:
    for identifier in identifiers:
        resolve_intent(run.connector.ledger, identifier, Resend(PERSON))
        run.note(f"person: intent {identifier} resend ({why})")
        run.truth.requested_in_era.discard(identifier)
        run.truth.era_outcome.pop(identifier, None)


def _decide(run: Run, action: Action) -> None:
    with run.connector.ledger.read() as connection:
        candidates = [event_id for (event_id,) in connection.execute(
            "SELECT id FROM events WHERE state IN ('completed', 'blocked', 'admitted', 'queued', 'held') ORDER BY id")]
    if not candidates:
        return
    event_id = run.rng.choice(candidates)
    decided = decisions.decide(run.connector.ledger, event_id, action, PERSON, run.clock.now(),
                               served=frozenset({ROUTED}))
    ok = decided.value_or(None) is not None
    run.note(f"person: {action} {event_id}: {'done' if ok else 'refused'}")
    run.cover(f"person: {action} {'done' if ok else 'refused'}")
    if ok and action is Action.redispatch:
        run.truth.redispatched[event_id] += 1

