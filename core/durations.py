"""Durations as the configuration and the command line write them: ``90m``, ``30s``, ``2h``,
``1h30m``, ``500ms``.

Rules:
1. A duration is positive and at most ``MAX_DURATION`` (a year: a deadline or a delay past it
   is a typo, and a larger one overflows the clock's arithmetic); anything else reads as None,
   for the caller to name as a problem.
2. ``format_duration`` writes the shortest text ``parse_duration`` reads back as the same value,
   so a configuration file read and written is unchanged.
"""

from __future__ import annotations

import re
from datetime import timedelta

MAX_DURATION = timedelta(days=366)
_DURATION = re.compile(r"^(?:(\d+)h)?(?:(\d+)m(?!s))?(?:(\d+)s)?(?:(\d+)ms)?$")


def parse_duration(text: str) -> timedelta | None:
    """``90m``, ``30s``, ``2h``, ``1h30m``, ``500ms`` -> a positive timedelta; None otherwise."""
    found = _DURATION.match(text.strip())
    if found is None or not any(found.groups()):
        return None
    hours, minutes, seconds, milliseconds = (int(part) if part else 0 for part in found.groups())
    milliseconds += ((hours * 60 + minutes) * 60 + seconds) * 1000  # whole numbers: never overflows
    if not 0 < milliseconds <= MAX_DURATION // timedelta(milliseconds=1):
        return None
    return timedelta(milliseconds=milliseconds)


def format_duration(value: timedelta) -> str:
    """The shortest text ``parse_duration`` reads back as ``value``."""
    milliseconds = round(value.total_seconds() * 1000)
    parts = []
    for unit, size in (("h", 3_600_000), ("m", 60_000), ("s", 1000), ("ms", 1)):
        count, milliseconds = divmod(milliseconds, size)
        if count:
            parts.append(f"{count}{unit}")
    return "".join(parts) or "0s"
