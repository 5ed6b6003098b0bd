"""Time as the ledger, the configuration and the command line write it.

A stored time is UTC, fixed width, with nine fractional digits (``2026-11-29T21:53:35.123456789Z``),
so text order is time order; Python keeps microseconds, so the last three are zero. A naive
datetime is refused: a time without a zone is a bug waiting to happen. A duration (``90m``,
``30s``, ``2h``, ``1h30m``, ``500ms``) is positive and at most ``MAX_DURATION`` (a year: past it is
a typo, and overflows the clock's arithmetic), and ``format_duration`` writes the shortest text
that reads back as the same value, so a configuration file read and written is unchanged.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

LEDGER_FORM_LENGTH = len("2026-11-29T21:53:35.123456789Z")
MAX_DURATION = timedelta(days=366)
_DURATION = re.compile(r"^(?:(\d+)h)?(?:(\d+)m(?!s))?(?:(\d+)s)?(?:(\d+)ms)?$")


def format_timestamp(moment: datetime) -> str:
    if moment.tzinfo is None:
        raise ValueError("a naive datetime has no zone; the ledger stores UTC")
    utc = moment.astimezone(UTC)
    return utc.isoformat(timespec="microseconds")[:26] + "000Z"


def parse_timestamp(text: str) -> datetime:
    """A ledger time, read at once, or any of Basecamp's ISO-8601 forms."""
    if len(text) == LEDGER_FORM_LENGTH and text[19] == "." and text[29] == "Z" and text[26:29].isdigit():
        return datetime.fromisoformat(text[:26] + "+00:00")
    value = text.strip()
    if value.endswith("Z"):
        value = value[:-1] + "+00:00"
    head, sep, rest = value.partition(".")
    if sep:
        index = 0
        while index < len(rest) and rest[index].isdigit():
            index += 1
        value = f"{head}.{(rest[:index] + '000000')[:6]}{rest[index:]}"
    parsed = datetime.fromisoformat(value)
    if parsed.tzinfo is None:
        raise ValueError(f"a time without a zone: {text!r}")
    return parsed.astimezone(UTC)


def clock_time(moment: datetime) -> str:
    """``HH:MM UTC``, the form a notice shows a person."""
    return moment.astimezone(UTC).strftime("%H:%M UTC")


def parse_duration(text: str) -> timedelta | None:
    found = _DURATION.match(text.strip())
    if found is None or not any(found.groups()):
        return None
    hours, minutes, seconds, milliseconds = (int(part) if part else 0 for part in found.groups())
    milliseconds += ((hours * 60 + minutes) * 60 + seconds) * 1000  # whole numbers: never overflows
    if not 0 < milliseconds <= MAX_DURATION // timedelta(milliseconds=1):
        return None
    return timedelta(milliseconds=milliseconds)


def format_duration(value: timedelta) -> str:
    milliseconds = round(value.total_seconds() * 1000)
    parts = []
    for unit, size in (("h", 3_600_000), ("m", 60_000), ("s", 1000), ("ms", 1)):
        count, milliseconds = divmod(milliseconds, size)
        if count:
            parts.append(f"{count}{unit}")
    return "".join(parts) or "0s"
