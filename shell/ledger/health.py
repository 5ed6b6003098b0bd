"""The ledger's health, read for ``bin/connect doctor``: its schema version and SQLite's check.

Rules:
1. Read only: through a ``Ledger`` opened by ``open_ledger_read_only`` (``mode=ro``,
   ``query_only``), in one read transaction, beside a running connector.
2. ``quick_check`` by default; ``integrity_check`` (slower: it also checks every index against
   its table) when asked. What the check says besides "ok" is returned, one line each.
"""

from __future__ import annotations

from dataclasses import dataclass

from shell.ledger.connection import Ledger
from shell.ledger.schema import schema_version

MAX_PROBLEMS = 20


@dataclass(frozen=True, slots=True)
class Health:
    version: int
    problems: tuple[str, ...]


def read_health(ledger: Ledger, *, full: bool) -> Health:
    """The schema version and the integrity check's problems (rules 1-2)."""
    pragma = f"PRAGMA integrity_check({MAX_PROBLEMS})" if full else f"PRAGMA quick_check({MAX_PROBLEMS})"
    with ledger.read() as connection:
        version = schema_version(connection)
        rows = connection.execute(pragma).fetchall()
    return Health(version, tuple(str(row[0]) for row in rows if row[0] != "ok"))
