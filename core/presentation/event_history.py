"""What ``bin/connect show EVENT_ID`` tells: one event's history as the ledger holds it, the JSON report
(``report``) and the lines a person reads (``lines``), both from the same story (``story``).

The ledger keeps no log of moves, only the times its rows carry: when the record was heard and by
which lane, its latest verdict, each task row and attempt, each intent's written, retrying-since,
claimed and finished times with the note of its last move, and each person's decision with the
record as it was. The story is those times in the ledger's order (its time text sorts as time), so
what happened first is told first whichever table holds it. A sent intent is told posted, adopted
by reconciliation, or marked sent by a person: they are different claims about one message. No
message body, token or feed position is shown.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

from core import notes
from core.intake_status import LANE_NAMES
from core.presentation import short_time
from core.presentation.status_report import result_words, worker_result
from core.snapshots import WorkerResult
from core.states import IntentState


@dataclass(frozen=True, slots=True)
class HistoryRecord:
    event_id: int
    state: str
    reason: str
    event_type: str
    bucket_id: int
    recording_id: int
    creator_id: int
    trigger: str
    lane: str
    seen_at: str
    updated_at: str
    created_at: str | None = None  # Basecamp's time for the event
    decided_at: str | None = None  # admission's latest verdict
    blocked_at: str | None = None
    next_retry_at: str | None = None
    performed_by_id: int | None = None
    recording_url: str = ""
    review: bool = False  # tagged for a person's review by shadow promote or an import


@dataclass(frozen=True, slots=True)
class HistoryAttempt:
    attempt_id: str
    seq: int
    state: str
    stop_reason: str
    launched_at: str
    pid: int | None = None
    session_id: str = ""
    running_at: str | None = None
    ended_at: str | None = None
    spawn_failed: bool = False
    not_started: str = ""
    left_at: str | None = None  # a start's recovery found it launching, its process unrecorded
    settled_by: str | None = None  # the person who settled it (settle-launch)
    settled_as: str = ""
    result: WorkerResult | None = None


@dataclass(frozen=True, slots=True)
class HistoryTask:
    """The event's row on one task, with the task's attempts, oldest first."""

    task_id: int
    conversation: str
    created_at: str
    delivery: str
    guard: str
    outcome: str
    ended_at: str | None = None
    exposed_at: str | None = None
    pulled_at: str | None = None
    delivered_at: str | None = None
    completed_at: str | None = None
    withdrawn_at: str | None = None
    ack_id: int | None = None
    reply_id: int | None = None
    adopted_reply_id: int | None = None
    attempts: tuple[HistoryAttempt, ...] = ()


@dataclass(frozen=True, slots=True)
class HistoryIntent:
    intent_id: int
    kind: str
    state: str
    message_kind: str
    bucket_id: int
    recording_id: int
    created_at: str
    not_before: str
    task_id: int | None = None
    attempt_id: str | None = None
    retrying_since: str | None = None
    sending_at: str | None = None
    reconcile_at: str | None = None
    reconcile_failures: int = 0
    finished_at: str | None = None
    receipt_id: int | None = None
    note: str = ""
    resolved_by: str = ""


@dataclass(frozen=True, slots=True)
class HistoryDecision:
    decision_id: int
    action: str
    decided_by: str
    decided_at: str
    from_state: str
    from_reason: str
    from_outcome: str
    to_state: str
    note: str = ""
    pending_task_id: int | None = None
    revoked_at: str | None = None  # a hold revoked this redispatch before its task ended
    revoked_note: str = ""


@dataclass(frozen=True, slots=True)
class EventHistory:
    record: HistoryRecord
    tasks: tuple[HistoryTask, ...] = ()
    intents: tuple[HistoryIntent, ...] = ()  # the event's own and its tasks' attempts', by id
    decisions: tuple[HistoryDecision, ...] = ()


@dataclass(frozen=True, slots=True)
class Moment:
    at: str
    what: str


LANE_WORDS = {"poll": "the account feed", "live": "the live lane", "repair": "a walk of the feed repairing a "
              "live-lane loss", "inbox": "the agent's inbox"}  # fmt: skip


def landed(intent: HistoryIntent) -> str | None:
    """How a sent intent's message came to be its: ``posted``, ``adopted`` or ``marked_sent``."""
    if intent.state != IntentState.sent:
        return None
    if intent.note == notes.ADOPTED:
        return "adopted"
    if intent.note in (notes.RESOLVED_SENT_CHECKED, notes.RESOLVED_SENT_UNCHECKED):
        return "marked_sent"
    return "posted"


def worker_ids(history: EventHistory) -> tuple[int | None, int | None]:
    """The event's ``ack_id`` and ``reply_id``: its latest task row's (None before any task)."""
    if not history.tasks:
        return None, None
    latest = max(history.tasks, key=lambda task: task.task_id)
    return latest.ack_id, latest.reply_id


def story(history: EventHistory) -> tuple[Moment, ...]:
    """Every time the ledger keeps of the event, in time order; rows a time ties keep the order told."""
    told = [*_record_moments(history.record)]
    for task in history.tasks:
        told += _task_moments(task)
    for intent in history.intents:
        told += _intent_moments(intent)
    for decision in history.decisions:
        told += _decision_moments(decision)
    return tuple(sorted(told, key=lambda moment: moment.at))


def _record_moments(record: HistoryRecord) -> list[Moment]:
    by = f"person {record.creator_id}" + (f", performed by person {record.performed_by_id}"
                                          if record.performed_by_id else "")  # fmt: skip
    said = f"; Basecamp's time {short_time(record.created_at)}" if record.created_at else ""
    lane = LANE_WORDS.get(record.lane, record.lane)
    told = [Moment(record.seen_at, f"heard first by {lane}: {record.event_type} by {by} on recording "
                   f"{record.recording_id} in project {record.bucket_id}{said}")]  # fmt: skip
    if record.decided_at:
        verdict = (f"the {record.trigger} trigger matched" if record.trigger
                   else f"{record.state} ({record.reason or 'no reason'})")  # fmt: skip
        told.append(Moment(record.decided_at, f"verdict: {verdict}"))
    if record.blocked_at:
        retry = (f"; admission tries again at {short_time(record.next_retry_at)}" if record.next_retry_at
                 else "; nothing retries it: a person's redispatch or discard")  # fmt: skip
        told.append(Moment(record.blocked_at, f"blocked ({record.reason or 'no reason'}){retry}"))
    review = "; tagged for a person's review" if record.review else ""
    reason = f" ({record.reason})" if record.reason else ""
    told.append(Moment(record.updated_at, f"the record's last change: {record.state}{reason}{review}"))
    return told


def _task_moments(task: HistoryTask) -> list[Moment]:
    name = f"task {task.task_id}"
    told = [Moment(task.created_at, f"{name} created, conversation {task.conversation or '-'}")]
    steps = ((task.exposed_at, "exposed to its worker"), (task.pulled_at, "its worker pulled the instruction"
             " (get_dispatch)"), (task.delivered_at, "delivered to its worker"),
             (task.withdrawn_at, "withdrawn: the worker could not be started"))  # fmt: skip
    told += [Moment(at, f"{name}: {what}") for at, what in steps if at]
    if task.completed_at:
        told.append(Moment(task.completed_at, f"{name}: outcome {task.outcome or 'none'}"))
    if task.ended_at:
        told.append(Moment(task.ended_at, f"{name} ended"))
    for attempt in task.attempts:
        told += _attempt_moments(task.task_id, attempt)
    return told


def _attempt_moments(task_id: int, attempt: HistoryAttempt) -> list[Moment]:
    name = f"attempt {attempt.attempt_id} (task {task_id}, #{attempt.seq})"
    told = [Moment(attempt.launched_at, f"{name} launched")]
    if attempt.running_at:
        session = f", session {attempt.session_id}" if attempt.session_id else ""
        told.append(Moment(attempt.running_at, f"{name} running, pid {attempt.pid}{session}"))
    if attempt.left_at:
        told.append(Moment(attempt.left_at, f"{name} left mid-launch by a stop: it waits for settle-launch"))
    if attempt.ended_at:
        settled = f"; settled by {attempt.settled_by} as {attempt.settled_as}" if attempt.settled_by else ""
        failed = "; the worker could not be started" if attempt.spawn_failed else ""
        began = f"; never began its work: {attempt.not_started}" if attempt.not_started else ""
        result = "" if attempt.result is None else f"; {result_words(attempt.result)}"
        told.append(Moment(attempt.ended_at, f"{name} ended {attempt.stop_reason}{failed}{began}"
                           f"{result}{settled}"))  # fmt: skip
    return told


def _intent_moments(intent: HistoryIntent) -> list[Moment]:
    where = f"a {intent.message_kind} on recording {intent.recording_id}"
    name = f"intent {intent.intent_id} ({intent.kind})"
    told = [Moment(intent.created_at, f"{name} written: {where}, due {short_time(intent.not_before)}")]
    if intent.retrying_since:
        told.append(Moment(intent.retrying_since, f"{name} back to pending: {intent.note or 'not created'}"))
    if intent.sending_at:
        told.append(Moment(intent.sending_at, f"{name} claimed for its one request"))
    if intent.finished_at:
        told.append(Moment(intent.finished_at, f"{name} {_final_words(intent)}"))
    return told


def _final_words(intent: HistoryIntent) -> str:
    how = landed(intent)
    by = f" by {intent.resolved_by}" if intent.resolved_by else ""
    if how == "posted":
        return f"posted: message {intent.receipt_id}"
    if how == "adopted":
        return f"adopted by reconciliation: message {intent.receipt_id} (found by listing, not posted again)"
    if how == "marked_sent":
        return f"marked sent{by}: message {intent.receipt_id}"
    return f"{intent.state}{by}" + (f" ({intent.note})" if intent.note else "")


def _decision_moments(decision: HistoryDecision) -> list[Moment]:
    was = decision.from_state + (f" ({decision.from_reason})" if decision.from_reason else "")
    outcome = f", outcome {decision.from_outcome}" if decision.from_outcome else ""
    waits = f"; waits for task {decision.pending_task_id} to end" if decision.pending_task_id else ""
    note = f" ({decision.note})" if decision.note else ""
    told = [Moment(decision.decided_at, f"{decision.decided_by} decided {decision.action}: the record was "
                   f"{was}{outcome}, to {decision.to_state}{waits}{note}")]  # fmt: skip
    if decision.revoked_at:
        revoked = f"that {decision.action} was revoked: {decision.revoked_note}"
        told.append(Moment(decision.revoked_at, revoked))
    return told


def report(history: EventHistory) -> dict[str, Any]:
    """The JSON report: ``event_id``, ``record``, ``ack_id``, ``reply_id``, ``tasks`` (each with its
    ``attempts``), ``intents`` (each with ``landed``), ``decisions`` and ``story``."""
    record = history.record
    ack_id, reply_id = worker_ids(history)
    return {
        "event_id": record.event_id,
        "record": {**_fields(record), "reason": record.reason or None, "trigger": record.trigger or None,
                   "recording_url": record.recording_url or None,
                   "lane": LANE_NAMES.get(record.lane, record.lane)},
        "ack_id": ack_id, "reply_id": reply_id,
        "tasks": [_task(task) for task in history.tasks],
        "intents": [{**_fields(intent), "landed": landed(intent)} for intent in history.intents],
        "decisions": [_fields(decision) for decision in history.decisions],
        "story": [{"at": moment.at, "what": moment.what} for moment in story(history)],
    }  # fmt: skip


def _fields(value: Any) -> dict[str, Any]:
    """A history value's fields by name."""
    return {field.name: getattr(value, field.name) for field in fields(value)}


def _task(task: HistoryTask) -> dict[str, Any]:
    attempts = [{**{name: shown for name, shown in _fields(attempt).items() if name != "result"},
                 "worker_result": worker_result(attempt.result)} for attempt in task.attempts]  # fmt: skip
    shown = {name: value for name, value in _fields(task).items() if name != "attempts"}
    return {**shown, "outcome": task.outcome or None, "attempts": attempts}


def lines(history: EventHistory) -> list[str]:
    """The text: a line of what the event is now, then the story, one moment a line."""
    record = history.record
    ack_id, reply_id = worker_ids(history)
    reason = f" ({record.reason})" if record.reason else ""
    head = (f"event {record.event_id}: {record.state}{reason}; {record.event_type} on recording "
            f"{record.recording_id} in project {record.bucket_id}; ack_id {ack_id or '-'}, "
            f"reply_id {reply_id or '-'}")
    return [head, *(f"  {short_time(moment.at)}  {moment.what}" for moment in story(history))]
