"""The outbox's message kinds as one table: each kind's every rule, looked up, never restated.

Whoever writes, orders, claims or tells of an intent asks its row in ``KINDS``, so adding a kind
is its ``IntentKind`` member, its row, and the one transition that calls for it.

Rules:
1. Every ``IntentKind`` has one row with every part filled, or import fails.
2. The claim is the only way to ``sending`` and so to a request. The shell selects the oldest due
   pending intent, reads the snapshot its row names, asks ``decide_claim``, and writes the
   answer by compare-and-set from ``pending`` in one immediate transaction, committed before any
   request. An intent whose record or attempt vanished is canceled, never selected forever.
3. A guard acknowledgement is called for only while its record, asked for one, is admitted,
   queued or dispatched and no task row of the event has its guard canceled (a worker pulled)
   or its delivery delivered or completed. A claimed guard marks every armed row fired in the
   claim's transaction (``Claim.mark_guard_fired``), so no worker acknowledges a second time --
   final even if Basecamp refuses: an acknowledgement goes missing rather than doubled.
4. A holding reply is called for only while its record is blocked with ``no_route``.
5. A still-running notice is called for only while its attempt has not ended and some
   instruction on its task is not reported complete: the last word on finished work is never
   "still working on this".
6. A completion notice is always claimed: what its settlement says stays true. So are a worker's
   words (``core.intent_kinds``), written in the worker's own call and promised to be posted once.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol

from core import notes, templates, worker_words
from core.destinations import Destination, MessageKind
from core.edges import DeliveryState, GuardState, RecordState
from core.intent_kinds import IntentKind
from core.snapshots import NO_ROUTE, AttemptSnapshot, RecordSnapshot


class ClaimNeeds(StrEnum):
    """The snapshot a claim of the kind reads."""

    event = "event"  # the event's record and every task row of the event
    attempt = "attempt"  # the attempt and the live task rows of its task
    nothing = "nothing"  # always claimed


class Where(StrEnum):
    """How a kind's destination is found, from the record it answers for."""

    asking_recording = "asking_recording"  # a boost on the recording that asked
    reply = "reply"  # the record's reply destination (``RecordSnapshot.reply_destination``)
    boost_or_reply = "boost_or_reply"  # a boost when the words fit one, else the reply destination
    # (``core.worker_words`` rule 1: a worker's acknowledgement)


class RecordClaimView(Protocol):
    """What a claim rule reads of a record: ``core.snapshots.ClaimRecord``, as a claim is read
    (``shell.ledger.outbox_due``), or a whole ``RecordSnapshot``."""

    @property
    def state(self) -> RecordState: ...
    @property
    def reason(self) -> str: ...
    @property
    def acknowledge(self) -> bool: ...


class TaskRowClaimView(Protocol):
    """What a claim rule reads of a task row: ``core.snapshots.ClaimTaskRow`` or a whole
    ``TaskEventSnapshot``."""

    @property
    def delivery(self) -> DeliveryState: ...
    @property
    def guard(self) -> GuardState: ...


@dataclass(frozen=True, slots=True)
class ClaimFacts:
    """What a claim reads (rule 2), as its kind's ``ClaimNeeds`` says: ``record`` the event's
    record, None when it is gone; ``task_events`` every task row of the event, or every live row
    of the attempt's task; ``attempt`` the intent's attempt, None when it is gone."""

    record: RecordClaimView | None = None
    task_events: Sequence[TaskRowClaimView] = ()
    attempt: AttemptSnapshot | None = None


@dataclass(frozen=True, slots=True)
class Claim:
    """Move the intent to ``sending`` (committed) and make its one request.

    ``mark_guard_fired``: in the same transaction, mark every armed task row of the event fired.
    """

    mark_guard_fired: bool = False


@dataclass(frozen=True, slots=True)
class Cancel:
    """Move the intent to ``canceled`` with ``note``; no request is ever made for it."""

    note: str


ClaimDecision = Claim | Cancel
ClaimRule = Callable[[ClaimFacts], ClaimDecision]

GUARD_STANDING_STATES = frozenset({RecordState.admitted, RecordState.queued, RecordState.dispatched})
ACKNOWLEDGED_DELIVERIES = frozenset({DeliveryState.delivered, DeliveryState.completed})


@dataclass(frozen=True, slots=True)
class KindSpec:
    """One kind's parts (see the module's docstring). ``key`` and ``template`` take the ids and
    values of the transition that writes the kind."""

    label: str
    urgency: int
    needs: ClaimNeeds
    key: Callable[..., str]
    where: Where
    claim: ClaimRule
    template: Callable[..., object]


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


_CLAIM_FIRING_THE_GUARD = Claim(mark_guard_fired=True)  # a value: one serves every guard's claim


def guard_claim(facts: ClaimFacts) -> ClaimDecision:
    """Rule 3."""
    record, task_events = facts.record, facts.task_events
    if record is None or not _guard_still_called_for(record, task_events):
        return Cancel(notes.NO_LONGER_CALLED_FOR)
    return _CLAIM_FIRING_THE_GUARD


def _guard_still_called_for(record: RecordClaimView, task_events: Sequence[TaskRowClaimView]) -> bool:
    if not record.acknowledge or record.state not in GUARD_STANDING_STATES:
        return False
    return not any(
        row.guard == GuardState.canceled or row.delivery in ACKNOWLEDGED_DELIVERIES
        for row in task_events
    )


def holding_reply_claim(facts: ClaimFacts) -> ClaimDecision:
    """Rule 4."""
    record = facts.record
    if record is None or record.state != RecordState.blocked or record.reason != NO_ROUTE:
        return Cancel(notes.NO_LONGER_CALLED_FOR)
    return Claim()


def still_running_claim(facts: ClaimFacts) -> ClaimDecision:
    """Rule 5."""
    attempt, task_events = facts.attempt, facts.task_events
    if attempt is None or not attempt.live:
        return Cancel(notes.ATTEMPT_ENDED)
    if all(row.delivery == DeliveryState.completed for row in task_events):
        return Cancel(notes.ALL_REPORTED)
    return Claim()


def always_claimed(facts: ClaimFacts) -> ClaimDecision:
    """Rule 6."""
    return Claim()


KINDS: dict[IntentKind, KindSpec] = {
    IntentKind.guard_ack: KindSpec("guard boost", 0, ClaimNeeds.event,
        guard_key, Where.asking_recording, guard_claim, templates.guard_acknowledgement),
    IntentKind.worker_ack: KindSpec("the worker's acknowledgement", 0, ClaimNeeds.nothing,
        worker_words.ack_key, Where.boost_or_reply, always_claimed, worker_words.acknowledgement),
    IntentKind.holding_reply: KindSpec("holding reply", 1, ClaimNeeds.event,
        holding_reply_key, Where.reply, holding_reply_claim, templates.holding_reply),
    IntentKind.worker_reply: KindSpec("the worker's reply", 2, ClaimNeeds.nothing,
        worker_words.reply_key, Where.reply, always_claimed, worker_words.reply),
    IntentKind.worker_note: KindSpec("the worker's note", 2, ClaimNeeds.nothing,
        worker_words.note_key, Where.reply, always_claimed, worker_words.note),
    IntentKind.completion: KindSpec("completion notice", 3, ClaimNeeds.nothing,
        completion_key, Where.reply, always_claimed, templates.completion),
    IntentKind.still_running: KindSpec("still-running notice", 4, ClaimNeeds.attempt,
        still_running_key, Where.reply, still_running_claim, templates.still_running),
}  # fmt: skip

_missing = set(IntentKind) - set(KINDS)
if _missing:  # rule 1
    raise ImportError(f"message kinds without a row in KINDS: {sorted(_missing)}")


def decide_claim(kind: IntentKind, facts: ClaimFacts = ClaimFacts()) -> ClaimDecision:
    """Claim or cancel a pending intent of ``kind`` by its row's claim rule (rule 2)."""
    return KINDS[kind].claim(facts)


def destination(kind: IntentKind, record: RecordSnapshot) -> Destination | None:
    """Where the connector's intent of ``kind`` about ``record`` goes by its row's ``Where``, or
    None when it has nowhere. (A worker's words are placed by ``core.worker_words``, from them.)"""
    if KINDS[kind].where is Where.asking_recording:
        if record.recording_id <= 0 or record.bucket_id < 0:
            return None
        return Destination(MessageKind.boost, record.bucket_id, record.recording_id)
    return record.reply_destination()


def urgency_tiers(table: dict[IntentKind, KindSpec] = KINDS) -> tuple[frozenset[IntentKind], ...]:
    """The kinds grouped by tier, most urgent first."""
    tiers = sorted({spec.urgency for spec in table.values()})
    return tuple(frozenset(kind for kind, spec in table.items() if spec.urgency == tier) for tier in tiers)


def label(kind: str) -> str:
    """The words a reader sees for ``kind``; an unknown kind is shown as itself."""
    spec = KINDS.get(kind)  # type: ignore[call-overload]
    return kind if spec is None else spec.label
