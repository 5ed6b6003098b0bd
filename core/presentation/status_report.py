"""What ``bin/connect status`` reports as JSON: one snapshot of values in, a report out.

``report`` turns ``core.presentation.status_values`` into the JSON report,
``core.presentation.status_text`` into the lines a person reads. Pure. The report's keys,
stable, times the ledger's text: summary, account_id, agent_id, state_dir, ledger, lock_file,
running, unsafe_test_timings, worker_allowed, disk, write_failure, token_outage, hold, feed,
queues, blocked, live_tasks, waiting_for_person, dispatches, held, outbox, not_running.

Rules:
1. Reading is not deciding, and it shows nothing secret: no field can hold a feed position, a
   token, a task's token hash or a message body.
2. Whether a connector runs is the lock file's metadata, always marked diagnostic: ``running``
   only when its pid is present, ``perhaps running`` when presence cannot be told. The kernel's
   flock is the truth; status never takes it.
3. Queue depths name every record state, zero included, in the lifecycle's order.
4. Waiting for a person: every indeterminate intent and every refused one, counted apart.
5. Dispatches are the newest ``LAST_DISPATCHES`` attempts, newest first (``null`` until known).
6. The text starts with one summary line; empty sections a person need not read say so there.
7. Records not yet running are listed by event id, oldest first, at most
   ``LAST_WAITING_RECORDS``: the ids ``redispatch`` and ``discard`` take.
8. A disk nearly full, a write the running connector saw fail and an attempt left mid-launch
   are in the summary.
9. A token Basecamp refused on a create (rule 5 of core.not_created) is in the summary and on a
   ``token: failing`` line until a create with a working token moves the messages on.
"""

from __future__ import annotations

from typing import Any

from core.presentation.formats import byte_size, short_time
from core.presentation.status_values import (
    Dispatch,
    LedgerSnapshot,
    LiveTask,
    LockFile,
    PidStatus,
    Status,
    WaitingIntent,
)
from core.presentation.status_waiting import (
    decisions,
    outbox_report,
    outbox_states,
    waits_for,
)
from core.snapshots import WorkerResult
from core.states import IntentState, RecordState

REFUSED = "refused"
"""The state a refused intent (canceled with ``REFUSED_NOTE``) is reported in."""

# -- the parts -------------------------------------------------------------------------------


def queue_depths(snapshot: LedgerSnapshot) -> dict[str, int]:
    """Every record state's count, zero included, in the lifecycle's order (rule 3)."""
    counts = dict(snapshot.state_counts)
    return {str(state): counts.get(str(state), 0) for state in RecordState}


def blocked_by_reason(snapshot: LedgerSnapshot) -> dict[str, int]:
    return dict(sorted(snapshot.blocked))


def running(lock_file: LockFile | None) -> str:
    """What the lock file's metadata suggests: "yes", "no" or "unknown" (rule 2)."""
    if lock_file is None:
        return "no"
    match lock_file.pid_status:
        case PidStatus.present:
            return "yes"
        case PidStatus.absent:
            return "no"
        case _:
            return "unknown"


def _running_phrase(lock_file: LockFile | None) -> str:
    if lock_file is None:
        return "not running (no lock file)"
    words = {"yes": "running", "no": "not running", "unknown": "perhaps running"}[running(lock_file)]
    return f"{words} (lock file: pid {lock_file.pid}, {lock_file.pid_status})"


def plural(count: int, one: str, many: str | None = None) -> str:
    return f"{count} {one if count == 1 else (many or one + 's')}"


def waiting_state(intent: WaitingIntent) -> str:
    return REFUSED if intent.refused else str(intent.state)


def summary(status: Status) -> str:
    """The one line a person reads first (rule 6)."""
    snapshot = status.ledger
    indeterminate = sum(1 for intent in snapshot.waiting if not intent.refused)
    refused = sum(1 for intent in snapshot.waiting if intent.refused)
    parts = [
        _running_phrase(status.lock_file),
        plural(len(snapshot.live_tasks), "live task"),
        plural(indeterminate, "indeterminate message"),
        f"{queue_depths(snapshot)[RecordState.blocked]} blocked",
    ]
    if refused:
        parts.append(plural(refused, "refused message"))
    if snapshot.held:
        parts.append(plural(len(snapshot.held), "held record"))
    left = sum(1 for task in snapshot.live_tasks if left_mid_launch(task))
    if left:
        parts.append(plural(left, "launch", "launches") + " left for a person")
    if snapshot.hold is not None:
        pending = outbox_states(snapshot)[IntentState.pending]
        parts.append(f"on hold ({plural(pending, 'message')} kept back)" if pending else "on hold")
    if status.lock_file is not None and status.lock_file.configuration_problem:
        parts.append("configuration unusable: authorizes nothing")
    if status.disk is not None and status.disk.low:
        parts.append(f"disk nearly full ({byte_size(status.disk.free_bytes)} free)")
    if status.write_failure is not None:
        parts.append(f"ledger writes failing since {short_time(status.write_failure.at)}")
    if snapshot.token_outage is not None:
        parts.append(f"token failing since {short_time(snapshot.token_outage.since)}")
    return " · ".join(parts)


# -- the JSON report -------------------------------------------------------------------------


def _lock_file(lock_file: LockFile | None) -> dict[str, Any]:
    return {
        "diagnostic": True,
        "found": lock_file is not None,
        "pid": None if lock_file is None else lock_file.pid,
        "started_at": None if lock_file is None else lock_file.started_at,
        "pid_status": None if lock_file is None else str(lock_file.pid_status),
        "configuration_problem": (lock_file.configuration_problem or None) if lock_file else None,
    }


def left_mid_launch(task: LiveTask) -> bool:
    """Rule 8: recovery found this task's attempt launching with no recorded process."""
    return task.attempt is not None and task.attempt.left_at is not None


def settle_launch_check(task: LiveTask) -> str:
    """What a person checks before settling an attempt left mid-launch, and how (rule 8)."""
    event = task.event_ids[0] if task.event_ids else 0
    return (
        f"a connector stopped between launching task {task.task_id} and recording its worker: check "
        "whether a worker ran for it (a process of the worker program in the project's directory, "
        "a reply or a change it made on the recording), then settle it with "
        f"`bin/connect settle-launch {event} --ran` or `--did-not-run`"
    )


def _needs_person(task: LiveTask) -> dict[str, Any] | None:
    if not left_mid_launch(task):
        return None
    assert task.attempt is not None
    return {"left_at": task.attempt.left_at, "check": settle_launch_check(task)}


def _live_task(task: LiveTask) -> dict[str, Any]:
    attempt = task.attempt
    return {
        "task_id": task.task_id,
        "state": "superseded" if task.superseded else "live",
        "conversation": task.conversation,
        "created_at": task.created_at,
        "deadline_at": task.deadline_at,
        "attempt": None
        if attempt is None
        else {
            "attempt_id": attempt.attempt_id,
            "state": str(attempt.state),
            "pid": attempt.pid,
            "launched_at": attempt.launched_at,
            "needs_person": _needs_person(task),
        },
        "event_ids": list(task.event_ids),
    }


def _waiting(intent: WaitingIntent) -> dict[str, Any]:
    return {
        "intent_id": intent.intent_id,
        "kind": intent.kind,
        "state": waiting_state(intent),
        "event_id": intent.event_id,
        "attempt_id": intent.attempt_id,
        "message_kind": intent.message_kind,
        "bucket_id": intent.bucket_id,
        "recording_id": intent.recording_id,
        "note": intent.note,
    }


def _worker_result(result: WorkerResult | None) -> dict[str, Any] | None:
    if result is None:
        return None
    return {
        "is_error": result.is_error,
        "error": result.error,
        "turns": result.turns,
        "cost_usd": result.cost_usd,
        "duration_ms": result.duration_ms,
        "denied_tools": list(result.denials),
    }


def _dispatch(dispatch: Dispatch) -> dict[str, Any]:
    return {
        "attempt_id": dispatch.attempt_id,
        "task_id": dispatch.task_id,
        "seq": dispatch.seq,
        "state": str(dispatch.state),
        "stop_reason": dispatch.stop_reason or None,
        "spawn_failed": dispatch.spawn_failed,
        "not_started": dispatch.not_started,
        "worker_result": _worker_result(dispatch.result),
        "launched_at": dispatch.launched_at,
        "ended_at": dispatch.ended_at,
        "events": [
            {
                "event_id": event.event_id,
                "delivery": event.delivery,
                "outcome": event.outcome or None,
                "withdrawn": event.withdrawn,
                "record_state": event.record_state,
            }
            for event in dispatch.events
        ],
    }


def report(status: Status) -> dict[str, Any]:
    """The JSON report; its keys are named in this module's docstring."""
    snapshot = status.ledger
    return {
        "summary": summary(status),
        "account_id": status.account_id,
        "agent_id": status.agent_id,
        "state_dir": status.state_dir,
        "ledger": status.ledger_path,
        "lock_file": _lock_file(status.lock_file),
        "running": running(status.lock_file),
        "unsafe_test_timings": status.unsafe_test_timings,
        "worker_allowed": list(status.worker_allowed),
        "disk": None
        if status.disk is None
        else {
            "free_bytes": status.disk.free_bytes,
            "total_bytes": status.disk.total_bytes,
            "low": status.disk.low,
        },
        "write_failure": None
        if status.write_failure is None
        else {
            "at": status.write_failure.at,
            "why": status.write_failure.why,
            "pid": status.write_failure.pid,
        },
        "token_outage": None
        if snapshot.token_outage is None
        else {"since": snapshot.token_outage.since, "messages_waiting": snapshot.token_outage.messages},
        "hold": None
        if snapshot.hold is None
        else {
            "held_by": snapshot.hold.held_by,
            "held_at": snapshot.hold.held_at,
            "cause": snapshot.hold.cause,
            "generation": snapshot.hold.generation,
        },
        "feed": [
            {
                "has_position": checkpoint.has_position,
                "last_served_id": checkpoint.last_served_id,
                "updated_at": checkpoint.updated_at,
            }
            for checkpoint in snapshot.feed
        ],
        "queues": queue_depths(snapshot),
        "blocked": blocked_by_reason(snapshot),
        "live_tasks": [_live_task(task) for task in snapshot.live_tasks],
        "waiting_for_person": [_waiting(intent) for intent in snapshot.waiting],
        "dispatches": [_dispatch(dispatch) for dispatch in snapshot.dispatches],
        "held": [
            {
                "event_id": record.event_id,
                "event_type": record.event_type,
                "trigger": record.trigger,
                "recording_url": record.recording_url,
            }
            for record in snapshot.held
        ],
        "outbox": outbox_report(snapshot),
        "not_running": [
            {
                "event_id": record.event_id,
                "state": record.state,
                "reason": record.reason or None,
                "event_type": record.event_type,
                "next_retry_at": record.next_retry_at,
                "waits_for": waits_for(record, snapshot.hold is not None),
                "decisions": decisions(record),
            }
            for record in snapshot.not_running
        ],
    }
