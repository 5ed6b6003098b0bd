"""The lines ``bin/connect status`` prints: the summary first, then each part, under the rules
of core.presentation.status_report. Pure."""

from __future__ import annotations

from collections.abc import Sequence

from core.posting import TokenOutage
from core.presentation.formats import byte_size, short_time
from core.presentation.status_report import (
    blocked_by_reason,
    left_mid_launch,
    plural,
    queue_depths,
    settle_launch_check,
    summary,
    waiting_state,
)
from core.presentation.status_values import (
    Disk,
    Dispatch,
    DispatchedEvent,
    FeedCheckpoint,
    LiveTask,
    LockFile,
    PidStatus,
    Status,
    WaitingIntent,
)
from core.presentation.status_waiting import (
    not_running_advice,
    not_running_line,
    outbox_line,
    records_line,
)


def token_outage_line(outage: TokenOutage) -> str:
    """Rule 9 of core.presentation.status_report: the token line; doctor's token check says the same."""
    return (
        "token: failing -- Basecamp refused it (401, after the refresh) on a create at"
        f" {short_time(outage.since)}; sending has stopped, {plural(outage.messages, 'message')}"
        " waiting, pending; it resumes by itself once a token works (bin/connect login for the agent)"
    )


def _worker_phrase(dispatch: Dispatch) -> str:
    """What the worker said of its own end, in a few words."""
    said = f"; never began its work: {dispatch.not_started}" if dispatch.not_started else ""
    result = dispatch.result
    if result is not None:
        error = f"error {result.error!r}, " if result.is_error else ""
        denied = f", refused {', '.join(result.denials)}" if result.denials else ""
        said += (
            f" (its result: {error}{result.turns} turns, ${result.cost_usd:.4f}, "
            f"{result.duration_ms / 1000:.1f} s{denied})"
        )
    return said


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
        f"{how}: {events}{_worker_phrase(dispatch)}"
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
        f"  intent {intent.intent_id}: {intent.kind} {waiting_state(intent)}{event}, "
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
    """The text a person reads, the summary first and then each part:
    rule 6 of core.presentation.status_report."""
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
    if snapshot.token_outage is not None:
        out.append(token_outage_line(snapshot.token_outage))
    if status.unsafe_test_timings:
        out.append(UNSAFE_LINE)
    if status.worker_allowed:
        out.append(f"worker allowed beyond its defaults: {'; '.join(status.worker_allowed)}")
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
