"""The ledger asks ``core.edges`` before it moves a row: the first wall; the triggers are the second.

Rules:
1. Every state the connector writes on its own (the sender, reconciliation, admission, the
   dispatcher) is the answer of ``asked``: the lifecycle table's ``step`` for the row's current
   state, the target and the actor. The SQL writes that answer, never a literal of its own.
2. A refused move raises ``MoveRefused`` (a ``LedgerError``) before any SQL runs, naming the
   table, both states and the actor; the caller's transaction rolls back.
3. The migrations' triggers still refuse any pair that is not an edge: a move that got past
   core by a mistake here is stopped at the database.
"""

from __future__ import annotations

from enum import StrEnum
from typing import TypeVar

from returns.result import Failure, Success

from core.edges import Actor, IllegalMove, LifecycleTable
from shell.ledger.connection import LedgerError

StateT = TypeVar("StateT", bound=StrEnum)


class MoveRefused(LedgerError):
    """``core.edges`` refused a move the connector asked of the ledger."""

    def __init__(self, illegal: IllegalMove) -> None:
        super().__init__(str(illegal))
        self.illegal = illegal


def asked(
    table: LifecycleTable[StateT], source: StateT, target: StateT, actor: Actor, note: str = ""
) -> StateT:
    """The state to write, as ``table`` allows ``actor`` to move from ``source`` (rule 1)."""
    match table.step(source, target, actor, note):
        case Success(allowed):
            return allowed  # type: ignore[no-any-return]
        case Failure(illegal):
            raise MoveRefused(illegal)
    raise AssertionError("a step answers Success or Failure")  # pragma: no cover
