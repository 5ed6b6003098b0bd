"""``bin/connect import``'s one transaction: a reconciliation file's entries applied to the
ledger, or nothing (the plan is ``core.import_file``'s).

Rules:
1. ``apply`` reads every named record and every open one, asks ``core.import_file.plan`` and
   writes its answer inside one ``BEGIN IMMEDIATE`` transaction: the discards (each with its
   decision row, ``shell.ledger.decisions.discard_imported``), the tombstones
   (``shell.ledger.records.tombstone``) and the review tags commit together. An entry that
   cannot be applied writes nothing at all: the transaction is left before its first write.
2. Who decided is the person who imported, and each decision's note names the file.
3. The ledger is asked once which named events it records (``records.recorded_among``), and only
   those are read one by one; the tombstones are one statement: a 16 MB file of events never
   seen costs no query per entry.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from returns.result import Failure, Result, Success

from core import import_file
from core.import_file import Entry, ImportPlan, RecordNow, Unappliable
from core.timestamps import format_timestamp
from shell.ledger import decisions, records
from shell.ledger.connection import Ledger


@dataclass(frozen=True, slots=True)
class Imported:
    plan: ImportPlan
    canceled_intents: tuple[int, ...]


def apply(
    ledger: Ledger, entries: Sequence[Entry], by: str, now: datetime, source: str
) -> Result[Imported, Unappliable]:
    """Apply ``entries`` from the file ``source`` (rule 1)."""
    with ledger.write() as connection:
        recorded = records.recorded_among(connection, [entry.event_id for entry in entries])
        known = {event_id: found for event_id in recorded if (found := _record(connection, event_id))}
        open_ids = [event_id for event_id, _, _ in records.open_records(connection)]
        match import_file.plan(entries, known, open_ids):
            case Failure(bad):
                return Failure(bad)
            case Success(plan):
                return Success(_write(connection, plan, by, now, source))
    raise AssertionError("unreachable")  # pragma: no cover


def _write(connection: sqlite3.Connection, plan: ImportPlan, by: str, now: datetime, source: str) -> Imported:
    stamp = format_timestamp(now)
    note = f"imported from {source}: decided done"
    canceled: list[int] = []
    for record in plan.discard:
        canceled += decisions.discard_imported(connection, record, by, now, note)
    records.tombstone(connection, plan.tombstones, stamp)
    records.tag_for_review(connection, plan.review, stamp)
    return Imported(plan, tuple(canceled))


def _record(connection: sqlite3.Connection, event_id: int) -> RecordNow | None:
    facts = decisions.read_facts(connection, event_id, frozenset())
    if facts is None:
        return None
    return RecordNow(event_id, facts.state, facts.reason, facts.outcome, facts.revision, facts.carried)
