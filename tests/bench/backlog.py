"""A ledger written fast for a benchmark: mentions in a project without a route, each blocked
``no_route`` with its holding reply, by the verdict's own transaction, a thousand to a transaction."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from core.snapshots import NO_ROUTE
from shell.ledger.connection import open_ledger
from tests.bench.outbox_bench import WRITE_BATCH, OneTransaction, ShiftedClock, progress
from tests.support.ledger_world import LedgerWorld


def write_unrouted(path: Path, count: int, recording_of: Callable[[int], int], clock: ShiftedClock) -> None:
    """Events 1..``count`` on ``recording_of(event_id)``, blocked ``no_route``: ``count`` pending
    holding replies, stamped by ``clock`` (an hour ago)."""
    with open_ledger(path) as ledger:
        for first in range(1, count + 1, WRITE_BATCH):
            with ledger.write() as connection:
                world = LedgerWorld(OneTransaction(connection, clock))  # type: ignore[arg-type]
                for event_id in range(first, min(first + WRITE_BATCH, count + 1)):
                    world.seen(event_id, recording_id=recording_of(event_id))
                    world.verdict(event_id, "blocked", reason=NO_ROUTE)
            progress(f"  ... {min(first + WRITE_BATCH - 1, count)} of {count} intents written")
