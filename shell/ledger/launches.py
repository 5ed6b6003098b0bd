"""A person's settlement of an attempt left mid-launch, in one transaction.

Rules:
1. ``settle_launch`` reads the live attempt of the task carrying the event, asks
   ``core.settlement.settle_launch`` and writes its answer inside one ``BEGIN IMMEDIATE``
   transaction: who settled it and what they found, the attempt's end, the task's supersession
   and its settlement commit together or not at all. Safe beside a running connector: the
   attempt belongs to a process that is gone, and the dispatcher starts what it frees.
2. Writes are ``shell.ledger.tasks``' (the attempts' writer); nothing here runs SQL of its own.
"""

from __future__ import annotations

from datetime import datetime

from returns.result import Failure, Result, Success

from core import settlement
from core.settlement import LaunchFinding, LaunchSettlement
from shell.ledger import tasks
from shell.ledger.connection import Ledger


def settle_launch(ledger: Ledger, event_id: int, claim: LaunchFinding, by: str, now: datetime) -> Result[LaunchSettlement, str]:
    """``by`` settles the attempt left mid-launch for ``event_id``'s task as ``claim`` (rule 1)."""
    with ledger.write() as connection:
        planned = settlement.settle_launch(tasks.left_launch(connection, event_id), event_id, claim)
        match planned:
            case Success(plan):
                tasks.settle_left_launch(connection, plan, by, now)
            case Failure(_):
                pass
    return planned
