"""The guard judged by what it did, not by what its row says of it.

``a-guard-is-never-sent-before-its-delay``: no guard's request starts before its verdict (the
intent's creation) plus the configured delay (``Timings.guard_delay``), whatever its row says is
due (``rules``' ``a-guard-waits-its-delay`` judges the due time written).

``a-fired-guard-stays-called-for``: a guard whose claim marked its event's task rows ``fired`` told
those rows' worker it is, or will be, in Basecamp; it is never canceled as no longer called for
while its record stands (not discarded; ``core.message_kinds.guard_claim``).

``task-rows-agree-with-their-guard``: a row reads ``fired`` only beside a guard pending, sending,
sent or indeterminate (or whose record was discarded); ``refused`` only beside one canceled
(Basecamp refused it, or a day of never reaching it, or a person's resend the worker answers for)
or resent and not yet claimed; ``abandoned`` only beside one a person abandoned.
"""

from __future__ import annotations

import sqlite3
from datetime import timedelta
from typing import TYPE_CHECKING

from core import notes
from core.configuration import Timings
from core.timestamps import parse_timestamp

if TYPE_CHECKING:
    from tests.sim.whole.run import Run

SENT_WHEN_DUE = "a-guard-is-never-sent-before-its-delay"
HELD_TRUE = "a-fired-guard-stays-called-for"
ROWS_AGREE = "task-rows-agree-with-their-guard"
CHECKS = (SENT_WHEN_DUE, HELD_TRUE, ROWS_AGREE)

_TOLERANCE = timedelta(milliseconds=1)
_TOLD = ("fired", "refused", "abandoned")  # a row its guard's claim told of the guard
_BESIDE = {  # the guard intent's states each told row may read beside
    "fired": frozenset({"pending", "sending", "sent", "indeterminate"}),
    "refused": frozenset({"canceled", "pending"}),
    "abandoned": frozenset({"abandoned"}),
}
_GUARDS = (
    "SELECT o.id, o.state, o.note, o.event_id, e.state, group_concat(DISTINCT t.guard) FROM outbox o"
    " LEFT JOIN events e ON e.id = o.event_id JOIN task_events t ON t.event_id = o.event_id"
    f" AND t.guard IN {_TOLD} WHERE o.kind = 'guard_ack' GROUP BY o.id ORDER BY o.id"
)


def _found(run: Run, check: str, detail: str) -> None:
    run.truth.violations.append((check, detail))


def requested(run: Run, connection: sqlite3.Connection, intent_id: int) -> None:
    """At a guard's request (``checks.request_starts``): its verdict's delay has passed."""
    (created_at,) = connection.execute("SELECT created_at FROM outbox WHERE id = ?", (intent_id,)).fetchone()
    due = parse_timestamp(created_at) + Timings().guard_delay
    early = due - run.clock.now()
    if early > _TOLERANCE:
        _found(run, SENT_WHEN_DUE, f"guard intent {intent_id} requested {early.total_seconds():g} s before its delay passed")
    run.cover("guard: sent once its delay passed")


def judge(run: Run) -> None:
    """After a step that moved an intent or a guard: each guard whose claim told its rows of it."""
    with run.connector.ledger.read() as connection:
        guards = connection.execute(_GUARDS).fetchall()
    for identifier, state, note, event_id, record, marks in guards:
        standing = record is not None and record != "discarded"
        told = set(marks.split(","))
        if state == "canceled" and note == notes.NO_LONGER_CALLED_FOR and "fired" in told and standing:
            _found(run, HELD_TRUE, f"guard intent {identifier} canceled as no longer called for, its claim having"
                   f" told event {event_id}'s rows it fired, while the record stands ({record})")
            continue
        for mark in sorted(told):
            if state not in _BESIDE[mark] and (mark != "fired" or standing):
                _found(run, ROWS_AGREE, f"event {event_id}'s task rows read {mark} beside guard intent {identifier},"
                       f" which is {state} ({note or 'no note'})")
        if "refused" in told or "abandoned" in told:
            run.cover(f"guard: told rows say it never went out ({state})")
