"""``bin/outbox-resolve sent|abandon|resend ID``: a person's decision about one intent.

Rules:
1. The decision is one short transaction (``shell.ledger.resolution.resolve_intent``) and
   records who decided (``shell.cli.who``).
2. ``sent`` reads message N at Basecamp first and records it only when it is the intent's
   (``shell.cli.resolve.receipt``); ``--unchecked`` records it without looking. The intent's
   note says which, and so do the line and ``--json``'s ``receipt_checked``.
3. What changed is one line for a person, or with ``--json`` one object.
"""

from __future__ import annotations

import argparse
import json

from core import notes
from core.edges import IntentState
from core.resolution import Abandon, Resend, Resolution, Sent
from shell.cli.resolve.receipt import check_receipt_at_basecamp
from shell.cli.resolve.shared import Context, time_text
from shell.cli.who import deciding_person
from shell.errors import EXIT_OK
from shell.ledger.resolution import Resolved, is_refused, resolve_intent


def _resolution(args: argparse.Namespace, by: str, context: Context) -> Resolution:
    match args.decision:
        case "sent":
            checked = not args.unchecked and check_receipt_at_basecamp(context, args.id, args.receipt)
            return Sent(args.receipt, by, checked=checked)
        case "abandon":
            return Abandon(by)
        case _:
            return Resend(by)


def _changed_line(resolved: Resolved) -> str:
    after = resolved.after
    before = "refused" if is_refused(resolved.before, resolved.before_note) else str(resolved.before)
    head = f"intent {after.id} ({after.kind}, {after.destination.describe()}): {before} -> {after.state}"
    match after.state:
        case IntentState.sent:
            how = "read and checked" if after.note == notes.RESOLVED_SENT_CHECKED else "unchecked"
            tail = f"with receipt {after.receipt_id} ({how})"
        case IntentState.abandoned:
            tail = "it will never be sent"
        case _:
            tail = "due now: the connector posts it once more; its reconciliation starts afresh"
    return f"{head}, by {after.resolved_by}; {tail}"


def run(args: argparse.Namespace, context: Context) -> int:
    resolution = _resolution(args, deciding_person(args.by), context)
    with context.writable() as ledger:
        resolved = resolve_intent(ledger, args.id, resolution)
    if context.json:
        after = resolved.after
        print(json.dumps({
            "id": after.id,
            "decision": args.decision,
            "from": str(resolved.before),
            "to": str(after.state),
            "note": after.note,
            "resolved_by": after.resolved_by,
            "receipt_id": after.receipt_id,
            "receipt_checked": after.note == notes.RESOLVED_SENT_CHECKED if after.receipt_id else None,
            "not_before": time_text(after.not_before),
            "finished_at": time_text(after.finished_at),
        }, ensure_ascii=False, indent=2))
    else:
        print(_changed_line(resolved))
    return EXIT_OK
