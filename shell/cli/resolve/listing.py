"""``bin/outbox-resolve list``: the intents waiting for a person (``--all``: every intent).

Rules:
1. Waiting for a person: indeterminate intents, and canceled ones Basecamp refused.
2. Age counts from when the intent last changed; ``--json`` prints one array of summaries.
"""

from __future__ import annotations

import argparse
import json
from datetime import datetime
from typing import Any

from core.edges import IntentState
from shell.cli.resolve.shared import PROG, Context, age_seconds, destination, human_age
from shell.cli.who import one_line
from shell.errors import EXIT_OK
from shell.ledger import outbox as rows
from shell.ledger.resolution import is_refused, waits_for_person

NOTHING_WAITS = "nothing waits for a person"


def _summary(row: rows.IntentRow, now: datetime) -> dict[str, Any]:
    return {
        "id": row.id,
        "kind": str(row.kind),
        "state": str(row.state),
        "refused": is_refused(row.state, row.note),
        "waits_for_person": waits_for_person(row.state, row.note),
        "event_id": row.event_id,
        "attempt_id": row.attempt_id,
        "destination": destination(row),
        "note": row.note,
        "age_seconds": age_seconds(row, now),
    }


def run(args: argparse.Namespace, context: Context) -> int:
    with context.read_only() as ledger, ledger.read() as connection:
        if args.all:
            found = rows.intents_in(connection, list(IntentState))
        else:
            found = [
                row
                for row in rows.intents_in(connection, [IntentState.indeterminate, IntentState.canceled])
                if waits_for_person(row.state, row.note)
            ]
    now = context.clock.now()
    if context.json:
        print(json.dumps([_summary(row, now) for row in found], ensure_ascii=False, indent=2))
        return EXIT_OK
    if not found:
        print(NOTHING_WAITS if not args.all else "the ledger holds no intents")
        return EXIT_OK
    table = [("ID", "KIND", "STATE", "EVENT", "ATTEMPT", "DESTINATION", "AGE", "NOTE")]
    for row in found:
        table.append((
            str(row.id),
            str(row.kind),
            "refused" if is_refused(row.state, row.note) else str(row.state),
            "-" if row.event_id is None else str(row.event_id),
            row.attempt_id or "-",
            row.destination.describe(),
            human_age(age_seconds(row, now)),
            one_line(row.note) or "-",
        ))
    widths = [max(len(line[column]) for line in table) for column in range(len(table[0]) - 1)]
    for line in table:
        padded = (cell.ljust(width) for cell, width in zip(line, widths, strict=False))
        print("  ".join([*padded, line[-1]]))
    waiting = sum(1 for row in found if waits_for_person(row.state, row.note))
    if waiting:
        refused = any(is_refused(row.state, row.note) for row in found)
        meaning = " (refused: Basecamp refused the request, so no message exists)" if refused else ""
        print(f"\n{waiting} waiting for a person{meaning}.")
        print(f"See one, and what you may do with it: {PROG} show ID")
    else:
        print(NOTHING_WAITS)
    return EXIT_OK
