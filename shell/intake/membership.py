"""The agent's projects (membership), re-read on a schedule, so the live lane hears a new one.

Rules:
1. Basecamp's cable snapshots the agent's projects when it subscribes; a project granted later
   is heard live only on a new subscription. So every ``interval`` (10 min) intake re-reads
   ``projects.json``; ``check`` answers the projects granted since the last read (none on the
   first read: it only takes note), and the connector has the live lane subscribe again.
2. A project withdrawn needs nothing: the cable stops sending its events by itself.
3. A read that fails changes nothing and is tried at the next interval (logged by the caller).
"""

from __future__ import annotations

from datetime import timedelta
from typing import Protocol

from shell.clock import Clock

DEFAULT_MEMBERSHIP_INTERVAL = timedelta(minutes=10)


class ProjectLister(Protocol):
    """What membership needs of ``shell.basecamp.client.BasecampClient``."""

    def projects(self, deadline: float) -> frozenset[int]: ...


class Membership:
    def __init__(
        self, client: ProjectLister, clock: Clock, interval: timedelta = DEFAULT_MEMBERSHIP_INTERVAL
    ) -> None:
        self._client = client
        self._clock = clock
        self._interval = interval.total_seconds()
        self._known: frozenset[int] | None = None
        self._next_at = clock.monotonic()

    def due(self) -> bool:
        return self._clock.monotonic() >= self._next_at

    def check(self, deadline: float) -> frozenset[int]:
        """The projects granted since the last read (rule 1); raises what the client raises."""
        self._next_at = self._clock.monotonic() + self._interval
        now = self._client.projects(deadline)
        granted = frozenset() if self._known is None else now - self._known
        self._known = now
        return granted
