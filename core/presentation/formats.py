"""How status and doctor write a time and a size for a person. Pure."""

from __future__ import annotations


def short_time(stamp: str | None) -> str:
    """A ledger time to the second, for a person: ``2026-11-29T12:00:00Z`` ("-" for none)."""
    if not stamp:
        return "-"
    if len(stamp) > 19 and stamp[10] == "T" and stamp.endswith("Z"):
        return stamp[:19] + "Z"
    return stamp


def byte_size(count: int) -> str:
    """A byte count for a person: ``512 B``, ``12 kB``, ``3 MB``, ``40 GB``."""
    for unit, size in (("GB", 10**9), ("MB", 10**6), ("kB", 10**3)):
        if count >= size:
            return f"{count // size} {unit}"
    return f"{count} B"
