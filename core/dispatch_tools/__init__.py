"""A worker's dispatch tools: the instruction it pulls, and what its four tools answer and write.

``get_dispatch``, ``ack_dispatch``, ``complete_dispatch`` and ``reply_dispatch`` are bound to the
one task the worker's token names: the shell opens one immediate transaction per call, re-checks
the token, reads the task's live rows and asks ``decisions`` what to answer and write. Serving
writes before anything leaves the call, and under a hold a first exposure or pull is refused. A
worker reports only on rows of its own task that it pulled; a repeat answers the same, a
different report is a ``report_conflict``, and a reported outcome stands. Its words are written
once, with the move they report; it gives words or an id, never both; words holding a credential
of the connector are refused (``holds_credential``) and nothing is written but the attempt's note.

This module holds what the server's start needs: the refusals a worker may read (anything else
is ``LEDGER_FAILURE``, its detail kept from the model) and the bounds the tools' schemas show.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from returns.result import Failure

BOOST_LIMIT = 16
MAX_ACK_CHARACTERS = 500
MAX_MESSAGE_CHARACTERS = 10_000
MAX_NOTES = 5
MAX_LINKS = 20
MAX_LINK_LENGTH = 2048
WORDS_STATES = ("posted", "waiting", "uncertain", "refused", "not_posted")

NOTHING_WAITING = "Nothing on this task is waiting to be acknowledged."
LEDGER_FAILURE = "the connector ledger could not answer; try again, and report it if it persists"
HELD = "the connector is held: no instruction is handed to a worker until it is released"


class RefusalKind(StrEnum):
    task_token_refused = "task_token_refused"  # noqa: S105 - a refusal kind, not a secret
    not_on_task = "not_on_task"
    not_exposed = "not_exposed"
    report_conflict = "report_conflict"
    not_dispatchable = "not_dispatchable"
    invalid_report = "invalid_report"
    invalid_arguments = "invalid_arguments"
    invalid_message = "invalid_message"
    holds_credential = "holds_credential"


MESSAGES = {
    RefusalKind.task_token_refused: "the task token names no current task",
    RefusalKind.not_on_task: "the event is not on this task",
    RefusalKind.not_exposed: "the event was not handed to this worker; call get_dispatch for it first",
    RefusalKind.report_conflict: "the event already has a different report; a reported outcome stands",
    RefusalKind.not_dispatchable: "the event can no longer be dispatched",
    RefusalKind.invalid_report: "the report is not valid",
    RefusalKind.invalid_arguments: "the arguments are not valid",
    RefusalKind.invalid_message: "the message cannot be posted as written",
    RefusalKind.holds_credential: "the text held a credential of the connector, so nothing was written: "
                                  "never put a token, a key or a secret in your words",
}


@dataclass(frozen=True, slots=True)
class ToolRefusal:
    """An answer, not a fault: ``kind`` for a program, ``message`` for the worker to read."""

    kind: RefusalKind
    message: str

    def to_json(self) -> dict[str, str]:
        return {"error": str(self.kind), "message": self.message}


def refuse(kind: RefusalKind, message: str | None = None) -> ToolRefusal:
    """The refusal of ``kind``, with its fixed message unless the worker has something to fix."""
    return ToolRefusal(kind, message if message is not None else MESSAGES[kind])


def refused(kind: RefusalKind, message: str | None = None) -> Failure[ToolRefusal]:
    return Failure(refuse(kind, message))
