"""How an attempt's end settles each event of its task, and how the settlement reads back.

A reported outcome stands. A row no worker pulled and never exposed is returned to wait for a task
of its own. On a proven spawn failure a launch exposure no worker pulled is withdrawn for its one
automatic retry, or blocked again once that was used. Anything else exposed ends ``unknown``: the
worker may have acted on it, so it never runs again by itself. A record a person already moved is
settled where it was put. The completion notice reads the rows as the settlement left them
(``read_back``); a row a person redispatched meanwhile reads ``redispatched``, asking nothing. A
worker that replied but never reported has its reply adopted next to its ``unknown`` outcome
(``choose_reply``) in the settlement's transaction, before the completion notice is written.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Set
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from returns.result import Failure, Result, Success

from core.destinations import ListedMessage
from core.edges import DeliveryState, RecordState
from core.snapshots import SettledEvent, Settlement, StopReason
from core.states import EventOutcome

SPAWN_FAILED = "spawn_failed"


@dataclass(frozen=True, slots=True)
class SettledRow:
    """One task row and its record, as the settlement's transaction left them."""
    event_id: int
    delivery: DeliveryState
    outcome: EventOutcome
    reply_id: int | None
    withdrawn: bool
    record_state: RecordState
    record_reason: str
    adopted_reply_id: int | None = None
    reply_on_its_way: bool = False  # a worker's reply the outbox posts for it (not canceled)
    reply_not_posted: bool = False  # a worker's reply canceled with no message: refused, or given up


def read_back(row: SettledRow) -> SettledEvent:
    if row.record_state == RecordState.blocked and row.record_reason == SPAWN_FAILED:
        settlement = Settlement.blocked_again
    elif row.withdrawn:
        settlement = Settlement.withdrawn
    elif row.delivery == DeliveryState.admitted:
        settlement = Settlement.returned
    elif row.record_state == RecordState.admitted:
        settlement = Settlement.redispatched
    elif row.outcome in (EventOutcome.succeeded, EventOutcome.failed):
        settlement = Settlement.reported
    else:
        settlement = Settlement.unknown
    outcome = row.outcome if settlement is Settlement.reported else EventOutcome.unknown
    return SettledEvent(row.event_id, outcome, row.reply_id, settlement, row.adopted_reply_id,
                        row.reply_on_its_way, row.reply_not_posted)


@dataclass(frozen=True, slots=True)
class LiveRow:
    event_id: int
    delivery: DeliveryState
    exposed_by_this_attempt: bool
    pulled: bool
    withdrawn_before: bool  # the event already used its one automatic retry, on an earlier task
    record_state: RecordState


@dataclass(frozen=True, slots=True)
class RowSettlement:
    event_id: int
    settlement: Settlement
    record_to: RecordState | None  # None: the record stays where it is
    record_reason: str = ""


def settle(rows: tuple[LiveRow, ...] | list[LiveRow], spawn_failed: bool) -> tuple[RowSettlement, ...]:
    return tuple(_settle_row(row, spawn_failed) for row in rows)


def _settle_row(row: LiveRow, spawn_failed: bool) -> RowSettlement:
    def moved(settlement: Settlement, record_to: RecordState, reason: str = "") -> RowSettlement:
        dispatched = row.record_state == RecordState.dispatched  # else a person moved it already
        return RowSettlement(row.event_id, settlement, record_to if dispatched else None, reason)

    if row.delivery == DeliveryState.completed:
        return RowSettlement(row.event_id, Settlement.reported, None)
    if row.delivery == DeliveryState.admitted and not row.pulled:
        return moved(Settlement.returned, RecordState.admitted)
    launch_exposure = row.exposed_by_this_attempt and row.delivery == DeliveryState.exposed
    if spawn_failed and launch_exposure and not row.pulled:
        if row.withdrawn_before:
            return moved(Settlement.blocked_again, RecordState.blocked, SPAWN_FAILED)
        return moved(Settlement.withdrawn, RecordState.admitted)
    return moved(Settlement.unknown, RecordState.completed)


# -- the plan ``shell.ledger.tasks.end_attempt`` applies ----------------------------------------
@dataclass(frozen=True, slots=True)
class RowStep:
    """One row's writes in a settlement's plan, in the state the settlement found it."""
    event_id: int
    delivery: DeliveryState  # as found
    complete_delivery: bool  # exposed or delivered, unreported: completed, outcome unknown
    withdraw: bool  # the row is withdrawn (its one automatic retry, or blocked again)
    record_to: RecordState | None  # None: the record stays where it is
    record_reason: str = ""


@dataclass(frozen=True, slots=True)
class SettlementPlan:
    """An attempt's settlement as writes, in their order: ``before`` the task is superseded (the
    ``unknown`` rows), then ``after`` it (the rows withdrawn, blocked again or returned)."""
    settled: tuple[RowSettlement, ...]
    before: tuple[RowStep, ...]
    after: tuple[RowStep, ...]


_AFTER_SUPERSESSION = frozenset({Settlement.withdrawn, Settlement.blocked_again, Settlement.returned})


def settlement_plan(rows: tuple[LiveRow, ...] | list[LiveRow], spawn_failed: bool) -> SettlementPlan:
    """The writes ``settle`` calls for; a reported row writes nothing."""
    settled = settle(rows, spawn_failed)
    delivery_of = {row.event_id: row.delivery for row in rows}

    def step(decision: RowSettlement) -> RowStep:
        delivery = delivery_of[decision.event_id]
        unknown = decision.settlement is Settlement.unknown
        return RowStep(
            decision.event_id, delivery,
            complete_delivery=unknown and delivery in (DeliveryState.exposed, DeliveryState.delivered),
            withdraw=decision.settlement in (Settlement.withdrawn, Settlement.blocked_again),
            record_to=decision.record_to, record_reason=decision.record_reason,
        )

    return SettlementPlan(
        settled,
        before=tuple(step(decision) for decision in settled if decision.settlement is Settlement.unknown),
        after=tuple(step(decision) for decision in settled if decision.settlement in _AFTER_SUPERSESSION),
    )


# -- the adopted reply -------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class AdoptionRow:
    event_id: int
    outcome: EventOutcome | None
    delivered_at: datetime | None
    reply_id: int | None = None
    adopted_reply_id: int | None = None


@dataclass(frozen=True, slots=True)
class LifecycleMessages:
    receipts: frozenset[int]
    words: frozenset[str]  # message_text of every non-canceled intent's body there


@dataclass(frozen=True, slots=True)
class ListedReplies:
    """The agent's messages listed at each row's reply destination before the settlement, by event
    id; a row whose listing failed (or was not made) is absent."""
    agent_id: int
    listed: Mapping[int, tuple[ListedMessage, ...]]


def _unanswered(row: AdoptionRow) -> bool:
    return row.delivered_at is not None and row.reply_id is None and row.adopted_reply_id is None


def may_become_candidate(row: AdoptionRow) -> bool:
    """Before its task settles, whether ``row`` may be a candidate once it has: its listing is read."""
    return row.outcome not in (EventOutcome.succeeded, EventOutcome.failed) and _unanswered(row)


def is_candidate(row: AdoptionRow) -> bool:
    """A settled row whose outcome is ``unknown``, delivered, with no reply and none adopted."""
    return row.outcome == EventOutcome.unknown and _unanswered(row)


def next_acknowledgement(row: AdoptionRow, task_rows: Iterable[AdoptionRow]) -> datetime | None:
    """The earliest acknowledgement on the task after ``row``'s own; None when there is none."""
    if row.delivered_at is None:
        return None
    later = [other.delivered_at for other in task_rows if other.event_id != row.event_id
             and other.delivered_at is not None and other.delivered_at > row.delivered_at]
    return min(later, default=None)


def choose_reply(
    row: AdoptionRow, listed: Iterable[ListedMessage], *, agent_id: int, next_ack_at: datetime | None,
    workers_own: Set[int], lifecycle: LifecycleMessages,
) -> int | None:
    """The one reply to adopt for ``row``, or None when none or several are adoptable: the agent's,
    created strictly after the row's delivery and before the task's next acknowledgement, and not a
    worker's own message, a lifecycle message by receipt, or one with the words of a non-canceled
    lifecycle intent there (a canceled one provably does not exist, so its words hide nothing)."""
    if not is_candidate(row) or row.delivered_at is None:
        return None
    delivered_at = row.delivered_at
    adoptable = {
        message.id
        for message in listed
        if message.creator_id == agent_id
        and message.created_at > delivered_at
        and (next_ack_at is None or message.created_at < next_ack_at)
        and message.id not in workers_own
        and message.id not in lifecycle.receipts
        and message.text not in lifecycle.words
    }
    if len(adoptable) != 1:
        return None
    (reply_id,) = adoptable
    return reply_id


# -- recovery, and a launch left for a person -------------------------------------------------
class RecoveryStep(StrEnum):
    leave_live = "leave_live"  # this attempt and every later one stay live, for the next start
    mark_left = "mark_left"  # no recorded process: left mid-launch, for a person
    end_group = "end_group"  # end the recorded group, its leader verified
    held = "held"  # the group cannot be verified: the attempt stays live and held
    list_replies = "list_replies"  # what the adopted-reply rule reads
    settle_lost = "settle_lost"  # the attempt ends lost, settled


@dataclass(frozen=True, slots=True)
class RecoveryFacts:
    recorded_process: bool  # its pid and process group are recorded
    stopped: bool  # the start's stop is set, as read just now
    group_gone: bool | None = None  # None: not ended yet; False: it cannot be verified as ours
    listed: bool = False  # its replies are listed


def recovery_step(facts: RecoveryFacts) -> RecoveryStep:
    """The next step for one attempt a previous connector left live: a gone group's attempt is
    settled only after its replies are listed; a stop leaves it for the next start."""
    if facts.group_gone is None and facts.stopped:  # nothing is done to it yet
        return RecoveryStep.leave_live
    if not facts.recorded_process:
        return RecoveryStep.mark_left
    if facts.group_gone is None:
        return RecoveryStep.end_group
    if not facts.group_gone:
        return RecoveryStep.held
    if not facts.listed:
        return RecoveryStep.list_replies
    if facts.stopped:  # its listing may have been cut short
        return RecoveryStep.leave_live
    return RecoveryStep.settle_lost


class LaunchFinding(StrEnum):
    ran = "ran"
    did_not_run = "did_not_run"


@dataclass(frozen=True, slots=True)
class LeftLaunch:
    """The live attempt of the task carrying the event, as the settlement's transaction reads it."""
    event_id: int
    task_id: int
    attempt_id: str
    launching: bool
    left: bool  # a start's recovery marked it left mid-launch
    pulled: bool  # a row of its task was pulled by a worker


@dataclass(frozen=True, slots=True)
class LaunchSettlement:
    facts: LeftLaunch
    claim: LaunchFinding
    stop_reason: StopReason
    spawn_failed: bool
    summary: str


def settle_launch(
    facts: LeftLaunch | None, event_id: int, claim: LaunchFinding
) -> Result[LaunchSettlement, str]:
    """A connector killed between committing a launch and recording its worker's process leaves it
    ``launching`` with no pid, and recovery marks it left; only such an attempt is settled here,
    its task superseded with it: did not run, ``failed`` as a proven spawn failure (refused once a
    worker pulled); ran, ``lost``, each exposed row ``unknown``."""
    if facts is None:
        return Failure(f"Event {event_id} is on no live task: there is no launch to settle")
    task, attempt = facts.task_id, facts.attempt_id
    if not (facts.launching and facts.left):
        return Failure(f"Event {event_id}'s task {task} has no attempt left mid-launch ({attempt} is not one"
                       " a start's recovery found launching with no recorded process); nothing to settle")
    if claim is LaunchFinding.did_not_run:
        if facts.pulled:
            return Failure(f"Event {event_id}'s task {task}: the ledger shows a worker pulled its "
                           "instruction, so a worker did run; settle it with --ran")
        summary = (f"Attempt {attempt} settled as never run: task {task} ended, its records wait to "
                   "run again, and the project moves on")
        return Success(LaunchSettlement(facts, claim, StopReason.failed, True, summary))
    summary = (f"Attempt {attempt} settled as run: task {task} ended, its records' outcome is unknown "
               f"(redispatch or discard each), and the project moves on")
    return Success(LaunchSettlement(facts, claim, StopReason.lost, False, summary))
