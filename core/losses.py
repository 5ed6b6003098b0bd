"""Losses and gaps of intake, as values: when a repair walk is done, what status says.

Rules:
1. A loss is a stretch the live lane did not hear: events after ``after_id`` through
   ``through_id`` (None until an event heard after the loss bounds it). A repair walk reads
   the feed from ``cursor`` on; it is done (``walk_done``) once it has read an event past
   ``through_id``, or, with no bound, once the feed has nothing more to serve.
2. A loss not repaired by the end of its window is unrecovered (``settle_state``): its events
   may never be heard by any lane; a person can look at the feed from ``after_id``.
3. A gap is a stretch the feed itself said it will not serve (a 410): kept for status only.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum


class LossState(StrEnum):
    open = "open"
    repaired = "repaired"
    unrecovered = "unrecovered"


@dataclass(frozen=True, slots=True)
class Loss:
    """A stretch the live lane did not hear, as the ledger keeps it (rules 1-2)."""

    id: int
    cause: str
    after_id: int
    through_id: int | None
    cursor: int
    window_ends_at: datetime


def walk_done(loss: Loss, read_through: int, more: bool) -> bool:
    """Rule 1: ``read_through`` is the newest id the walk has read (its cursor); ``more``
    says the feed has more to serve now."""
    if loss.through_id is None:
        return not more
    return read_through > loss.through_id


def settle_state(done: bool, now: datetime, loss: Loss) -> LossState:
    """Rule 2."""
    if done:
        return LossState.repaired
    return LossState.unrecovered if now >= loss.window_ends_at else LossState.open


@dataclass(frozen=True, slots=True)
class LossCounts:
    """How many losses are in each state, and how many gaps: what status shows."""

    open: int = 0
    repaired: int = 0
    unrecovered: int = 0
    gaps: int = 0


def losses_line(counts: LossCounts) -> str:
    """One line for status."""
    line = (
        f"losses: {counts.open} open, {counts.repaired} repaired, {counts.unrecovered} unrecovered;"
        f" gaps: {counts.gaps}"
    )
    if counts.unrecovered or counts.gaps:
        line += " (events there may never have been heard: see the feed)"
    return line


def losses_report(counts: LossCounts) -> dict[str, int]:
    """For ``status --json``: ``open``, ``repaired``, ``unrecovered``, ``gaps``."""
    return {
        "open": counts.open,
        "repaired": counts.repaired,
        "unrecovered": counts.unrecovered,
        "gaps": counts.gaps,
    }
