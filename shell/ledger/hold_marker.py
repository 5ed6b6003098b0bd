"""The hold marker, read: whether a person's hold stands.

Rules:
1. ``standing`` reads the marker in the caller's transaction. The dispatcher asks it before it
   launches, a decision after it decides, and ``status`` shows it: a module of its own, so a
   reader imports none of the hold's writing side (``shell.ledger.hold``, which writes it).
"""

from __future__ import annotations

import sqlite3

from core.hold import StandingHold


def standing(connection: sqlite3.Connection) -> StandingHold | None:
    """The hold marker, or None (rule 1)."""
    found = connection.execute(
        "SELECT held_by, held_at, cause, generation FROM hold_marker WHERE id = 1"
    ).fetchone()
    return None if found is None else StandingHold(str(found[0]), str(found[1]), str(found[2]), int(found[3]))
