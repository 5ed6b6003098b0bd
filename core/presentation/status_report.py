"""What ``bin/connect status`` says: one snapshot of values in, a report and its lines out.

The shell reads the lock file's metadata and one read transaction of the ledger
(``shell.ledger.status``) into the values of ``core.presentation.status_values``; this module
turns them into the JSON report and the lines a person reads. Pure: no I/O, no clock.

Rules:
1. Reading is not deciding, and it shows nothing secret: no field here can hold a feed
   position (a checkpoint is only ``has_position``), a token, a task's token hash or a message
   body. The report is built from these values alone.
2. Whether a connector runs is the lock file's metadata, and it is always marked diagnostic:
   ``running`` is said only when the file names a pid that is present; ``not running`` when it
   names a pid that is absent or when there is no file; ``perhaps running`` when the pid's
   presence cannot be told (someone else's process). The kernel's flock is the truth, and
   status never takes it.
3. Queue depths name every record state, zero included, in the lifecycle's order, so the keys
   are the same in every report.
4. Waiting for a person: every indeterminate intent, and every intent Basecamp refused
   (canceled with ``REFUSED_NOTE``): only a person moves either. They are counted apart.
5. Dispatches are the newest ``LAST_DISPATCHES`` attempts, newest first, each with its stop
   reason (``null`` while the attempt is live) and each event's delivery and outcome (``null``
   until one is reported or settled).
6. The text starts with one summary line; sections a person need not read when empty (held
   records, messages waiting for a person, live tasks) say so in the summary instead.
7. Records not yet running (blocked, admitted, queued) are listed by event id, oldest first, at
   most ``LAST_WAITING_RECORDS``: the ids a person gives ``redispatch`` and ``discard``.
8. A disk nearly full where the ledger lives is in the summary: the connector's writes fail
   there first, and otherwise that shows only in its log. So is a write the running connector
   itself saw fail (``write_failure``), with when and why, until its next write succeeds.

The JSON report (``report``), keys stable; times are the ledger's text (UTC, nine digits):

    summary            the text's first line
    account_id, agent_id, state_dir, ledger
    lock_file          {diagnostic: true, found, pid, started_at, pid_status,
                       configuration_problem}; pid_status is "present" | "absent" | "unknown",
                       and pid, started_at and pid_status are null when no lock file was found;
                       configuration_problem is null, or why the running connector's re-read
                       configuration file authorizes nothing
    running            "yes" | "no" | "unknown", from the lock file (rule 2)
    unsafe_test_timings  true when setup --unsafe-test-timings lifted the timing floors
    disk               null (not measured), or {free_bytes, total_bytes, low}: where the ledger
                       lives; low below ``LOW_DISK_BYTES`` free, and the summary says so (rule 8)
    write_failure      null, or {at, why, pid}: the running connector's last ledger write failed
                       (disk full, read-only, damaged) and none has succeeded since (rule 8)
    hold               null, or {held_by, held_at, cause, generation}: nothing is dispatched or
                       posted while held
    feed               [{has_position, last_served_id, updated_at}], one per filter set; never
                       the position itself
    queues             {seen, admitted, queued, blocked, dispatched, completed, discarded, held}
    blocked            {reason: count} of blocked records, reasons sorted
    live_tasks         [{task_id, state ("live" | "superseded"), conversation, created_at,
                       deadline_at, attempt: null | {attempt_id, state, pid, launched_at,
                       needs_person: null | {left_at, check}}, event_ids}] (rule 8)
    waiting_for_person [{intent_id, kind, state ("indeterminate" | "refused"), event_id,
                       attempt_id, message_kind, bucket_id, recording_id, note}]
    dispatches         [{attempt_id, task_id, seq, state, stop_reason, spawn_failed,
                       launched_at, ended_at, events: [{event_id, delivery, outcome,
                       withdrawn, record_state}]}], newest first
    held               [{event_id, event_type, trigger, recording_url}]
    outbox             {states: {pending, sending, sent, indeterminate, canceled, abandoned},
                       waiting_to_post: {kind: count} (pending and sending), held_back_by_hold:
                       the pending ones a standing hold keeps back (0 without one)}
    not_running        [{event_id, state, reason, event_type, next_retry_at, waits_for
                       ("admission" | "person" | "hold" | "worker"), decisions (what the rules
                       accept: ["redispatch", "discard"] for a blocked one, else ["discard"])}]:
                       blocked, admitted and queued records, oldest first (rule 7)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from core.presentation.formats import byte_size, short_time
from core.presentation.status_values import (
    Disk,
    Dispatch,
    DispatchedEvent,
    FeedCheckpoint,
    LedgerSnapshot,
    LiveTask,
    LockFile,
    PidStatus,
    Status,
    WaitingIntent,
)
from core.presentation.status_waiting import (
    decisions,
    not_running_advice,
    not_running_line,
    outbox_line,
    outbox_report,
    outbox_states,
    records_line,
    waits_for,
)
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


def _plural(count: int, one: str, many: str | None = None) -> str:
    return f"{count} {one if count == 1 else (many or one + 's')}"


def _waiting_state(intent: WaitingIntent) -> str:
    return REFUSED if intent.refused else str(intent.state)


def summary(status: Status) -> str:
    """The one line a person reads first (rule 6)."""
    snapshot = status.ledger
    indeterminate = sum(1 for intent in snapshot.waiting if not intent.refused)
    refused = sum(1 for intent in snapshot.waiting if intent.refused)
    parts = [
        _running_phrase(status.lock_file),
        _plural(len(snapshot.live_tasks), "live task"),
        _plural(indeterminate, "indeterminate message"),
        f"{queue_depths(snapshot)[RecordState.blocked]} blocked",
    ]
    if refused:
        parts.append(_plural(refused, "refused message"))
    if snapshot.held:
        parts.append(_plural(len(snapshot.held), "held record"))
    left = sum(1 for task in snapshot.live_tasks if left_mid_launch(task))
    if left:
        parts.append(_plural(left, "launch", "launches") + " left for a person")
    if snapshot.hold is not None:
        pending = outbox_states(snapshot)[IntentState.pending]
        parts.append(f"on hold ({_plural(pending, 'message')} kept back)" if pending else "on hold")
    if status.lock_file is not None and status.lock_file.configuration_problem:
        parts.append("configuration unusable: authorizes nothing")
    if status.disk is not None and status.disk.low:
        parts.append(f"disk nearly full ({byte_size(status.disk.free_bytes)} free)")
    if status.write_failure is not None:
        parts.append(f"ledger writes failing since {short_time(status.write_failure.at)}")
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
        "state": _waiting_state(intent),
        "event_id": intent.event_id,
        "attempt_id": intent.attempt_id,
        "message_kind": intent.message_kind,
        "bucket_id": intent.bucket_id,
        "recording_id": intent.recording_id,
        "note": intent.note,
    }


def _dispatch(dispatch: Dispatch) -> dict[str, Any]:
    return {
        "attempt_id": dispatch.attempt_id,
        "task_id": dispatch.task_id,
        "seq": dispatch.seq,
        "state": str(dispatch.state),
        "stop_reason": dispatch.stop_reason or None,
        "spawn_failed": dispatch.spawn_failed,
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
    """The JSON report; its keys are documented in this module's docstring."""
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


# -- the text --------------------------------------------------------------------------------


def _lock_lines(lock_file: LockFile | None) -> list[str]:
    if lock_file is None:
        return ["lock file: none (no connector has said it holds the lock; diagnostic only)"]
    meaning = {
        PidStatus.present: "that process is present",
        PidStatus.absent: "that process is gone (a connector that died leaves its lock file behind)",
        PidStatus.unknown: "cannot tell whether that process is present (another user's)",
    }[lock_file.pid_status]
    problem = lock_file.configuration_problem
    return [
        f"lock file: pid {lock_file.pid}, started {short_time(lock_file.started_at)}; {meaning}",
        "  diagnostic only: status takes no lock, and the kernel's lock, not this file, is the truth",
        *([f"  configuration: {problem}: it authorizes nothing until it is usable again"] if problem else []),
    ]


def _feed_lines(feed: Sequence[FeedCheckpoint]) -> list[str]:
    if not feed:
        return ["feed: never read (no checkpoint yet)"]
    lines = []
    for checkpoint in feed:
        kept = (
            "position kept"
            if checkpoint.has_position
            else "no position (resumes after the last served event)"
        )
        lines.append(
            f"feed: {kept}; last served event {checkpoint.last_served_id}; "
            f"updated {short_time(checkpoint.updated_at)}"
        )
    return lines


def _event_phrase(event: DispatchedEvent) -> str:
    if event.withdrawn:
        return f"event {event.event_id} withdrawn (the worker could not be started), now {event.record_state}"
    if event.outcome:
        return f"event {event.event_id} {event.outcome}"
    return f"event {event.event_id} no outcome yet ({event.delivery})"


def _dispatch_line(dispatch: Dispatch) -> str:
    how = f"ended {dispatch.stop_reason}" if dispatch.stop_reason else str(dispatch.state)
    events = "; ".join(_event_phrase(event) for event in dispatch.events) or "no events"
    return (
        f"  {short_time(dispatch.launched_at)}  task {dispatch.task_id}  {dispatch.attempt_id}  "
        f"{how}: {events}"
    )


def _live_task_line(task: LiveTask) -> str:
    attempt = task.attempt
    if attempt is None:
        worker = "no attempt"
    else:
        pid = f", pid {attempt.pid}" if attempt.pid is not None else ""
        worker = (
            f"attempt {attempt.attempt_id} {attempt.state}{pid}, launched {short_time(attempt.launched_at)}"
        )
    superseded = " (superseded)" if task.superseded else ""
    events = ", ".join(str(event_id) for event_id in task.event_ids) or "none"
    return (
        f"  task {task.task_id}{superseded} on {task.conversation or '-'}: {worker}; "
        f"deadline {short_time(task.deadline_at)}; events {events}"
    )


def _waiting_line(intent: WaitingIntent) -> str:
    where = (
        f"campfire {intent.recording_id}"
        if intent.message_kind == "chat_line"
        else f"recording {intent.recording_id}"
    )
    event = f", event {intent.event_id}" if intent.event_id is not None else ""
    note = f" ({intent.note})" if intent.note else ""
    return (
        f"  intent {intent.intent_id}: {intent.kind} {_waiting_state(intent)}{event}, "
        f"a {intent.message_kind} on {where} in project {intent.bucket_id}{note}"
    )


UNSAFE_LINE = (
    "UNSAFE TEST TIMINGS: the timing floors are lifted (setup --unsafe-test-timings); for a demo "
    "or a test only: a sending message may be listed before it could land"
)


def _disk_lines(disk: Disk | None) -> list[str]:
    if disk is None:
        return ["disk: could not be measured"]
    line = f"disk: {byte_size(disk.free_bytes)} free of {byte_size(disk.total_bytes)} where the ledger lives"
    if disk.low:
        line += "; nearly full: the connector cannot record what it reads or sends, free some space"
    return [line]


def lines(status: Status) -> list[str]:
    """The text a person reads: the summary first (rule 6), then each part."""
    snapshot = status.ledger
    queues = queue_depths(snapshot)
    out = [
        summary(status),
        "",
        f"account {status.account_id}, agent {status.agent_id}; state {status.state_dir}",
        *_lock_lines(status.lock_file),
        *_disk_lines(status.disk),
    ]
    if status.write_failure is not None:
        failed = status.write_failure
        out.append(
            f"ledger writes: the connector's last one failed at {short_time(failed.at)}"
            f" (pid {failed.pid}): {failed.why}; nothing it reads or sends is recorded until one succeeds"
        )
    if status.unsafe_test_timings:
        out.append(UNSAFE_LINE)
    if snapshot.hold is not None:
        hold = snapshot.hold
        why = f" ({hold.cause})" if hold.cause else ""
        out.append(
            f"on hold: held by {hold.held_by} since {short_time(hold.held_at)}{why}, generation "
            f"{hold.generation}; nothing is dispatched or posted until `bin/connect release`"
        )
    out += _feed_lines(snapshot.feed)
    out.append(outbox_line(snapshot))
    out.append(records_line(queues))
    blocked = blocked_by_reason(snapshot)
    if blocked:
        by_reason = " · ".join(f"{reason or '-'} {count}" for reason, count in blocked.items())
        out.append(f"blocked by reason: {by_reason}")
    if snapshot.live_tasks:
        out.append(f"live tasks ({len(snapshot.live_tasks)}):")
        for task in snapshot.live_tasks:
            out.append(_live_task_line(task))
            if left_mid_launch(task):
                out.append(f"    NEEDS A PERSON: {settle_launch_check(task)}")
    if snapshot.waiting:
        out.append(f"lifecycle messages waiting for a person ({len(snapshot.waiting)}):")
        out += [_waiting_line(intent) for intent in snapshot.waiting]
        out.append(f"  decide with: bin/outbox-resolve --ledger {status.ledger_path} show ID")
    if snapshot.held:
        out.append(f"held records ({len(snapshot.held)}):")
        out += [
            f"  event {record.event_id} {record.event_type or '-'} ({record.trigger or 'no trigger'})"
            f" {record.recording_url or ''}".rstrip()
            for record in snapshot.held
        ]
    if snapshot.not_running:
        out.append(f"records not yet running, oldest first ({len(snapshot.not_running)} shown):")
        held = snapshot.hold is not None
        out += [not_running_line(record, held) for record in snapshot.not_running]
        out.append(not_running_advice(snapshot.not_running, held))
    if snapshot.dispatches:
        out.append(f"last {len(snapshot.dispatches)} dispatches, newest first:")
        out += [_dispatch_line(dispatch) for dispatch in snapshot.dispatches]
    else:
        out.append("dispatches: none yet")
    return out
