"""A person's decisions on a record: redispatch and discard.

Each takes what the ledger holds about one record, read in the decision's own transaction, and
answers the ``Plan`` the ledger writes or ``DecisionRefused`` (why not, and what to do instead).
A plan carries the record as it was, written on the decision row, and moves it only at that
revision (compare-and-set).

Nothing live is decided over: a record ``seen``, waiting to run (for a redispatch) or carried by a
live task is refused -- but a follow-up no worker was handed yet (``unhanded``) may be discarded,
and a redispatch of a record a live task carries (handed out, not a success) is recorded pending
on that task: its token retired, its worker stopped, the record admitted when the task ends
unknown or failed.

A redispatch runs again only what may: a record completed ``unknown`` or ``failed`` is admitted at
once; a success never runs twice, a discarded record never leaves, and a project the
configuration does not serve is refused (nothing would start it). A blocked record keeps its
state and reason and is offered back to admission at once (not before a throttled read's
deadline); a held one returns to admitted, or to blocked when held over a blocking reason. A
discard closes what the connector would not close alone -- waiting, blocked, held, or completed
``unknown`` -- as ``discarded(by_operator)``, its pending messages canceled. The same decision
taken twice (a person's discard, the same authorization) is ``already``: not an error.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from returns.result import Failure, Result, Success

from core.admission import DiscardReason
from core.edges import RecordState
from core.states import EventOutcome

BY_OPERATOR = DiscardReason.by_operator  # the reason a person's discard writes on the record

_R = RecordState
_RERUNNABLE = frozenset({EventOutcome.unknown, EventOutcome.failed})


class Action(StrEnum):
    redispatch = "redispatch"
    discard = "discard"


@dataclass(frozen=True, slots=True)
class RecordFacts:
    """What the ledger holds about one record. ``outcome``: its newest task row's ('' for none);
    ``carried``: a live task row still carries it, ``unhanded``: never exposed or pulled;
    ``served``: the configuration routes its project."""
    event_id: int
    state: RecordState
    reason: str
    revision: int
    outcome: str = ""
    carried: bool = False
    discarded_by_person: bool = False
    retry_at: datetime | None = None
    unhanded: bool = False
    served: bool = True
    live_task: int | None = None  # the live task carrying it
    pending_on: int | None = None  # the task its newest decision, a redispatch, waits on


@dataclass(frozen=True, slots=True)
class Plan:
    action: Action
    facts: RecordFacts
    to_state: RecordState
    to_reason: str
    offer_at: datetime | None  # a blocked record offered back to admission from this moment
    summary: str
    cancel_pending: bool = False
    stop_task: int | None = None  # retire this task's token, stop its worker


class WorkerState(StrEnum):
    stopped = "stopped"  # signaled, and its process group ended
    gone = "gone"  # nothing of it was left to signal
    held = "held"  # its group still runs, or could not be proven this task's: nothing more sent
    not_recorded = "not_recorded"  # no process was recorded for the task's attempt


_WORKER_STATES = {
    "terminated": WorkerState.stopped,
    "killed": WorkerState.stopped,
    "gone": WorkerState.gone,
    "survived": WorkerState.held,
    "unverifiable": WorkerState.held,
}


def worker_state(termination: str | None) -> WorkerState:
    """For what stopping the recorded group found (``shell.processes.Termination`` by value)."""
    return WorkerState.not_recorded if termination is None else _WORKER_STATES[termination]


@dataclass(frozen=True, slots=True)
class DecisionRefused:
    event_id: int
    reason: str
    already: bool = False

    def __str__(self) -> str:
        return self.reason


def redispatch(facts: RecordFacts, now: datetime) -> Result[Plan, DecisionRefused]:
    planned = _redispatch(facts, now)
    match planned:
        case Success(plan) if _admits(plan) and not facts.served:
            unserved = ("is in a project the configuration does not serve: nothing would start it; "
                        "add the project's route (setup --route), then redispatch")
            return _refused(facts.event_id, unserved)
    return planned


def _admits(plan: Plan) -> bool:
    """The plan admits the record, now or when its task ends."""
    return plan.to_state is _R.admitted or plan.stop_task is not None


def _redispatch(facts: RecordFacts, now: datetime) -> Result[Plan, DecisionRefused]:
    event = facts.event_id
    if facts.live_task is not None and not facts.unhanded and facts.state in (_R.dispatched, _R.completed):
        return _authorized_live(facts, facts.live_task)
    live = _live(facts, Action.redispatch)
    if live is not None:
        return Failure(live)
    match facts.state:
        case _R.completed if facts.outcome == EventOutcome.succeeded:
            return _refused(event, "succeeded; a success is never run again")
        case _R.completed if facts.outcome in _RERUNNABLE:
            summary = (f"Event {event} admitted again (its outcome was {facts.outcome}); the running "
                       "connector starts a new worker for it once its conversation and directory are free")
            return Success(Plan(Action.redispatch, facts, _R.admitted, "", None, summary=summary))
        case _R.completed:
            return _refused(event, "completed without a settled outcome; nothing to run again")
        case _R.blocked:
            return Success(_offered_again(facts, now))
        case _R.held if facts.reason:  # held over a blocking reason: blocked, and offered again
            return Success(_offered_again(facts, now))
        case _R.held:
            summary = (f"Event {event} admitted; the running connector starts a worker for it once its "
                       "conversation and directory are free")
            return Success(Plan(Action.redispatch, facts, _R.admitted, "", None, summary=summary))
        case _R.discarded:
            why = f"discarded ({facts.reason or 'no reason'}); a discarded record is never run"
            return _refused(event, why)
    return _refused(event, f"is {facts.state}; nothing to redispatch")


def _authorized_live(facts: RecordFacts, task: int) -> Result[Plan, DecisionRefused]:
    event = facts.event_id
    if facts.outcome == EventOutcome.succeeded:
        return _refused(event, "succeeded; a success is never run again")
    if facts.pending_on == task:
        why = f"Event {event} was already authorized; it is admitted when its task {task} ends"
        return Failure(DecisionRefused(event, why, already=True))
    summary = f"Event {event} authorized; admitted when its task {task} ends"
    return Success(Plan(Action.redispatch, facts, facts.state, facts.reason, None, summary=summary,
                        stop_task=task))


def discard(facts: RecordFacts) -> Result[Plan, DecisionRefused]:
    event = facts.event_id
    if facts.state is _R.discarded:
        if facts.discarded_by_person:
            return Failure(
                DecisionRefused(event, f"Event {event} was already discarded by a person", already=True)
            )
        return _refused(event, f"was already discarded by the connector ({facts.reason or 'no reason'})")
    live = _live(facts, Action.discard)
    if live is not None:
        return Failure(live)
    match facts.state:
        case _R.completed if facts.outcome != EventOutcome.unknown:
            outcome = facts.outcome or "no outcome"
            return _refused(event, f"completed ({outcome}); only an unknown outcome is left to close")
        case _R.completed | _R.admitted | _R.queued | _R.blocked | _R.held | _R.dispatched:
            summary = f"Event {event} discarded; it will not run, and its pending notices are not sent"
            return Success(Plan(Action.discard, facts, _R.discarded, BY_OPERATOR, None, summary=summary,
                                cancel_pending=True))
    return _refused(event, f"is {facts.state}; nothing to discard")


def _offered_again(facts: RecordFacts, now: datetime) -> Plan:
    offer = now if facts.retry_at is None else max(now, facts.retry_at)
    summary = (f"Event {facts.event_id} authorized; admission runs again what blocked it "
               f"({facts.reason or 'no reason'}) and admits it when that succeeds")
    return Plan(Action.redispatch, facts, _R.blocked, facts.reason, offer, summary=summary)


def _live(facts: RecordFacts, action: Action) -> DecisionRefused | None:
    event = facts.event_id
    if facts.state is _R.seen:
        return DecisionRefused(
            event, f"Event {event} is waiting for admission's verdict; decide it once it has one"
        )
    if action is Action.discard and facts.state is _R.dispatched and facts.unhanded:
        return None  # a follow-up no worker was handed: only waiting to run
    if facts.state is _R.dispatched or (facts.carried and facts.state is _R.completed):
        return DecisionRefused(event, f"Event {event} is live: a worker's task still carries it; "
                              f"{action} it after that task ends")
    if action is Action.redispatch and facts.state in (_R.admitted, _R.queued):
        return DecisionRefused(
            event, f"Event {event} is already {facts.state}: it runs when its conversation frees"
        )
    return None


def _refused(event: int, why: str) -> Result[Plan, DecisionRefused]:
    return Failure(DecisionRefused(event, f"Event {event} {why}"))
