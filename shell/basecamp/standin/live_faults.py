"""Scripted faults of the stand-in's live lane (the cable), as the tests and the control API
add them.

Rules:
1. Two moments take a fault: the upgrade (``refuse``, ``expire_ticket``) and the sending of an
   event to a subscriber (``drop``, ``stall``, ``skip``), each only at its own moment, in the
   order added; the first that fits wins.
2. What each does is said beside its ``LiveAction``.
3. ``times`` uses are counted across connections (default 1); taking is atomic.
4. Bounded (``shell.basecamp.standin.bounds``): a delay finite, at most a day; ``times`` at
   most a million."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from shell.basecamp.standin.bounds import seconds, whole


class LiveAction(StrEnum):
    refuse = "refuse"  # the upgrade answered ``status`` (503) after ``delay`` seconds, no WebSocket
    expire_ticket = "expire_ticket"  # the ticket counts as expired: 401, no WebSocket
    drop = "drop"  # the TCP connection cut (no close frame) instead of the event
    stall = "stall"  # nothing sent, not even a ping, for ``delay``; then the event and what followed
    skip = "skip"  # not sent; after the ``times``-th an overflow frame names the id dropped after


UPGRADE_ACTIONS = frozenset({LiveAction.refuse, LiveAction.expire_ticket})


@dataclass(frozen=True, slots=True)
class LiveFault:
    action: LiveAction
    status: int | None = None
    delay: float = 0.0
    times: int = 1

    def __post_init__(self) -> None:
        if not isinstance(self.action, LiveAction):
            raise TypeError(f"a live fault's action is a LiveAction, not {self.action!r}")
        if self.times < 1:
            raise ValueError(f"a fault happens at least once, not {self.times} times")
        if self.delay < 0:
            raise ValueError(f"a delay is not negative: {self.delay}")
        whole(self.times, "a live fault's times", low=1)
        seconds(self.delay, "a live fault's delay")
        if self.status is not None and not 400 <= self.status <= 599:
            raise ValueError(f"an upgrade is refused with a 4xx or 5xx, not {self.status}")

    @property
    def at_upgrade(self) -> bool:
        return self.action in UPGRADE_ACTIONS


def live_fault_from_json(value: object) -> LiveFault:
    """A live fault from its JSON form; ValueError or TypeError when malformed."""
    if not isinstance(value, dict):
        raise TypeError("a live fault is a JSON object")
    unknown = set(value) - set(LiveFault.__dataclass_fields__)
    if unknown:
        raise ValueError(f"unknown live fault fields: {', '.join(sorted(unknown))}")
    status, delay, times = value.get("status"), value.get("delay", 0.0), value.get("times", 1)
    if status is not None and (isinstance(status, bool) or not isinstance(status, int)):
        raise TypeError("a live fault's status is an integer")
    if isinstance(delay, bool) or not isinstance(delay, int | float):
        raise TypeError("a live fault's delay is a number of seconds")
    if isinstance(times, bool) or not isinstance(times, int):
        raise TypeError("a live fault's times is an integer")
    return LiveFault(LiveAction(str(value.get("action"))), status, float(delay), times)


def live_fault_to_json(fault: LiveFault) -> dict[str, Any]:
    return {name: getattr(fault, name) for name in LiveFault.__dataclass_fields__}


class LiveFaults:
    """The live faults still to happen (rule 3)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._entries: list[list[Any]] = []  # [fault, uses left]

    def add(self, fault: LiveFault) -> None:
        with self._lock:
            self._entries.append([fault, fault.times])

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()

    def pending(self) -> list[LiveFault]:
        with self._lock:
            return [entry[0] for entry in self._entries]

    def take(self, at_upgrade: bool) -> tuple[LiveFault, bool] | None:
        """The first fault of this moment, used once, and whether that was its last use."""
        with self._lock:
            for index, (fault, left) in enumerate(self._entries):
                if fault.at_upgrade != at_upgrade:
                    continue
                if left <= 1:
                    del self._entries[index]
                    return fault, True
                self._entries[index][1] = left - 1
                return fault, False
        return None
