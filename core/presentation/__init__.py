"""Rendering for a person or a machine: values in, text and JSON out.

Pure, like the rest of core, and deciding nothing: a module here only shows values the shell read
and core's rule modules decided. Status's values live here too (``status_values``), not under
``shell.cli``: the ledger fills them, and the ledger never imports the command line. This module
itself holds how status and doctor write a time and a size for a person.
"""

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
