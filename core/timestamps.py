"""Time as the ledger stores it.

Rules:
1. Every stored time is UTC, fixed width, with nine fractional digits
   (``2026-11-29T21:53:35.123456789Z``), so text order is time order.
2. A naive datetime is refused: a time without a zone is a bug waiting to happen.
3. Python keeps microseconds; the last three stored digits are always zero.
"""

from __future__ import annotations

from datetime import UTC, datetime

LEDGER_FORM_LENGTH = len("2026-11-29T21:53:35.123456789Z")


def format_timestamp(moment: datetime) -> str:
    """The ledger's text form of ``moment``."""
    if moment.tzinfo is None:
        raise ValueError("a naive datetime has no zone; the ledger stores UTC")
    utc = moment.astimezone(UTC)
    return utc.isoformat(timespec="microseconds")[:26] + "000Z"  # isoformat: about half strftime's cost


def parse_timestamp(text: str) -> datetime:
    """Read a ledger time back; accepts Basecamp's ISO-8601 forms too. The ledger's own form
    (rule 1) is read at once: its first six fractional digits are what Python keeps."""
    if len(text) == LEDGER_FORM_LENGTH and text[19] == "." and text[29] == "Z" and text[26:29].isdigit():
        return datetime.fromisoformat(text[:26] + "+00:00")
    value = text.strip()
    if value.endswith("Z"):
        value = value[:-1] + "+00:00"
    head, sep, rest = value.partition(".")
    if sep:
        digits = ""
        index = 0
        while index < len(rest) and rest[index].isdigit():
            digits += rest[index]
            index += 1
        zone = rest[index:]
        value = f"{head}.{(digits + '000000')[:6]}{zone}"
    parsed = datetime.fromisoformat(value)
    if parsed.tzinfo is None:
        raise ValueError(f"a time without a zone: {text!r}")
    return parsed.astimezone(UTC)


def clock_time(moment: datetime) -> str:
    """``HH:MM UTC``, the form a notice shows a person."""
    return moment.astimezone(UTC).strftime("%H:%M UTC")
