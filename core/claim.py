"""At claim time: is this pending intent still called for? Claim it, or cancel it with a note.

The claim is the only way to ``sending`` and so to a request. The shell selects the oldest due
pending intent, reads a snapshot of what it answers for, asks ``decide_claim``, and writes the
answer with a compare-and-set from ``pending`` in the same immediate transaction, committed
before any request is made.

Rule 1: a guard acknowledgement is still called for only while its record exists, asked for an
acknowledgement, is admitted, queued or dispatched, and no task row of the event has its guard
canceled (a worker pulled its instruction) or its delivery delivered or completed (a worker
acknowledged or finished). Otherwise it is canceled, "no longer called for".

Rule 2: a claimed guard is fired from its claim: every armed task row of the event is marked
fired in the claim's own transaction (``Claim.mark_guard_fired``), so no worker asking while the
request is in flight acknowledges a second time. That is final, even if Basecamp then refuses
the request: an acknowledgement goes missing rather than doubled.

Rule 3: a holding reply is still called for only while its record is blocked with reason
``no_route``. If the route arrived and the record moved on, the reply is wrong, so it is
canceled, "no longer called for".

Rule 4: a still-running notice is still called for only while its attempt exists and has not
ended, and some instruction on its task is not yet reported complete, so the connector's last
word on finished work is never "still working on this". Otherwise it is canceled: "the attempt
ended before the notice went out", or "every instruction was reported before the notice went
out" (a worker that reported everything and has yet to exit is not still working on it).

Rule 5: a completion notice is always claimed: it was written from the settlement that ended
its attempt, and what it says stays true.

Rule 6: an intent whose record or attempt vanished is canceled, never left pending to be
selected again forever.

Rule 7: a worker's words (``core.intent_kinds.WORKER_KINDS``) are always claimed: they were
written in the transaction of the worker's own call, and the worker was told they would be
posted once.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from core import notes
from core.edges import DeliveryState, GuardState, RecordState
from core.intents import IntentKind
from core.snapshots import NO_ROUTE, AttemptSnapshot, RecordSnapshot, TaskEventSnapshot

GUARD_STANDING_STATES = frozenset({RecordState.admitted, RecordState.queued, RecordState.dispatched})
ACKNOWLEDGED_DELIVERIES = frozenset({DeliveryState.delivered, DeliveryState.completed})


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


def decide_claim(
    kind: IntentKind,
    *,
    record: RecordSnapshot | None = None,
    task_events: Iterable[TaskEventSnapshot] = (),
    attempt: AttemptSnapshot | None = None,
) -> ClaimDecision:
    """Claim or cancel a pending intent of ``kind``.

    ``record`` is the event's record (guard, holding reply), None when it is gone;
    ``task_events`` every task row of the event, live or retired (guard), or every live row of
    the attempt's task (still-running); ``attempt`` the intent's attempt (still-running), None
    when it is gone.
    """
    match kind:
        case IntentKind.guard_ack:
            if record is None or not _guard_still_called_for(record, task_events):
                return Cancel(notes.NO_LONGER_CALLED_FOR)
            return Claim(mark_guard_fired=True)
        case IntentKind.holding_reply:
            if record is None or record.state != RecordState.blocked or record.reason != NO_ROUTE:
                return Cancel(notes.NO_LONGER_CALLED_FOR)
            return Claim()
        case IntentKind.still_running:
            if attempt is None or not attempt.live:
                return Cancel(notes.ATTEMPT_ENDED)
            if all(row.delivery == DeliveryState.completed for row in task_events):
                return Cancel(notes.ALL_REPORTED)
            return Claim()
        case IntentKind.completion | IntentKind.worker_ack | IntentKind.worker_reply | IntentKind.worker_note:
            return Claim()


def _guard_still_called_for(record: RecordSnapshot, task_events: Iterable[TaskEventSnapshot]) -> bool:
    if not record.acknowledge or record.state not in GUARD_STANDING_STATES:
        return False
    return not any(
        row.guard == GuardState.canceled or row.delivery in ACKNOWLEDGED_DELIVERIES
        for row in task_events
    )
