"""The live lane's state as ``status`` shows it: a value the lane writes and status reads.

Rules:
1. ``LaneStatus`` is ``connecting``, ``connected`` (the subscription was confirmed) or ``down``
   (since when, and why); while it is not connected, intake polls alone, and ``lane_line`` says
   so. ``lane_report`` is the same for ``status --json``.
2. Apart from ``core.live`` (the lane's protocol) so that ``bin/connect status``, which runs on
   every look, imports no feed reading, frames or ``returns`` to show one line.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum


class LaneState(StrEnum):
    connecting = "connecting"
    connected = "connected"
    down = "down"


@dataclass(frozen=True, slots=True)
class LaneStatus:
    """The live lane as the connector last wrote it. ``since`` is a ledger timestamp."""

    state: LaneState
    since: str
    why: str = ""
    connects: int = 0
    overflows: int = 0


def lane_line(status: LaneStatus | None, short_time: Callable[[str], str]) -> str:
    """One line for ``status``: whether intake hears events live or only polls."""
    if status is None:
        return "live lane: never started (intake polls only)"
    since = short_time(status.since)
    counts = f"{status.connects} connects, {status.overflows} overflows"
    match status.state:
        case LaneState.connected:
            return f"live lane: connected since {since} ({counts})"
        case LaneState.connecting:
            return f"live lane: connecting since {since} ({counts}); intake polls meanwhile"
        case LaneState.down:
            return f"live lane: down since {since}: {status.why} ({counts}); intake polls meanwhile"


def lane_report(status: LaneStatus | None) -> dict[str, object] | None:
    """The lane for ``status --json``: ``state``, ``since``, ``why``, ``connects``, ``overflows``."""
    if status is None:
        return None
    return {
        "state": status.state.value,
        "since": status.since,
        "why": status.why,
        "connects": status.connects,
        "overflows": status.overflows,
    }
