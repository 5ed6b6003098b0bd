"""A person's resolution of an outbox intent, written to the ledger.

One decision is one short ``BEGIN IMMEDIATE``: read the intent, ask ``core.resolution.resolve``,
write that ``Move`` by compare-and-set on the state and note read, check the row count; a running
connector waits milliseconds. A receipt belongs to one intent (a unique index per message kind), so
the database judges a receipt another holds. Every refusal is one line naming the intent, its state
and why, and writes nothing; the log line never names the body. A worker's words marked sent get the
receipt on their task row too, as the outbox records one that lands; a worker's reply resent has
its ended attempt's completion notice read again (``shell.ledger.tasks``)."""

from __future__ import annotations

import logging
import sqlite3
from dataclasses import dataclass
from datetime import datetime

from returns.result import Failure, Success

from core import notes
from core.edges import Actor, GuardState, IntentState
from core.intent_kinds import IntentKind
from core.resolution import Abandon, Move, RefusedDecision, Resend, Resolution, Sent, open_decisions, resolve
from shell.errors import EXIT_NOT_FOUND, EXIT_REFUSED, UserError
from shell.ledger import deliveries, tasks
from shell.ledger import outbox as rows
from shell.ledger.connection import Ledger
from shell.log_format import ids

log = logging.getLogger("connector.resolution")

_NEEDS = {
    "sent": "only an indeterminate intent can be marked sent",
    "abandon": "only an indeterminate intent can be abandoned",
    "resend": "only an indeterminate intent, or a canceled one whose request Basecamp refused, can be resent",
}
_DECISION_NAMES = {Sent: "sent", Abandon: "abandon", Resend: "resend"}


class NoSuchIntent(UserError):
    exit_code = EXIT_NOT_FOUND


class ResolutionRefused(UserError):
    """The decision is not one a person may make about this intent now."""

    exit_code = EXIT_REFUSED


class ReceiptOwned(ResolutionRefused):
    """The receipt is already another intent's."""


@dataclass(frozen=True, slots=True)
class Resolved:
    before: IntentState
    before_note: str
    after: rows.IntentRow


def is_refused(state: IntentState, note: str) -> bool:
    """A canceled intent whose request Basecamp refused: nothing was created."""
    return state is IntentState.canceled and notes.resendable(note)


def waits_for_person(state: IntentState, note: str) -> bool:
    """An intent only a person's decision moves on: indeterminate, or refused."""
    return state is IntentState.indeterminate or is_refused(state, note)


def describe_state(state: IntentState, note: str) -> str:
    """An intent's state as a refusal names it, with what it means for a person."""
    match state:
        case IntentState.canceled if notes.resendable(note):
            if note != notes.REFUSED_NOTE:
                return f"canceled: it never reached Basecamp ({note}; no message exists)"
            return "canceled because Basecamp refused its request (no message exists)"
        case IntentState.canceled:
            return f"canceled ({note or 'no note'})"
        case IntentState.pending:
            return "pending (the connector has not asked Basecamp for it yet)"
        case IntentState.sending:
            return "sending (the connector is still finding out whether it landed)"
        case _:
            return str(state)


def refusal_line(row: rows.IntentRow, resolution: Resolution, refused: RefusedDecision, now: datetime) -> str:
    """Why ``resolution`` of the intent ``row`` is refused: a refusal because of the intent's state
    names the state and what the decision needs; any other (who decided, the receipt) is core's words."""
    decision = _DECISION_NAMES[type(resolution)]
    if decision not in open_decisions(row.state, row.note):
        return f"intent {row.id} is {describe_state(row.state, row.note)}; {_NEEDS[decision]}"
    return f"intent {row.id}: {refused}"


def resolve_intent(ledger: Ledger, intent_id: int, resolution: Resolution) -> Resolved:
    with ledger.write() as connection:
        row = rows.intent(connection, intent_id)
        if row is None:
            raise NoSuchIntent(f"no intent {intent_id} in this ledger; `list --all` shows every intent")
        now = ledger.clock.now()
        match resolve(row.state, row.note, resolution, now):
            case Failure(refused):
                raise ResolutionRefused(refusal_line(row, resolution, refused, now))
            case Success(move):
                apply_move(connection, row, move, now)
        after = rows.intent(connection, intent_id)
    assert after is not None
    receipt = "" if after.receipt_id is None else f" receipt {after.receipt_id}"
    log.info("intent %d %s -> %s by %s%s", intent_id, row.state, after.state, after.resolved_by, receipt,
             extra=ids(intent=intent_id, kind=row.kind, event_id=row.event_id))
    return Resolved(before=row.state, before_note=row.note, after=after)


def apply_move(connection: sqlite3.Connection, row: rows.IntentRow, move: Move, now: datetime) -> None:
    """Write ``move`` onto ``row`` by compare-and-set on the state and note it was decided from;
    raises (and the caller rolls back) when the row moved, a receipt is owned, or a trigger refuses."""
    try:
        moved = rows.resolve(connection, row, move)
    except sqlite3.IntegrityError as error:
        if error.sqlite_errorname == "SQLITE_CONSTRAINT_UNIQUE" and move.receipt_id is not None:
            raise ReceiptOwned(_owned_line(connection, row, move.receipt_id)) from error
        raise ResolutionRefused(
            f"the ledger refused to move intent {row.id} from {row.state} to {move.state}: {error}"
        ) from error
    if moved != 1:
        raise ResolutionRefused(
            f"intent {row.id} changed while it was being resolved (it is no longer {row.state}); "
            "nothing was written: look at it again with `show`"
        )
    if move.receipt_id is not None:  # a worker's words found: the event's ack_id or reply_id too
        deliveries.record_worker_message(connection, row.kind, row.task_id, row.event_id, move.receipt_id)
    if move.state is IntentState.abandoned and row.kind is IntentKind.guard_ack and row.event_id is not None:
        deliveries.guard_never_went_out(connection, row.event_id, GuardState.abandoned, Actor.person)
    if move.state is IntentState.pending and row.kind is IntentKind.worker_reply and row.task_id is not None:
        tasks.read_completion_again(connection, row.task_id, now)


def _owned_line(connection: sqlite3.Connection, row: rows.IntentRow, receipt_id: int) -> str:
    kind = row.destination.kind
    sql = "SELECT id FROM outbox WHERE message_kind = ? AND receipt_id = ? AND id <> ?"
    found = connection.execute(sql, (str(kind), receipt_id, row.id)).fetchone()
    owner = "another intent" if found is None else f"intent {found[0]}"
    return (
        f"receipt {receipt_id} already belongs to {owner} (a {kind} id is one intent's receipt); "
        f"intent {row.id} was not changed: check the id you found in Basecamp"
    )
