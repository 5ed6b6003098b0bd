"""Which lifecycle messages a transition calls for: their keys, destinations, bodies and due times.

Rule 1: an intent is written in the transaction of the transition that calls for it (a verdict,
a still-running tick, an attempt's end), from that transaction's snapshot values. Nothing here
reads a clock.

Rule 2: one intent per thing answered for, by its kind's key (``core.message_kinds``); a second
write of a key writes nothing.

Rule 3: a request (``acknowledge``) admitted or queued calls for the guard acknowledgement: a
boost on the event's recording, due ``GUARD_DELAY`` after the verdict, so a worker that
acknowledges first cancels it. Subscribed and completed triggers never arm it.

Rule 4: a request blocked with ``no_route`` whose record has a reply destination calls for the
holding reply, due at once; no other verdict does.

Rule 5: a still-running notice is written only for a live attempt, once per occurrence (from 1),
at the reply destination of the task's originating event, due at once.

Rule 6: a completion notice is written only for an ended attempt: when the completion template
has a line (``core.templates.completion``), or when a still-running notice is ``sending`` as it
ends (``notice_in_flight``): then it says only how the task ended, and it is the last word, as
the outbox makes one request at a time and claims this one after the notice. Due at once.

Rule 7: no intent without a destination (a non-positive recording) or words
(``core.text.message_text`` empty): nothing to post or match."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import cast

from core import templates
from core.destinations import Destination
from core.edges import RecordState
from core.intent_kinds import IntentKind as IntentKind  # noqa: PLC0414 - the kinds' table, named here too
from core.message_kinds import KINDS, destination
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


def intents_for_verdict(
    record: RecordSnapshot, decided_at: datetime, guard_delay: timedelta = GUARD_DELAY
) -> tuple[Intent, ...]:
    """The intents a verdict calls for; ``record`` is as the verdict's transaction left it."""
    if not record.acknowledge:
        return ()
    if record.state in GUARDED_VERDICTS:
        guard = _intent(
            IntentKind.guard_ack, record, (record.event_id,), (), decided_at + guard_delay,
            event_id=record.event_id,
        )
        return () if guard is None else (guard,)
    if record.state == RecordState.blocked and record.reason == NO_ROUTE:
        holding = _intent(
            IntentKind.holding_reply, record, (record.event_id,), (record.event_id,), decided_at,
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
    return _intent(
        IntentKind.still_running, origin, (attempt.attempt_id, occurrence), (attempt, occurrence, now), now,
        task_id=attempt.task_id, attempt_id=attempt.attempt_id, occurrence=occurrence,
    )


def completion_intent(
    attempt: AttemptSnapshot,
    events: Iterable[SettledEvent],
    origin: RecordSnapshot,
    now: datetime,
    *,
    notice_in_flight: bool = False,
) -> Intent | None:
    """The completion notice for an ended ``attempt``, from how its settlement left ``events``
    and whether a still-running notice of it was in flight as it ended (rule 6)."""
    if attempt.live:
        return None
    return _intent(
        IntentKind.completion, origin, (attempt.attempt_id,), (attempt, tuple(events)), now,
        task_id=attempt.task_id, attempt_id=attempt.attempt_id,
        template_options={"notice_in_flight": notice_in_flight},
    )


def _intent(
    kind: IntentKind,
    about: RecordSnapshot,
    key_parts: tuple[object, ...],
    template_parts: tuple[object, ...],
    not_before: datetime,
    *,
    event_id: int | None = None,
    task_id: int | None = None,
    attempt_id: str | None = None,
    occurrence: int = 0,
    template_options: dict[str, object] | None = None,
) -> Intent | None:
    """The intent of ``kind`` about ``about`` by its row: its key from ``key_parts``, its body
    from its template given ``template_parts`` (None: no line to write), where its row says."""
    spec = KINDS[kind]
    place = destination(kind, about)
    lines = cast("templates.Lines | None", spec.template(*template_parts, **(template_options or {})))
    if place is None or lines is None:
        return None
    body = templates.render(lines, place.kind)
    if not message_text(body):
        return None
    return Intent(
        key=spec.key(*key_parts), kind=kind, event_id=event_id, task_id=task_id, attempt_id=attempt_id,
        occurrence=occurrence, destination=place, body=body, not_before=not_before,
    )
