"""What waits, in ``bin/connect status``: the outbox's counts, and each record not yet running
with what it waits for and the decisions the rules accept for it. Pure: values in, lines out.

Rules:
1. The outbox is counted by state, every ``IntentState`` zero included, and what waits to be
   posted (pending and sending) by kind: a guard acknowledgement waiting under a hold shows.
2. Under a hold nothing is posted and nothing launches: the outbox line says how many pending
   messages the hold keeps back, and a record waiting to run (admitted, queued) waits for the
   hold's ``release``, not for a worker slot.
3. Advice names only decisions the rules accept (``core.decisions``): a blocked record takes a
   redispatch or a discard; one waiting to run takes only a discard (a redispatch of it is
   refused: it runs on its own), and under a hold only once released.
4. The record states' line explains ``seen`` (read from the feed, no verdict yet), so "seen 0"
   is not read as "nothing seen".
"""

from __future__ import annotations

from typing import Any

from core.presentation.formats import short_time
from core.presentation.status_values import LedgerSnapshot, WaitingRecord
from core.states import IntentState, RecordState

POSTABLE = (IntentState.pending, IntentState.sending)


def outbox_states(snapshot: LedgerSnapshot) -> dict[str, int]:
    """Rule 1: every intent state's count, zero included."""
    counts = {str(state): 0 for state in IntentState}
    for state, _, count in snapshot.outbox:
        counts[state] = counts.get(state, 0) + count
    return counts


def waiting_to_post(snapshot: LedgerSnapshot) -> dict[str, int]:
    """Rule 1: pending and sending intents by kind, kinds sorted."""
    found: dict[str, int] = {}
    for state, kind, count in snapshot.outbox:
        if state in POSTABLE:
            found[kind] = found.get(kind, 0) + count
    return dict(sorted(found.items()))


def outbox_report(snapshot: LedgerSnapshot) -> dict[str, Any]:
    states = outbox_states(snapshot)
    return {
        "states": states,
        "waiting_to_post": waiting_to_post(snapshot),
        "held_back_by_hold": states[IntentState.pending] if snapshot.hold is not None else 0,
    }


def outbox_line(snapshot: LedgerSnapshot) -> str:
    """Rules 1 and 2."""
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
    """Rule 4."""
    shown = " · ".join(f"{state} {count}" for state, count in queues.items())
    return f"records: {shown} (seen: read from the feed, no verdict yet)"


def decisions(record: WaitingRecord) -> list[str]:
    """Rule 3: the decisions the rules accept for a record not yet running."""
    return ["redispatch", "discard"] if record.state == RecordState.blocked else ["discard"]


def waits_for(record: WaitingRecord, held: bool) -> str:
    """What the record waits for: ``admission`` (a retry), ``person``, ``hold`` or ``worker``."""
    if record.state == RecordState.blocked:
        return "admission" if record.next_retry_at else "person"
    return "hold" if held else "worker"


def not_running_line(record: WaitingRecord, held: bool) -> str:
    """One record not yet running, and what it waits for (rule 2)."""
    if record.state == RecordState.blocked:
        retry = (
            f"; admission tries again at {short_time(record.next_retry_at)}"
            if record.next_retry_at
            else "; nothing retries it: a person's redispatch or discard"
        )
        reason = record.reason or "no reason"
        return f"  event {record.event_id} blocked ({reason}) {record.event_type}{retry}"
    if held:
        return (
            f"  event {record.event_id} {record.state} {record.event_type}: held still by the hold; "
            "it runs once `bin/connect release` lifts it"
        )
    return (
        f"  event {record.event_id} {record.state} {record.event_type}: waiting for a worker slot, "
        "or for its conversation or project directory to be free"
    )


def not_running_advice(records: tuple[WaitingRecord, ...], held: bool) -> str:
    """Rule 3: only what the rules accept for the records shown."""
    blocked = any(record.state == RecordState.blocked for record in records)
    waiting = any(record.state != RecordState.blocked for record in records)
    parts = []
    if blocked:
        parts.append("a blocked one: bin/connect redispatch EVENT_ID (admission tries it again), or discard")
    if waiting:
        runs = "once the hold is released" if held else "on its own"
        parts.append(f"one waiting to run: bin/connect discard EVENT_ID to close it (else it runs {runs})")
    return "  decide with: " + "; ".join(parts)

