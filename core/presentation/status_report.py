"""What ``bin/connect status`` shows: one snapshot of values in (``status_values``), the JSON
report (``report``) and the lines a person reads (``lines``) out.

The report's keys, stable, times the ledger's text: summary, account_id, agent_id, state_dir,
ledger, lock_file, running, unsafe_test_timings, worker_allowed, disk, write_failure,
token_outage, hold, feed, queues, blocked, live_tasks, waiting_for_person, dispatches, held,
outbox, not_running.

Nothing shown is secret. Whether a connector runs is the lock file's metadata, marked diagnostic
(the kernel's flock is the truth, and status never takes it). The text starts with one summary
line that carries what needs attention. Counts name every state, zero included, in the
lifecycle's order. Advice names only decisions the rules accept (``core.decisions``): a blocked
record takes a redispatch or a discard, one waiting to run only a discard.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from core.posting import TokenOutage
from core.presentation import byte_size, short_time
from core.presentation import status_values as values
from core.snapshots import WorkerResult
from core.states import GuardState, IntentState, RecordState

REFUSED = "refused"  # the state a refused intent (canceled with ``REFUSED_NOTE``) is reported in
POSTABLE = (IntentState.pending, IntentState.sending)
UNSAFE_LINE = ("UNSAFE TEST TIMINGS: the timing floors are lifted (setup --unsafe-test-timings); for a demo "
               "or a test only: a sending message may be listed before it could land")


def queue_depths(snapshot: values.LedgerSnapshot) -> dict[str, int]:
    counts = dict(snapshot.state_counts)
    return {str(state): counts.get(str(state), 0) for state in RecordState}


def blocked_by_reason(snapshot: values.LedgerSnapshot) -> dict[str, int]:
    return dict(sorted(snapshot.blocked))


def outbox_states(snapshot: values.LedgerSnapshot) -> dict[str, int]:
    counts = {str(state): 0 for state in IntentState}
    for state, _, count in snapshot.outbox:
        counts[state] = counts.get(state, 0) + count
    return counts


def waiting_to_post(snapshot: values.LedgerSnapshot) -> dict[str, int]:
    found: dict[str, int] = {}
    for state, kind, count in snapshot.outbox:
        if state in POSTABLE:
            found[kind] = found.get(kind, 0) + count
    return dict(sorted(found.items()))


def running(lock_file: values.LockFile | None) -> str:
    """What the lock file's metadata suggests: "yes", "no" or "unknown"."""
    if lock_file is None:
        return "no"
    said = {values.PidStatus.present: "yes", values.PidStatus.absent: "no"}
    return said.get(lock_file.pid_status, "unknown")


def _running_phrase(lock_file: values.LockFile | None) -> str:
    if lock_file is None:
        return "not running (no lock file)"
    words = {"yes": "running", "no": "not running", "unknown": "perhaps running"}[running(lock_file)]
    return f"{words} (lock file: pid {lock_file.pid}, {lock_file.pid_status})"


def plural(count: int, one: str, many: str | None = None) -> str:
    return f"{count} {one if count == 1 else (many or one + 's')}"


def waiting_state(intent: values.WaitingIntent) -> str:
    return REFUSED if intent.refused else str(intent.state)


def left_mid_launch(task: values.LiveTask) -> bool:
    """Recovery found this task's attempt launching with no recorded process."""
    return task.attempt is not None and task.attempt.left_at is not None


def settle_launch_check(task: values.LiveTask) -> str:
    """What a person checks before settling an attempt left mid-launch, and how."""
    event = task.event_ids[0] if task.event_ids else 0
    return (f"a connector stopped between launching task {task.task_id} and recording its worker: check "
            "whether a worker ran for it (a process of the worker program in the project's directory, "
            "a reply or a change it made on the recording), then settle it with "
            f"`bin/connect settle-launch {event} --ran` or `--did-not-run`")


def decisions(record: values.WaitingRecord) -> list[str]:
    return ["redispatch", "discard"] if record.state == RecordState.blocked else ["discard"]


def waits_for(record: values.WaitingRecord, held: bool) -> str:
    """What the record waits for: ``admission`` (a retry), ``person``, ``hold`` or ``worker``."""
    if record.state == RecordState.blocked:
        return "admission" if record.next_retry_at else "person"
    return "hold" if held else "worker"


def summary(status: values.Status) -> str:
    """The one line a person reads first."""
    snapshot = status.ledger
    indeterminate = sum(1 for intent in snapshot.waiting if not intent.refused)
    refused = sum(1 for intent in snapshot.waiting if intent.refused)
    blocked = queue_depths(snapshot)[RecordState.blocked]
    parts = [_running_phrase(status.lock_file), plural(len(snapshot.live_tasks), "live task"),
             plural(indeterminate, "indeterminate message"), f"{blocked} blocked"]
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


def report(status: values.Status) -> dict[str, Any]:
    """The JSON report; its keys are named in this module's docstring."""
    snapshot = status.ledger
    held = snapshot.hold is not None
    return {
        "summary": summary(status), "account_id": status.account_id, "agent_id": status.agent_id,
        "state_dir": status.state_dir, "ledger": status.ledger_path,
        "lock_file": _lock_file(status.lock_file), "running": running(status.lock_file),
        "unsafe_test_timings": status.unsafe_test_timings, "worker_allowed": list(status.worker_allowed),
        **_alarms(status), "hold": _hold(snapshot.hold),
        "feed": [{"has_position": checkpoint.has_position, "last_served_id": checkpoint.last_served_id,
                  "updated_at": checkpoint.updated_at} for checkpoint in snapshot.feed],
        "queues": queue_depths(snapshot), "blocked": blocked_by_reason(snapshot),
        "live_tasks": [_live_task(task) for task in snapshot.live_tasks],
        "waiting_for_person": [_waiting(intent) for intent in snapshot.waiting],
        "dispatches": [_dispatch(dispatch) for dispatch in snapshot.dispatches],
        "held": [{"event_id": record.event_id, "event_type": record.event_type, "trigger": record.trigger,
                  "recording_url": record.recording_url} for record in snapshot.held],
        "outbox": _outbox(snapshot),
        "not_running": [_not_running(record, held) for record in snapshot.not_running],
    }


def _lock_file(lock_file: values.LockFile | None) -> dict[str, Any]:
    return {"diagnostic": True, "found": lock_file is not None,
            "pid": None if lock_file is None else lock_file.pid,
            "started_at": None if lock_file is None else lock_file.started_at,
            "pid_status": None if lock_file is None else str(lock_file.pid_status),
            "configuration_problem": (lock_file.configuration_problem or None) if lock_file else None}


def _alarms(status: values.Status) -> dict[str, Any]:
    disk, fault, outage = status.disk, status.write_failure, status.ledger.token_outage
    return {
        "disk": None if disk is None else
        {"free_bytes": disk.free_bytes, "total_bytes": disk.total_bytes, "low": disk.low},
        "write_failure": None if fault is None else {"at": fault.at, "why": fault.why, "pid": fault.pid},
        "token_outage": None if outage is None else
        {"since": outage.since, "messages_waiting": outage.messages},
    }


def _hold(hold: values.Hold | None) -> dict[str, Any] | None:
    if hold is None:
        return None
    return {"held_by": hold.held_by, "held_at": hold.held_at, "cause": hold.cause,
            "generation": hold.generation}


def _live_task(task: values.LiveTask) -> dict[str, Any]:
    attempt = task.attempt
    return {
        "task_id": task.task_id, "state": "superseded" if task.superseded else "live",
        "conversation": task.conversation, "created_at": task.created_at, "deadline_at": task.deadline_at,
        "attempt": None if attempt is None else {
            "attempt_id": attempt.attempt_id, "state": str(attempt.state), "pid": attempt.pid,
            "launched_at": attempt.launched_at,
            "needs_person": {"left_at": attempt.left_at, "check": settle_launch_check(task)}
            if left_mid_launch(task) else None,
        },
        "event_ids": list(task.event_ids),
    }


def _waiting(intent: values.WaitingIntent) -> dict[str, Any]:
    return {"intent_id": intent.intent_id, "kind": intent.kind, "state": waiting_state(intent),
            "event_id": intent.event_id, "attempt_id": intent.attempt_id, "message_kind": intent.message_kind,
            "bucket_id": intent.bucket_id, "recording_id": intent.recording_id, "note": intent.note}


def worker_result(result: WorkerResult | None) -> dict[str, Any] | None:
    if result is None:
        return None
    return {"is_error": result.is_error, "error": result.error, "turns": result.turns,
            "cost_usd": result.cost_usd, "duration_ms": result.duration_ms,
            "denied_tools": list(result.denials)}


def _dispatch(dispatch: values.Dispatch) -> dict[str, Any]:
    return {
        "attempt_id": dispatch.attempt_id, "task_id": dispatch.task_id, "seq": dispatch.seq,
        "state": str(dispatch.state), "stop_reason": dispatch.stop_reason or None,
        "spawn_failed": dispatch.spawn_failed, "not_started": dispatch.not_started,
        "ended_because": dispatch.ended_because,
        "worker_result": worker_result(dispatch.result), "words_refused": dispatch.words_refused or None,
        "launched_at": dispatch.launched_at, "ended_at": dispatch.ended_at,
        "events": [{"event_id": event.event_id, "delivery": event.delivery, "outcome": event.outcome or None,
                    "withdrawn": event.withdrawn, "record_state": event.record_state,
                    "ack_id": event.ack_id, "reply_id": event.reply_id,
                    **({"guard": event.guard} if event.guard in UNSENT_GUARD else {})}
                   for event in dispatch.events],
    }


def _outbox(snapshot: values.LedgerSnapshot) -> dict[str, Any]:
    states = outbox_states(snapshot)
    return {"states": states, "waiting_to_post": waiting_to_post(snapshot),
            "held_back_by_hold": states[IntentState.pending] if snapshot.hold is not None else 0}


def _not_running(record: values.WaitingRecord, held: bool) -> dict[str, Any]:
    return {"event_id": record.event_id, "state": record.state, "reason": record.reason or None,
            "event_type": record.event_type, "next_retry_at": record.next_retry_at,
            "waits_for": waits_for(record, held), "decisions": decisions(record)}


def lines(status: values.Status) -> list[str]:
    """The text a person reads, the summary first and then each part."""
    snapshot = status.ledger
    where = f"account {status.account_id}, agent {status.agent_id}; state {status.state_dir}"
    out = [summary(status), "", where, *_lock_lines(status.lock_file), *_disk_lines(status.disk),
           *_alarm_lines(status), *_feed_lines(snapshot.feed), outbox_line(snapshot),
           records_line(queue_depths(snapshot))]
    blocked = blocked_by_reason(snapshot)
    if blocked:
        by_reason = " · ".join(f"{reason or '-'} {count}" for reason, count in blocked.items())
        out.append(f"blocked by reason: {by_reason}")
    out += _waiting_lines(status)
    if snapshot.dispatches:
        out.append(f"last {len(snapshot.dispatches)} dispatches, newest first:")
        out += [_dispatch_line(dispatch) for dispatch in snapshot.dispatches]
    else:
        out.append("dispatches: none yet")
    return out


def _lock_lines(lock_file: values.LockFile | None) -> list[str]:
    if lock_file is None:
        return ["lock file: none (no connector has said it holds the lock; diagnostic only)"]
    meaning = {
        values.PidStatus.present: "that process is present",
        values.PidStatus.absent: "that process is gone (a connector that died leaves its lock file behind)",
        values.PidStatus.unknown: "cannot tell whether that process is present (another user's)",
    }[lock_file.pid_status]
    problem = lock_file.configuration_problem
    return [
        f"lock file: pid {lock_file.pid}, started {short_time(lock_file.started_at)}; {meaning}",
        "  diagnostic only: status takes no lock, and the kernel's lock, not this file, is the truth",
        *([f"  configuration: {problem}: it authorizes nothing until it is usable again"] if problem else []),
    ]


def _disk_lines(disk: values.Disk | None) -> list[str]:
    if disk is None:
        return ["disk: could not be measured"]
    line = f"disk: {byte_size(disk.free_bytes)} free of {byte_size(disk.total_bytes)} where the ledger lives"
    if disk.low:
        line += "; nearly full: the connector cannot record what it reads or sends, free some space"
    return [line]


def _alarm_lines(status: values.Status) -> list[str]:
    """What stands in the way, or beside the defaults: failing writes, a refused token, lifted
    timing floors, what the worker was allowed, a hold."""
    snapshot = status.ledger
    out = []
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
        out.append(f"on hold: held by {hold.held_by} since {short_time(hold.held_at)}{why}, generation "
                   f"{hold.generation}; nothing is dispatched or posted until `bin/connect release`")
    return out


def token_outage_line(outage: TokenOutage) -> str:
    return ("token: failing -- Basecamp refused it (401, after the refresh) on a create at"
            f" {short_time(outage.since)}; sending has stopped, {plural(outage.messages, 'message')}"
            " waiting, pending; it resumes by itself once a token works (bin/connect login for the agent)")


def _feed_lines(feed: Sequence[values.FeedCheckpoint]) -> list[str]:
    if not feed:
        return ["feed: never read (no checkpoint yet)"]
    kept = {True: "position kept", False: "no position (resumes after the last served event)"}
    return [f"feed: {kept[checkpoint.has_position]}; last served event {checkpoint.last_served_id}; "
            f"updated {short_time(checkpoint.updated_at)}" for checkpoint in feed]


def outbox_line(snapshot: values.LedgerSnapshot) -> str:
    states = outbox_states(snapshot)
    kinds = waiting_to_post(snapshot)
    by_kind = f" ({', '.join(f'{kind} {count}' for kind, count in kinds.items())})" if kinds else ""
    line = "lifecycle messages: " + " · ".join(f"{state} {count}" for state, count in states.items())
    line += f"; waiting to be posted{by_kind}: {sum(kinds.values())}"
    pending = states[IntentState.pending]
    if snapshot.hold is not None and pending:
        line += f"; the hold keeps the {pending} pending back until `bin/connect release`"
    return line


def records_line(queues: dict[str, int]) -> str:
    """The record states, ``seen`` explained so that "seen 0" is not read as "nothing seen"."""
    shown = " · ".join(f"{state} {count}" for state, count in queues.items())
    return f"records: {shown} (seen: read from the feed, no verdict yet)"


def _waiting_lines(status: values.Status) -> list[str]:
    """What waits: the live tasks, the intents and records a person decides, what has not run."""
    snapshot = status.ledger
    out = []
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
        out += [f"  event {record.event_id} {record.event_type or '-'} ({record.trigger or 'no trigger'})"
                f" {record.recording_url or ''}".rstrip() for record in snapshot.held]
    if snapshot.not_running:
        out.append(f"records not yet running, oldest first ({len(snapshot.not_running)} shown):")
        held = snapshot.hold is not None
        out += [not_running_line(record, held) for record in snapshot.not_running]
        out.append(not_running_advice(snapshot.not_running, held))
    return out


def _live_task_line(task: values.LiveTask) -> str:
    attempt = task.attempt
    if attempt is None:
        worker = "no attempt"
    else:
        pid = f", pid {attempt.pid}" if attempt.pid is not None else ""
        launched = short_time(attempt.launched_at)
        worker = f"attempt {attempt.attempt_id} {attempt.state}{pid}, launched {launched}"
    superseded = " (superseded)" if task.superseded else ""
    events = ", ".join(str(event_id) for event_id in task.event_ids) or "none"
    return (f"  task {task.task_id}{superseded} on {task.conversation or '-'}: {worker}; "
            f"deadline {short_time(task.deadline_at)}; events {events}")


def _waiting_line(intent: values.WaitingIntent) -> str:
    where = f"{'campfire' if intent.message_kind == 'chat_line' else 'recording'} {intent.recording_id}"
    event = f", event {intent.event_id}" if intent.event_id is not None else ""
    note = f" ({intent.note})" if intent.note else ""
    return (f"  intent {intent.intent_id}: {intent.kind} {waiting_state(intent)}{event}, "
            f"a {intent.message_kind} on {where} in project {intent.bucket_id}{note}")


def not_running_line(record: values.WaitingRecord, held: bool) -> str:
    if record.state == RecordState.blocked:
        retry = (f"; admission tries again at {short_time(record.next_retry_at)}" if record.next_retry_at
                 else "; nothing retries it: a person's redispatch or discard")
        reason = record.reason or "no reason"
        return f"  event {record.event_id} blocked ({reason}) {record.event_type}{retry}"
    if held:
        return (f"  event {record.event_id} {record.state} {record.event_type}: held still by the hold; "
                "it runs once `bin/connect release` lifts it")
    return (f"  event {record.event_id} {record.state} {record.event_type}: waiting for a worker slot, "
            "or for its conversation or project directory to be free")


def not_running_advice(records: tuple[values.WaitingRecord, ...], held: bool) -> str:
    blocked = any(record.state == RecordState.blocked for record in records)
    waiting = any(record.state != RecordState.blocked for record in records)
    parts = []
    if blocked:
        parts.append("a blocked one: bin/connect redispatch EVENT_ID (admission tries it again), or discard")
    if waiting:
        runs = "once the hold is released" if held else "on its own"
        parts.append(f"one waiting to run: bin/connect discard EVENT_ID to close it (else it runs {runs})")
    return "  decide with: " + "; ".join(parts)


def _dispatch_line(dispatch: values.Dispatch) -> str:
    how = f"ended {dispatch.stop_reason}" if dispatch.stop_reason else str(dispatch.state)
    events = "; ".join(_event_phrase(event) for event in dispatch.events) or "no events"
    return (f"  {short_time(dispatch.launched_at)}  task {dispatch.task_id}  {dispatch.attempt_id}  "
            f"{how}: {events}{_worker_phrase(dispatch)}")


def _event_phrase(event: values.DispatchedEvent) -> str:
    return _delivery_phrase(event) + UNSENT_GUARD.get(event.guard, "")


UNSENT_GUARD: dict[str, str] = {  # a row whose guard was claimed, or abandoned, and is not in Basecamp
    GuardState.refused: " (its guard boost was refused: it never went out)",
    GuardState.abandoned: " (its guard boost was abandoned by a person)",
}


def _delivery_phrase(event: values.DispatchedEvent) -> str:
    if event.withdrawn:
        return f"event {event.event_id} withdrawn (the worker could not be started), now {event.record_state}"
    if event.outcome:
        return f"event {event.event_id} {event.outcome}"
    return f"event {event.event_id} no outcome yet ({event.delivery})"


def _worker_phrase(dispatch: values.Dispatch) -> str:
    """What the worker said of its own end, in a few words."""
    said = f"; never began its work: {dispatch.not_started}" if dispatch.not_started else ""
    said += f"; {dispatch.ended_because}" if dispatch.ended_because else ""
    if dispatch.result is not None:
        said += f" ({result_words(dispatch.result)})"
    if dispatch.words_refused:
        said += f"; words refused: {dispatch.words_refused}"
    return said


def result_words(result: WorkerResult) -> str:
    error = f"error {result.error!r}, " if result.is_error else ""
    denied = f", refused {', '.join(result.denials)}" if result.denials else ""
    seconds = result.duration_ms / 1000
    return f"its result: {error}{result.turns} turns, ${result.cost_usd:.4f}, {seconds:.1f} s{denied}"
