"""What a worker's dispatch call answers when it does not serve: refusals, and the fixed words.

Rule 6 of ``core.dispatch_tools``: every refusal is a ``ToolRefusal`` whose kind and message a
worker may read. Anything else that goes wrong is the ledger's fault, not the worker's: it is
answered with ``LEDGER_FAILURE`` and its detail stays out of the model's transcript.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum

NOTHING_WAITING = "Nothing on this task is waiting to be acknowledged."
LEDGER_FAILURE = "the connector ledger could not answer; try again, and report it if it persists"
HELD = "the connector is held: no instruction is handed to a worker until it is released"


class RefusalKind(StrEnum):
    """The refusals a worker's dispatch call can meet, by what they mean to the worker."""

    task_token_refused = "task_token_refused"  # noqa: S105 - a refusal kind, not a secret
    not_on_task = "not_on_task"
    not_exposed = "not_exposed"
    report_conflict = "report_conflict"
    not_dispatchable = "not_dispatchable"
    invalid_report = "invalid_report"
    invalid_arguments = "invalid_arguments"
    invalid_message = "invalid_message"


MESSAGES: Mapping[RefusalKind, str] = {
    RefusalKind.task_token_refused: "the task token names no current task",
    RefusalKind.not_on_task: "the event is not on this task",
    RefusalKind.not_exposed: "the event was not handed to this worker; call get_dispatch for it first",
    RefusalKind.report_conflict: "the event already has a different report; a reported outcome stands",
    RefusalKind.not_dispatchable: "the event can no longer be dispatched",
    RefusalKind.invalid_report: "the report is not valid",
    RefusalKind.invalid_arguments: "the arguments are not valid",
    RefusalKind.invalid_message: "the message cannot be posted as written",
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
