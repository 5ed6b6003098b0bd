"""Intake's backlog: when to stop reading the feed on purpose (reference ``DefaultBacklogWarn`` /
``DefaultBacklogPause``).

Rules:
1. The backlog is the records intake has handed over that no worker has yet: states ``seen``,
   ``admitted`` and ``queued``.
2. At ``pause`` or more, intake stops reading on purpose (both lanes; nothing is lost: the poll
   lane's position stays where it was, and it reads on once the backlog is below ``pause``).
   At ``warn`` or more, it says so once, each time the backlog crosses it.
3. ``reason`` is what the live lane's state and the log say while paused; it names the numbers.
"""

from __future__ import annotations

from dataclasses import dataclass

DEFAULT_BACKLOG_WARN = 100
DEFAULT_BACKLOG_PAUSE = 500
BACKLOG_STATES = ("seen", "admitted", "queued")


@dataclass(frozen=True, slots=True)
class BacklogLimits:
    warn: int = DEFAULT_BACKLOG_WARN
    pause: int = DEFAULT_BACKLOG_PAUSE

    def __post_init__(self) -> None:
        if not 1 <= self.warn <= self.pause:
            raise ValueError(f"backlog limits need 1 <= warn <= pause, not {self.warn} and {self.pause}")


def reason(depth: int, limits: BacklogLimits) -> str | None:
    """Why intake pauses at this depth (rule 2), or None: it reads."""
    if depth >= limits.pause:
        return f"intake paused on purpose: {depth} records wait for a worker (pause at {limits.pause})"
    return None


def warns(depth: int, limits: BacklogLimits) -> bool:
    return depth >= limits.warn
