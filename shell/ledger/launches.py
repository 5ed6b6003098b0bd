"""A person's settlement of an attempt left mid-launch, in one transaction.

Rules:
1. A start's recovery marks an attempt it finds launching with no recorded process left
   (``mark_left``); only such an attempt a person settles.
2. ``settle_launch`` reads the live attempt of the task carrying the event, asks
   ``core.launch_settlement.settle`` and writes its answer inside one ``BEGIN IMMEDIATE``
   transaction: who settled it and what they found, the attempt's end, the task's supersession
   and its settlement commit together or not at all. Safe beside a running connector: the
   attempt belongs to a process that is gone, and the dispatcher starts what it frees.
3. The attempt's end is ``shell.ledger.tasks.end_attempt``, as every other end's.
"""

from __future__ import annotations

import sqlite3
from datetime import datetime

from returns.result import Failure, Result, Success

from core import launch_settlement
from core.launch_settlement import Claim, LeftLaunch, Settle
from core.timestamps import format_timestamp
from shell.ledger import tasks
from shell.ledger.connection import Ledger


def settle_launch(ledger: Ledger, event_id: int, claim: Claim, by: str, now: datetime) -> Result[Settle, str]:
    """``by`` settles the attempt left mid-launch for ``event_id``'s task as ``claim`` (rule 2)."""
    with ledger.write() as connection:
        planned = launch_settlement.settle(left_launch(connection, event_id), event_id, claim)
        match planned:
            case Success(plan):
                settle_left_launch(connection, plan, by, now)
            case Failure(_):
                pass
    return planned


def mark_left(connection: sqlite3.Connection, attempt_id: str, now: datetime) -> None:
    """A start's recovery found ``attempt_id`` launching with no recorded process: left for a person
    (``core.launch_settlement``). Marked once; the first finding's time is kept."""
    connection.execute(
        "UPDATE attempts SET left_at = COALESCE(left_at, ?) WHERE id = ? AND state = 'launching' AND pid IS NULL",
        (format_timestamp(now), attempt_id),
    )


def left_launch(connection: sqlite3.Connection, event_id: int) -> LeftLaunch | None:
    """The live attempt of the live task carrying ``event_id``, as a settlement reads it; None when
    no live task carries it."""
    found = connection.execute(
        "SELECT t.id, a.id, a.state = 'launching', a.left_at IS NOT NULL,"
        " EXISTS (SELECT 1 FROM task_events p WHERE p.task_id = t.id AND p.pulled_at IS NOT NULL)"
        " FROM task_events te JOIN tasks t ON t.id = te.task_id AND t.ended_at IS NULL"
        " JOIN attempts a ON a.task_id = t.id AND a.state <> 'ended'"
        " WHERE te.event_id = ? AND te.retired_at IS NULL",
        (event_id,),
    ).fetchone()
    if found is None:
        return None
    task_id, attempt_id, launching, left, pulled = found
    return LeftLaunch(event_id, int(task_id), str(attempt_id), bool(launching), bool(left), bool(pulled))


def settle_left_launch(connection: sqlite3.Connection, plan: Settle, by: str, now: datetime) -> None:
    """A person's settlement of an attempt left mid-launch (``core.launch_settlement``): who and what
    they found, then the attempt's end as the dispatcher's own settlement, in the caller's one
    transaction."""
    tasks.checked(
        connection.execute(
            "UPDATE attempts SET settled_by = ?, settled_as = ? WHERE id = ? AND state = 'launching'"
            " AND left_at IS NOT NULL",
            (by, str(plan.claim), plan.facts.attempt_id),
        ),
        f"attempt {plan.facts.attempt_id} is no longer left mid-launch",
    )
    tasks.end_attempt(connection, plan.facts.attempt_id, plan.stop_reason, spawn_failed=plan.spawn_failed, now=now)
