"""``bin/outbox-resolve``: a person's decisions about lifecycle messages the connector left them.

Rules:
1. ``list`` and ``show`` read through ``open_ledger_read_only``; ``sent``, ``abandon`` and
   ``resend`` write through ``open_existing_ledger``. Neither creates, migrates or tightens a
   ledger: a missing, foreign, too new or unprivate file is one line and EXIT_CONFIG.
2. Each decision is one short immediate transaction (``shell.ledger.resolution``), safe beside
   a running connector; a lock held past the busy timeout is "the ledger is busy",
   EXIT_UNAVAILABLE, and nothing was changed.
3. Who decided is recorded on the intent: ``--by``, by default ``local:<user name>``, made one
   line without control characters; an empty one is refused.
4. ``main`` is the seam: a ``UserError`` becomes one line on stderr and its exit code; bad
   usage is argparse's 2. A person never sees a traceback for bad input.
5. Output is for a person, or with ``--json`` for a machine (stdout only; errors stay one
   line on stderr). ``show`` prints the body: the connector's own fixed-form words. No log
   line carries a body.
"""

from __future__ import annotations

import argparse
import getpass
import json
import logging
import os
import shlex
import sqlite3
import sys
import textwrap
import unicodedata
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from core.edges import IntentState
from core.resolution import Abandon, Resend, Resolution, Sent, open_decisions
from core.timestamps import format_timestamp
from shell.cli.arguments import positive_integer
from shell.clock import Clock, SystemClock
from shell.errors import EXIT_CONFIG, EXIT_OK, EXIT_UNAVAILABLE, EXIT_USAGE, UserError, reader_went_away
from shell.ledger import outbox as rows
from shell.ledger.connection import (
    BUSY_TIMEOUT_SECONDS,
    Ledger,
    LedgerBusy,
    open_existing_ledger,
    open_ledger_read_only,
)
from shell.ledger.resolution import (
    NoSuchIntent,
    Resolved,
    describe_state,
    is_refused,
    resolve_intent,
    waits_for_person,
)
from shell.state.config import StatePaths

PROG = "bin/outbox-resolve"
LEDGER_ENVIRONMENT = "CONNECTOR_LEDGER"
MAX_BY_LENGTH = 200
NOTHING_WAITS = "nothing waits for a person"

THE_RULE = (
    "Mark sent only after you have seen the message in Basecamp; resend only after you have "
    "seen it is absent -- a resend of a message that exists doubles it."
)

DESCRIPTION = f"""\
A person's decisions about the connector's lifecycle messages that it will not make alone.

Each lifecycle message (guard acknowledgement, holding reply, still-running notice,
completion notice) is an intent in the ledger's outbox, posted exactly once or not at all.
Two kinds wait for a person:

  indeterminate  the connector asked Basecamp to post the message, could not learn whether
                 it was created, and listing the destination did not settle it (no match,
                 several matches, or the listing kept failing). It is never sent again
                 automatically.
  refused        Basecamp refused the request: the intent is canceled with the note
                 "the request was refused; no message was created". Nothing was posted.

Decisions (each records who decided, with --by):

  sent ID --receipt N  indeterminate -> sent. You found the message in Basecamp; N is the
                       id Basecamp gave it (the boost, comment or chat line).
  abandon ID           indeterminate -> abandoned. It will never be sent.
  resend ID            indeterminate or refused -> pending. It is due at once and the
                       connector posts it once more; its reconciliation starts afresh.

{textwrap.fill(THE_RULE, 90)}"""

EPILOG = f"""\
Start with `list`, then `show ID`: it prints the intent, where its message goes, and the
exact commands a person may run for it now.

The ledger is --ledger PATH, --state-dir DIR (its ledger.sqlite3), or ${LEDGER_ENVIRONMENT}.
It is never created here; these commands are safe beside a running connector (each decision is
one short transaction).

exit codes: 0 done; 2 bad usage; 3 no usable ledger (missing, not a ledger, too new, not
owner-only); 4 no such intent; 5 the decision is refused; 6 the ledger is busy."""


# -- who decided -----------------------------------------------------------------------------


def one_line(text: str) -> str:
    """``text`` as one line: control and format characters become spaces, runs of space one."""
    spaced = "".join(" " if unicodedata.category(char).startswith("C") else char for char in text)
    return " ".join(spaced.split())


def deciding_person(given: str | None) -> str:
    """Who decides: ``--by`` as given, or ``local:<user name>``; one line, never empty."""
    if given is None:
        try:
            user = one_line(getpass.getuser())
        except (OSError, KeyError, ImportError):
            user = ""
        if not user:
            raise UserError("cannot tell who you are from the system; name yourself with --by WHO",
                            EXIT_USAGE)
        return f"local:{user}"
    person = one_line(given)
    if not person:
        raise UserError("--by names who decided; it may not be empty", EXIT_USAGE)
    if len(person) > MAX_BY_LENGTH:
        raise UserError(f"--by is at most {MAX_BY_LENGTH} characters", EXIT_USAGE)
    return person


# -- the parser ------------------------------------------------------------------------------


def _global_options(parser: argparse.ArgumentParser, *, suppress: bool) -> None:
    """The options every command takes, before or after the command's name."""

    def default(value: object) -> object:
        return argparse.SUPPRESS if suppress else value

    parser.add_argument(
        "--ledger",
        metavar="PATH",
        default=default(None),
        help=f"the connector's ledger file (default: ${LEDGER_ENVIRONMENT})",
    )
    parser.add_argument(
        "--state-dir",
        metavar="DIR",
        default=default(None),
        help="the state directory `bin/connect setup` wrote: its ledger.sqlite3 (instead of --ledger)",
    )
    parser.add_argument(
        "--json", action="store_true", default=default(False), help="print JSON for a machine to read"
    )
    parser.add_argument(
        "--by",
        metavar="WHO",
        default=default(None),
        help="who decides, recorded on the intent (default: local:<your user name>)",
    )
    parser.add_argument(
        "-v", "--verbose", action="store_true", default=default(False), help="log each change to stderr"
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _global_options(parser, suppress=False)
    common = argparse.ArgumentParser(add_help=False)
    _global_options(common, suppress=True)
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    listing = commands.add_parser(
        "list",
        parents=[common],
        help="intents waiting for a person (indeterminate and refused)",
        description=(
            "List the intents waiting for a person: indeterminate ones, and canceled ones whose "
            "request Basecamp refused. Age counts from when the intent last changed."
        ),
    )
    listing.add_argument("--all", action="store_true", help="list every intent, whatever its state")
    listing.set_defaults(run=_list)

    show = commands.add_parser(
        "show",
        parents=[common],
        help="everything about one intent, and what a person may do with it",
        description="Print every column of one intent, and the exact commands a person may run for it now.",
    )
    show.add_argument("id", metavar="ID", type=positive_integer, help="the intent's id (from `list`)")
    show.set_defaults(run=_show)

    sent = commands.add_parser(
        "sent",
        parents=[common],
        help="indeterminate -> sent, with the id of the message you found in Basecamp",
        description=(
            "Mark an indeterminate intent sent: you found its message in Basecamp, and N is the "
            f"id Basecamp gave it. {THE_RULE}"
        ),
    )
    sent.add_argument("id", metavar="ID", type=positive_integer, help="the intent's id")
    sent.add_argument(
        "--receipt", metavar="N", type=positive_integer, required=True, help="the message's id in Basecamp"
    )
    sent.set_defaults(run=_decide, decision="sent")

    abandon = commands.add_parser(
        "abandon",
        parents=[common],
        help="indeterminate -> abandoned: it will never be sent",
        description="Abandon an indeterminate intent: its message will never be sent.",
    )
    abandon.add_argument("id", metavar="ID", type=positive_integer, help="the intent's id")
    abandon.set_defaults(run=_decide, decision="abandon")

    resend = commands.add_parser(
        "resend",
        parents=[common],
        help="indeterminate or refused -> pending: post it once more",
        description=(
            "Send an indeterminate or refused intent once more: it is pending and due at once, "
            f"and its reconciliation starts afresh. {THE_RULE}"
        ),
    )
    resend.add_argument("id", metavar="ID", type=positive_integer, help="the intent's id")
    resend.set_defaults(run=_decide, decision="resend")
    return parser


# -- running ---------------------------------------------------------------------------------


class _Context:
    """What a command needs besides its arguments: the ledger's path, the clock, the timeout."""

    def __init__(self, args: argparse.Namespace, clock: Clock, busy_timeout: float) -> None:
        if args.ledger is not None and args.state_dir is not None:
            raise UserError("name the ledger once: --ledger PATH or --state-dir DIR, not both", EXIT_USAGE)
        if args.state_dir is not None:
            given = str(StatePaths.at(Path(os.path.expanduser(args.state_dir))).ledger)
        else:
            given = args.ledger if args.ledger is not None else os.environ.get(LEDGER_ENVIRONMENT, "")
        if not given:
            raise UserError(
                f"name the ledger with --ledger PATH, --state-dir DIR or ${LEDGER_ENVIRONMENT}", EXIT_USAGE
            )
        self.ledger_path = os.path.abspath(given)
        self.clock = clock
        self.busy_timeout = busy_timeout
        self.json: bool = args.json

    def read_only(self) -> Ledger:
        return open_ledger_read_only(self.ledger_path, clock=self.clock, busy_timeout=self.busy_timeout)

    def writable(self) -> Ledger:
        return open_existing_ledger(self.ledger_path, clock=self.clock, busy_timeout=self.busy_timeout)

    def command(self, *words: str) -> str:
        return shlex.join([PROG, "--ledger", self.ledger_path, *words])


def main(
    argv: Sequence[str] | None = None,
    *,
    clock: Clock | None = None,
    busy_timeout: float = BUSY_TIMEOUT_SECONDS,
) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as done:  # --help (0) or bad usage (argparse's 2, its message already printed)
        return done.code if isinstance(done.code, int) else EXIT_USAGE
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.WARNING,
        format="%(asctime)s %(name)s %(message)s",
        stream=sys.stderr,
    )
    try:
        context = _Context(args, clock or SystemClock(), busy_timeout)
        code: int = args.run(args, context)
    except LedgerBusy as error:
        print(f"error: the ledger is busy, nothing was changed; try again: {error}", file=sys.stderr)
        return EXIT_UNAVAILABLE
    except UserError as error:
        print(f"error: {error}", file=sys.stderr)
        return error.exit_code
    except sqlite3.DatabaseError as error:
        print(f"error: the ledger could not be read: {error}", file=sys.stderr)
        return EXIT_CONFIG
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return reader_went_away()
    return code


# -- list ------------------------------------------------------------------------------------


def _age_seconds(row: rows.IntentRow, now: datetime) -> int:
    since = row.finished_at or row.sending_at or row.created_at
    return max(0, int((now - since).total_seconds()))


def human_age(seconds: int) -> str:
    """An age as a person reads it: "40 s", "3 min", "2 h", "4 d"."""
    if seconds < 60:
        return f"{seconds} s"
    if seconds < 3600:
        return f"{seconds // 60} min"
    if seconds < 2 * 86400:
        return f"{seconds // 3600} h"
    return f"{seconds // 86400} d"


def _time(moment: datetime | None) -> str | None:
    return None if moment is None else format_timestamp(moment)


def _destination(row: rows.IntentRow) -> dict[str, Any]:
    return {
        "message_kind": str(row.destination.kind),
        "bucket_id": row.destination.bucket_id,
        "recording_id": row.destination.recording_id,
    }


def _summary(row: rows.IntentRow, now: datetime) -> dict[str, Any]:
    return {
        "id": row.id,
        "kind": str(row.kind),
        "state": str(row.state),
        "refused": is_refused(row.state, row.note),
        "waits_for_person": waits_for_person(row.state, row.note),
        "event_id": row.event_id,
        "attempt_id": row.attempt_id,
        "destination": _destination(row),
        "note": row.note,
        "age_seconds": _age_seconds(row, now),
    }


def _list(args: argparse.Namespace, context: _Context) -> int:
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
            human_age(_age_seconds(row, now)),
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


# -- show ------------------------------------------------------------------------------------


def _offers(row: rows.IntentRow, context: _Context, now: datetime) -> list[dict[str, str]]:
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


def _details(row: rows.IntentRow, context: _Context, now: datetime) -> dict[str, Any]:
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
        "destination": _destination(row),
        "body": row.body,
        "created_at": _time(row.created_at),
        "not_before": _time(row.not_before),
        "sending_at": _time(row.sending_at),
        "finished_at": _time(row.finished_at),
        "receipt_id": row.receipt_id,
        "note": row.note,
        "resolved_by": row.resolved_by,
        "reconcile_failures": row.reconcile_failures,
        "reconcile_at": _time(row.reconcile_at),
        "age_seconds": _age_seconds(row, now),
        "decisions": _offers(row, context, now),
    }


def _show(args: argparse.Namespace, context: _Context) -> int:
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


# -- decisions -------------------------------------------------------------------------------


def _resolution(args: argparse.Namespace, by: str) -> Resolution:
    match args.decision:
        case "sent":
            return Sent(args.receipt, by)
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
            tail = f"with receipt {after.receipt_id}"
        case IntentState.abandoned:
            tail = "it will never be sent"
        case _:
            tail = "due now: the connector posts it once more; its reconciliation starts afresh"
    return f"{head}, by {after.resolved_by}; {tail}"


def _decide(args: argparse.Namespace, context: _Context) -> int:
    resolution = _resolution(args, deciding_person(args.by))
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
            "not_before": _time(after.not_before),
            "finished_at": _time(after.finished_at),
        }, ensure_ascii=False, indent=2))
    else:
        print(_changed_line(resolved))
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
