"""What a person may decide about an outbox intent the connector will not decide alone.

A resolution records who decided (``by``: required, not blank, one line). An indeterminate intent
may be resolved ``Sent`` (a person found its message; the note says whether its receipt was
checked), ``Abandon`` or ``Resend``; a canceled one may only be resent, and only when its note
proves nothing was created. Nothing else may be resolved: pending or sending is the connector's,
sent, abandoned or otherwise canceled is settled, and the refusal names the state. The moves are
the person's edges of ``core.edges.INTENT_EDGES``: what that table refuses is refused, and
``open_decisions`` names exactly the decisions left open, as a person types them.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from returns.result import Failure, Result, Success

from core import notes
from core.edges import Actor, IntentState, step


@dataclass(frozen=True, slots=True)
class Sent:
    receipt_id: int
    by: str
    checked: bool = False


@dataclass(frozen=True, slots=True)
class Abandon:
    by: str


@dataclass(frozen=True, slots=True)
class Resend:
    by: str


Resolution = Sent | Abandon | Resend

DECISIONS = ("sent", "abandon", "resend")

_MOVES_TO = {"sent": IntentState.sent, "abandon": IntentState.abandoned, "resend": IntentState.pending}


@dataclass(frozen=True, slots=True)
class Move:
    """One compare-and-set from the current state. ``reset_reconciliation`` (a resend): clear
    ``sending_at``, ``finished_at``, ``reconcile_failures`` and ``reconcile_at``; due at ``not_before``."""
    state: IntentState
    note: str
    resolved_by: str
    receipt_id: int | None = None
    finished_at: datetime | None = None
    reset_reconciliation: bool = False
    not_before: datetime | None = None


@dataclass(frozen=True, slots=True)
class RefusedDecision:
    reason: str

    def __str__(self) -> str:
        return self.reason


def _refused(reason: str) -> Result[Move, RefusedDecision]:
    return Failure(RefusedDecision(reason))


def resolve(
    state: IntentState, note: str, resolution: Resolution, now: datetime
) -> Result[Move, RefusedDecision]:
    by = resolution.by.strip()
    if not by:
        return _refused("a resolution records who decided: name the person deciding")
    if len(by.splitlines()) != 1:
        return _refused("who decided must be given on one line")
    match resolution:
        case Sent(receipt_id=receipt_id) if receipt_id <= 0:
            return _refused(f"resolving sent needs the id Basecamp gave the message, a positive number, "
                            f"not {receipt_id}")
        case Sent(receipt_id=receipt_id, checked=checked):
            written = notes.RESOLVED_SENT_CHECKED if checked else notes.RESOLVED_SENT_UNCHECKED
            move = Move(IntentState.sent, written, by, receipt_id=receipt_id, finished_at=now)
        case Abandon():
            move = Move(IntentState.abandoned, notes.RESOLVED_ABANDON, by, finished_at=now)
        case Resend():
            move = Move(IntentState.pending, notes.RESOLVED_RESEND, by,
                        reset_reconciliation=True, not_before=now)
    match state:
        case IntentState.indeterminate:
            pass
        case IntentState.canceled if notes.resendable(note):
            if not isinstance(resolution, Resend):
                return _refused("the intent is canceled because Basecamp refused its request, so no message "
                                f"exists: it can be resent, not marked {move.state}")
        case IntentState.canceled:
            return _refused(f"the intent is canceled ({note or 'no note'}), not refused by Basecamp: "
                            "nothing may resolve it")
        case _:
            return _refused(f"the intent is {state}: only an indeterminate intent, or a canceled one whose "
                            "request Basecamp refused, can be resolved")
    return step(state, move.state, Actor.person, note).map(lambda _: move).alt(
        lambda illegal: RefusedDecision(f"the intent is {state}: {illegal}")
    )


def open_decisions(state: IntentState, note: str) -> tuple[str, ...]:
    return tuple(decision for decision in DECISIONS if _open(state, note, decision))


def _open(state: IntentState, note: str, decision: str) -> bool:
    match state:
        case IntentState.indeterminate:
            allowed = True
        case IntentState.canceled if notes.resendable(note):
            allowed = decision == "resend"
        case _:
            allowed = False
    return allowed and isinstance(step(state, _MOVES_TO[decision], Actor.person, note), Success)
