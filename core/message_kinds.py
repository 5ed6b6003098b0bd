"""The outbox's message kinds as one table, and the intents a transition calls for.

Each ``IntentKind`` has one row in ``KINDS``, or import fails: its label, its urgency (what a
person waits on first; the outbox claims the lowest first), the snapshot its claim reads, its
key, where it goes and its template. Whoever writes, orders, claims or tells of an intent asks
the row, so adding a kind is its member, its row and the transition that calls for it.

An intent is written in the transaction of the transition that calls for it, from that
transaction's values, one per thing answered for: a second write of its key writes nothing. It
has a destination and words, or it is not written. At claim time the kind's rule decides, from a
snapshot read in the claim's transaction, whether the message is still called for; one that is
not is canceled and never sent. A claimed guard marks its event's armed task rows fired in the
same transaction, so no worker acknowledges a second time: an acknowledgement goes missing
rather than doubled. A row told so is held true: its guard is retried until it lands, is refused
or is decided by a person, and one that never went out marks its rows so. A completion notice
and a worker's words are never canceled at claim (what was written stays true), but each waits
while an earlier word of its task has not landed: the destination reads them in the order they
were written, and the completion notice, written at the attempt's end, is the last word.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum
from typing import cast

from core import notes, templates, worker_words
from core.destinations import Destination, MessageKind
from core.edges import DeliveryState, GuardState, RecordState
from core.intent_kinds import IntentKind
from core.snapshots import NO_ROUTE, AttemptSnapshot, RecordSnapshot, SettledEvent, TaskEventSnapshot
from core.text import message_text

GUARD_DELAY = timedelta(seconds=30)
"""How long a request waits for its worker's own acknowledgement before the guard is due."""

STARVING_AFTER = timedelta(minutes=2)
"""An intent due this long goes before any that is not, whatever its kind: no kind waits past it."""


class ClaimNeeds(StrEnum):

    event = "event"  # the event's record and every task row of the event, live or retired
    attempt = "attempt"  # the attempt and the live task rows of its task
    words = "words"  # whether an earlier word of the intent's task is still pending or sending


class Where(StrEnum):

    asking_recording = "asking_recording"  # a boost on the recording that asked
    reply = "reply"  # the record's reply destination
    boost_or_reply = "boost_or_reply"  # a boost when the words fit one, else the reply destination


@dataclass(frozen=True, slots=True)
class ClaimFacts:
    """What a claim reads, as its kind's ``ClaimNeeds`` says: ``record`` None when it is gone."""

    record: RecordSnapshot | None = None
    task_events: Sequence[TaskEventSnapshot] = ()
    attempt: AttemptSnapshot | None = None
    earlier_words_waiting: bool = False


@dataclass(frozen=True, slots=True)
class Claim:
    """Move the intent to ``sending`` (committed) and make its one request; ``fires_guard``: mark
    every armed task row of the event fired in the same transaction."""

    fires_guard: bool = False


@dataclass(frozen=True, slots=True)
class Cancel:
    """Move the intent to ``canceled`` with ``note``; no request is ever made for it."""

    note: str


@dataclass(frozen=True, slots=True)
class HoldBack:
    """Leave the intent pending, untouched, and ask again at a later claim."""


ClaimDecision = Claim | Cancel | HoldBack


@dataclass(frozen=True, slots=True)
class KindSpec:
    """One kind's row; ``key`` and ``template`` take the values of the transition that writes it."""

    label: str
    urgency: int
    needs: ClaimNeeds
    key: Callable[..., str]
    where: Where
    claim: Callable[[ClaimFacts], ClaimDecision]
    template: Callable[..., object]


def guard_key(event_id: int) -> str:
    return f"guard_ack:event:{event_id}"


def holding_reply_key(event_id: int) -> str:
    return f"holding_reply:event:{event_id}"


def still_running_key(attempt_id: str, occurrence: int) -> str:
    return f"still_running:attempt:{attempt_id}:{occurrence}"


def completion_key(attempt_id: str) -> str:
    return f"completion:attempt:{attempt_id}"


GUARD_STANDING_STATES = frozenset({RecordState.admitted, RecordState.queued, RecordState.dispatched})
ACKNOWLEDGED_DELIVERIES = frozenset({DeliveryState.delivered, DeliveryState.completed})
WORKER_ANSWERS = frozenset({GuardState.canceled, GuardState.refused})  # the worker acknowledges, not a guard


def guard_claim(facts: ClaimFacts) -> ClaimDecision:
    """Called for while its record, asked for one, stands admitted, queued or dispatched and no
    task row of the event has its guard canceled (a worker pulled) or refused (its worker is told to
    acknowledge, so a person's resend would double it) or was delivered or completed.
    Once its claim fired a row, that row was told a guard is on its way: called for while its
    record stands (not gone or discarded), whatever the rows did since."""
    record, rows = facts.record, facts.task_events
    if any(row.guard == GuardState.fired for row in rows):
        standing = record is not None and record.state != RecordState.discarded
        return Claim(fires_guard=True) if standing else Cancel(notes.NO_LONGER_CALLED_FOR)
    if record is None or not record.acknowledge or record.state not in GUARD_STANDING_STATES:
        return Cancel(notes.NO_LONGER_CALLED_FOR)
    if any(row.guard in WORKER_ANSWERS or row.delivery in ACKNOWLEDGED_DELIVERIES for row in rows):
        return Cancel(notes.NO_LONGER_CALLED_FOR)
    return Claim(fires_guard=True)


def holding_reply_claim(facts: ClaimFacts) -> ClaimDecision:
    """Called for only while its record is blocked with ``no_route``."""
    record = facts.record
    if record is None or record.state != RecordState.blocked or record.reason != NO_ROUTE:
        return Cancel(notes.NO_LONGER_CALLED_FOR)
    return Claim()


def still_running_claim(facts: ClaimFacts) -> ClaimDecision:
    """Called for only while its attempt has not ended and some instruction on its task is not
    reported complete: the last word on finished work is never "still working on this"."""
    if facts.attempt is None or not facts.attempt.live:
        return Cancel(notes.ATTEMPT_ENDED)
    if all(row.delivery == DeliveryState.completed for row in facts.task_events):
        return Cancel(notes.ALL_REPORTED)
    return Claim()


def after_earlier_words(facts: ClaimFacts) -> ClaimDecision:
    """Held back while an earlier word of its task has not landed (still pending or sending): an
    "on it" never follows the reply, nor a note the completion notice. A word settled otherwise
    (refused, given up, indeterminate) holds nothing back."""
    return HoldBack() if facts.earlier_words_waiting else Claim()


KINDS: dict[IntentKind, KindSpec] = {
    IntentKind.guard_ack: KindSpec("guard boost", 0, ClaimNeeds.event,
        guard_key, Where.asking_recording, guard_claim, templates.guard_acknowledgement),
    IntentKind.worker_ack: KindSpec("the worker's acknowledgement", 0, ClaimNeeds.words,
        worker_words.ack_key, Where.boost_or_reply, after_earlier_words, worker_words.acknowledgement),
    IntentKind.holding_reply: KindSpec("holding reply", 1, ClaimNeeds.event,
        holding_reply_key, Where.reply, holding_reply_claim, templates.holding_reply),
    IntentKind.worker_reply: KindSpec("the worker's reply", 2, ClaimNeeds.words,
        worker_words.reply_key, Where.reply, after_earlier_words, worker_words.reply),
    IntentKind.worker_note: KindSpec("the worker's note", 2, ClaimNeeds.words,
        worker_words.note_key, Where.reply, after_earlier_words, worker_words.note),
    IntentKind.completion: KindSpec("completion notice", 3, ClaimNeeds.words,
        completion_key, Where.reply, after_earlier_words, templates.completion),
    IntentKind.still_running: KindSpec("still-running notice", 4, ClaimNeeds.attempt,
        still_running_key, Where.reply, still_running_claim, templates.still_running),
}  # fmt: skip

if _missing := set(IntentKind) - set(KINDS):
    raise ImportError(f"message kinds without a row in KINDS: {sorted(_missing)}")


def decide_claim(kind: IntentKind, facts: ClaimFacts = ClaimFacts()) -> ClaimDecision:
    return KINDS[kind].claim(facts)


def destination(kind: IntentKind, record: RecordSnapshot) -> Destination | None:
    """Where the connector's intent of ``kind`` about ``record`` goes, or None when it has nowhere.
    (A worker's words are placed by ``core.worker_words``.)"""
    if KINDS[kind].where is Where.asking_recording:
        if record.recording_id <= 0 or record.bucket_id < 0:
            return None
        return Destination(MessageKind.boost, record.bucket_id, record.recording_id)
    return record.reply_destination()


def label(kind: str) -> str:
    """The words a reader sees for ``kind``; an unknown kind is shown as itself."""
    spec = KINDS.get(kind)  # type: ignore[call-overload]
    return kind if spec is None else spec.label


# -- the intents transitions call for ---------------------------------------------------------

GUARDED_VERDICTS = frozenset({RecordState.admitted, RecordState.queued})


@dataclass(frozen=True, slots=True)
class Intent:

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
    """A request admitted or queued calls for the guard, due ``guard_delay`` after the verdict (a
    worker that acknowledges first cancels it); one blocked ``no_route`` calls for the holding
    reply, due at once. Subscribed and completed triggers (no ``acknowledge``) call for nothing."""
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
    """A live attempt's still-running notice number ``occurrence`` (from 1), at the reply
    destination of its task's originating record ``origin``, due at once."""
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
    """An ended attempt's completion notice, when its template has a line for how settlement left
    ``events``, or when a still-running notice of it was ``sending`` as it ended
    (``notice_in_flight``): then it says only how the task ended, and it is the last word, since
    the outbox makes one request at a time and claims it after the notice. Due at once."""
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
    """The intent of ``kind`` about ``about`` by its row, or None with no destination or words."""
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
