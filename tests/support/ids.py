"""Ids apart: each kind of id a test ledger holds comes from a range no other kind reaches, so a
query with two id columns swapped finds nothing (or the wrong thing) and its test fails.

Events take the ids a test names (below ``EVENTS_FROM``) or one of the builders draws from
``EVENTS_FROM`` (the simulation's world; the stand-in's feed starts at 7_000_000_001); attempts'
ids are text (``att_`` and hex), apart from every integer id by type; the ledger's own
autoincrements (tasks, outbox intents, decisions) start where ``set_apart``
puts them, by a ``sqlite_sequence`` row each, before a test's first write."""

from __future__ import annotations

import sqlite3

from shell.ledger.connection import Ledger

EVENTS_FROM = 1_000_001
TASKS_FROM = 3_000_001
ATTEMPTS_FROM = 4_000_001  # the builders' attempt counters: att_ and these numbers in hex
INTENTS_FROM = 5_000_001
DECISIONS_FROM = 6_000_001

FIRST_ROWID = {
    "tasks": TASKS_FROM,
    "outbox": INTENTS_FROM,
    "decisions": DECISIONS_FROM,
}


def set_sequences_apart(connection: sqlite3.Connection) -> None:
    """Each autoincrement table's next id at its range's start (never lowering one already past it)."""
    for table, first in FIRST_ROWID.items():
        row = connection.execute("SELECT seq FROM sqlite_sequence WHERE name = ?", (table,)).fetchone()
        if row is None:
            connection.execute("INSERT INTO sqlite_sequence (name, seq) VALUES (?, ?)", (table, first - 1))
        elif row[0] < first - 1:
            connection.execute("UPDATE sqlite_sequence SET seq = ? WHERE name = ?", (first - 1, table))


def set_apart(ledger: Ledger) -> Ledger:
    """``ledger`` with its autoincrements set apart (``set_sequences_apart``), in one write."""
    with ledger.write() as connection:
        set_sequences_apart(connection)
    return ledger


def nth_task(n: int) -> int:
    """The id of the ``n``-th task a test ledger writes."""
    return TASKS_FROM + n - 1


def nth_intent(n: int) -> int:
    """The id of the ``n``-th outbox intent a test ledger writes."""
    return INTENTS_FROM + n - 1
