"""Which lifecycle messages a transition calls for: their keys, destinations, bodies and due times.

Rule 1: an intent is written by the ledger in the transaction of the transition that calls for
it (a verdict, a still-running tick, an attempt's end); the functions here take that
transaction's snapshot values and answer which intents it writes. Nothing here reads a clock.

Rule 2: one intent per thing answered for, by key; a second write of a key writes nothing:
``guard_ack:event:<event id>``, ``holding_reply:event:<event id>``,
``still_running:attempt:<attempt id>:<occurrence>``, ``completion:attempt:<attempt id>``.

Rule 3: the guard acknowledgement is called for by a request (``acknowledge``) whose verdict is
admitted or queued (a queued event still asked for something). It is a boost on the event's own
recording, due ``GUARD_DELAY`` (30 s) after the verdict, so a worker that acknowledges first
cancels it. A trigger that asks for nothing (subscribed, completed) never arms it.

Rule 4: the holding reply is called for by a request blocked with reason ``no_route`` whose
record has a reply destination (a comment or a Campfire line, recording > 0). It is due at once.
No other verdict calls for one.

Rule 5: a still-running notice is written only for a live attempt, once per occurrence
(counted from 1), at the reply destination of the task's originating event, due at once.

Rule 6: a completion notice is written only for an ended attempt, and only when the completion
template has a line for some event (``core.templates.completion``), rendered from the rows the
settlement wrote; due at once.

Rule 7: an intent with no destination (a non-positive recording) or a body with no words
(``core.text.message_text`` empty) is not produced: there would be nothing to post or match.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta

from core import templates
from core.destinations import Destination, MessageKind
from core.edges import RecordState
from core.intent_kinds import IntentKind as IntentKind  # noqa: PLC0414 - the kinds' table, named here too
from core.snapshots import NO_ROUTE, AttemptSnapshot, RecordSnapshot, SettledEvent
from core.text import message_text

GUARD_DELAY = timedelta(seconds=30)
"""How long a request waits for its worker's own acknowledgement before the guard is due."""

GUARDED_VERDICTS = frozenset({RecordState.admitted, RecordState.queued})


@dataclass(frozen=True, slots=True)
class Intent:
    """One lifecycle message to post exactly once or not at all, as the ledger writes it."""

    key: str
    kind: IntentKind
    event_id: int | None
    task_id: int | None
    attempt_id: str | None
    occurrence: int
    destination: Destination
    body: str
    not_before: datetime


def guard_key(event_id: int) -> str:
    """The key of an event's guard acknowledgement."""
    return f"guard_ack:event:{event_id}"


def holding_reply_key(event_id: int) -> str:
    """The key of an event's holding reply."""
    return f"holding_reply:event:{event_id}"


def still_running_key(attempt_id: str, occurrence: int) -> str:
    """The key of an attempt's still-running notice number ``occurrence``."""
    return f"still_running:attempt:{attempt_id}:{occurrence}"


def completion_key(attempt_id: str) -> str:
    """The key of an attempt's completion notice."""
    return f"completion:attempt:{attempt_id}"


def intents_for_verdict(
    record: RecordSnapshot, decided_at: datetime, guard_delay: timedelta = GUARD_DELAY
) -> tuple[Intent, ...]:
    """The intents a verdict calls for; ``record`` is as the verdict's transaction left it."""
    if not record.acknowledge:
        return ()
    if record.state in GUARDED_VERDICTS:
        if record.recording_id <= 0 or record.bucket_id < 0:
            return ()
        boost = Destination(MessageKind.boost, record.bucket_id, record.recording_id)
        guard = _intent(
            guard_key(record.event_id), IntentKind.guard_ack, boost,
            templates.guard_acknowledgement(), decided_at + guard_delay,
            event_id=record.event_id,
        )
        return () if guard is None else (guard,)
    if record.state == RecordState.blocked and record.reason == NO_ROUTE:
        reply = record.reply_destination()
        if reply is None:
            return ()
        holding = _intent(
            holding_reply_key(record.event_id), IntentKind.holding_reply, reply,
            templates.holding_reply(record.event_id), decided_at,
            event_id=record.event_id,
        )
        return () if holding is None else (holding,)
    return ()


def still_running_intent(
    attempt: AttemptSnapshot, origin: RecordSnapshot, occurrence: int, now: datetime
) -> Intent | None:
    """The still-running notice for a tick of ``attempt``; ``origin`` is its task's originating record."""
    if not attempt.live or occurrence < 1:
        return None
    reply = origin.reply_destination()
    if reply is None:
        return None
    return _intent(
        still_running_key(attempt.attempt_id, occurrence), IntentKind.still_running, reply,
        templates.still_running(attempt, occurrence, now), now,
        task_id=attempt.task_id, attempt_id=attempt.attempt_id, occurrence=occurrence,
    )


def completion_intent(
    attempt: AttemptSnapshot, events: Iterable[SettledEvent], origin: RecordSnapshot, now: datetime
) -> Intent | None:
    """The completion notice for an ended ``attempt``, from how its settlement left ``events``."""
    if attempt.live:
        return None
    lines = templates.completion(attempt, events)
    reply = origin.reply_destination()
    if lines is None or reply is None:
        return None
    return _intent(
        completion_key(attempt.attempt_id), IntentKind.completion, reply, lines, now,
        task_id=attempt.task_id, attempt_id=attempt.attempt_id,
    )


def _intent(
    key: str,
    kind: IntentKind,
    destination: Destination,
    lines: templates.Lines,
    not_before: datetime,
    *,
    event_id: int | None = None,
    task_id: int | None = None,
    attempt_id: str | None = None,
    occurrence: int = 0,
) -> Intent | None:
    body = templates.render(lines, destination.kind)
    if not message_text(body):
        return None
    return Intent(
        key=key, kind=kind, event_id=event_id, task_id=task_id, attempt_id=attempt_id,
        occurrence=occurrence, destination=destination, body=body, not_before=not_before,
    )
