"""``bin/outbox-resolve show ID``: every column of one intent, and what a person may do with it.

Rules:
1. The decisions offered are those open now (``core.resolution.open_decisions``), each
   as the exact command to run; none when the intent is settled.
2. The body is printed whole: the connector's own fixed-form words.
"""

from __future__ import annotations

import argparse
import json
from datetime import datetime
from typing import Any

from core.resolution import open_decisions
from shell.cli.resolve.shared import THE_RULE, Context, age_seconds, destination, human_age, time_text
from shell.errors import EXIT_OK
from shell.ledger import outbox as rows
from shell.ledger.resolution import NoSuchIntent, describe_state, is_refused, waits_for_person


def _offers(row: rows.IntentRow, context: Context) -> list[dict[str, str]]:
    meanings = {
        "sent": (
            "you have seen the message in Basecamp: record its id as the receipt",
            ("sent", str(row.id), "--receipt", "MESSAGE_ID"),
        ),
        "abandon": ("it should never be sent", ("abandon", str(row.id))),
        "resend": (
            "you have seen the message is not there: post it once more",
            ("resend", str(row.id)),
        ),
    }
    offers = []
    for decision in open_decisions(row.state, row.note):
        when, words = meanings[decision]
        offers.append({"decision": decision, "when": when, "command": context.command(*words)})
    return offers


def _details(row: rows.IntentRow, context: Context, now: datetime) -> dict[str, Any]:
    return {
        "id": row.id,
        "intent_key": row.key,
        "kind": str(row.kind),
        "state": str(row.state),
        "refused": is_refused(row.state, row.note),
        "waits_for_person": waits_for_person(row.state, row.note),
        "event_id": row.event_id,
        "task_id": row.task_id,
        "attempt_id": row.attempt_id,
        "occurrence": row.occurrence,
        "destination": destination(row),
        "body": row.body,
        "created_at": time_text(row.created_at),
        "not_before": time_text(row.not_before),
        "sending_at": time_text(row.sending_at),
        "finished_at": time_text(row.finished_at),
        "receipt_id": row.receipt_id,
        "note": row.note,
        "resolved_by": row.resolved_by,
        "reconcile_failures": row.reconcile_failures,
        "reconcile_at": time_text(row.reconcile_at),
        "age_seconds": age_seconds(row, now),
        "decisions": _offers(row, context),
    }


def run(args: argparse.Namespace, context: Context) -> int:
    with context.read_only() as ledger, ledger.read() as connection:
        row = rows.intent(connection, args.id)
    if row is None:
        raise NoSuchIntent(f"no intent {args.id} in this ledger; `list --all` shows every intent")
    now = context.clock.now()
    details = _details(row, context, now)
    if context.json:
        print(json.dumps(details, ensure_ascii=False, indent=2))
        return EXIT_OK
    print(f"intent {row.id}: {row.kind}, {describe_state(row.state, row.note)}")
    fields = [
        ("key", row.key),
        ("event", row.event_id),
        ("task", row.task_id),
        ("attempt", row.attempt_id),
        ("occurrence", row.occurrence),
        ("destination", f"{row.destination.describe()} in project {row.destination.bucket_id}"),
        ("created at", details["created_at"]),
        ("not before", details["not_before"]),
        ("sending at", details["sending_at"]),
        ("finished at", details["finished_at"]),
        ("age", human_age(details["age_seconds"])),
        ("receipt", row.receipt_id),
        ("note", row.note),
        ("resolved by", row.resolved_by),
        ("reconcile failures", row.reconcile_failures),
        ("reconcile at", details["reconcile_at"]),
    ]
    for name, value in fields:
        print(f"  {name + ':':<20}{'-' if value is None or value == '' else value}")
    print("  body:")
    for line in row.body.splitlines() or [""]:
        print(f"    {line}")
    offers = details["decisions"]
    if not offers:
        print(f"\nNothing for a person to decide: it is {describe_state(row.state, row.note)}.")
        return EXIT_OK
    print(f"\nWhat you may do now (look for the message: {row.destination.describe()}, among the agent's):")
    for offer in offers:
        print(f"  if {offer['when']}:\n    {offer['command']}")
    print(f"\n{THE_RULE}")
    return EXIT_OK
