"""The floors under the connector's timings, and the one explicit way below them.

Rules:
1. Production timings cannot go below their floors: a ``sending`` message is listed no
   sooner than a minute after its request (``reconcile_after`` >= 60 s: "one wait is
   deliberate", an intent that went sending less than a minute ago may still be landing).
   The rest have floors of the same sense: a guard acknowledgement waits at least 10 s for the
   worker's own, still-running notices are at least a minute apart, a task's deadline is at
   least a minute, the feed is read at most once a second.
2. ``unsafe_test_timings`` (``setup --unsafe-test-timings``, recorded in the configuration and
   shown by ``status`` and ``setup``) lifts every floor, for the demo and the tests. Nothing
   else does: a configuration file written by hand is held to the floors when it is read.
3. Pure: durations in, problem lines out (each naming its key, its floor and the option).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import timedelta

from core.durations import format_duration

UNSAFE_OPTION = "--unsafe-test-timings"
FLOORS: Mapping[str, timedelta] = {
    "timings.reconcile_after": timedelta(seconds=60),
    "timings.guard_delay": timedelta(seconds=10),
    "timings.still_running": timedelta(minutes=1),
    "task_deadline": timedelta(minutes=1),
}
POLL_FLOOR = timedelta(seconds=1)


def below_floor(where: str, value: timedelta, *, unsafe: bool) -> str | None:
    """A problem line when ``value`` of ``where`` is under its floor and floors hold (rules 1, 2)."""
    floor = POLL_FLOOR if where == "--poll-seconds" else FLOORS[where]
    if unsafe or value >= floor:
        return None
    return (
        f"{where}: at least {format_duration(floor)} (the reference's floor), not {format_duration(value)};"
        f" shorter only for a demo or a test, with setup {UNSAFE_OPTION}"
    )
