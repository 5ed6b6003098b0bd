"""``bin/outbox-resolve`` (``python -m shell.cli.resolve``): a person's decisions about lifecycle
messages the connector left them (its ``--help`` says which wait, each decision and exit code).

The ledger is named once, by an option taken before or after the verb. ``list`` and ``show`` read
it read-only; ``sent``, ``abandon`` and ``resend`` open it as it exists (``deciding_on``): none
creates, migrates or tightens one, and each decision is one short transaction
(``shell.ledger.resolution``). A command a person is offered names the ledger by its absolute
path, quoted for a shell; ``show`` prints the body whole (no log line carries one), each control
or format character as its escape (``core.text.printable``), and ``--json`` is ASCII. ``sent``
reads message N first unless ``--unchecked`` (the intent's note, the line and ``--json``'s
``receipt_checked`` say which); ``core.adoption.check_receipt`` decides, given the worker's own
message ids the ledger holds for N. An intent the decision is refused for anyway is not asked
about, and no refusal writes anything."""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sqlite3
import sys
import textwrap
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from datetime import datetime
from pathlib import Path
from typing import Any

from returns.result import Failure

from core import notes
from core.admission import ReadFailure, ReadFailureKind
from core.adoption import check_receipt, worker_message_ids
from core.edges import IntentState
from core.file_kinds import CONFIG_NAME
from core.posting import listing_since
from core.resolution import Abandon, Resend, Resolution, Sent, open_decisions
from core.text import printable
from core.timestamps import format_timestamp
from shell.basecamp.client import DEFAULT_READ_TIMEOUT, BasecampClient
from shell.basecamp.reads import SummaryReads
from shell.basecamp.tokens import tokens_from
from shell.cli.arguments import deciding_person, one_line, positive_integer
from shell.cli.decisions import deciding_on
from shell.cli.seam import CommandParser, OwnWords, answer, guard, log_to_stderr, parse_arguments
from shell.clock import Clock, SystemClock
from shell.errors import EXIT_CONFIG, EXIT_OK, EXIT_REFUSED, EXIT_UNAVAILABLE, EXIT_USAGE, UserError
from shell.ledger import outbox as rows
from shell.ledger import snapshots
from shell.ledger.connection import BUSY_TIMEOUT_SECONDS, Ledger, LedgerBusy, open_ledger_read_only
from shell.ledger.resolution import NoSuchIntent, describe_state, is_refused, resolve_intent, waits_for_person
from shell.state.config import StatePaths, load_config

PROG = "bin/outbox-resolve"
LEDGER_ENVIRONMENT = "CONNECTOR_LEDGER"
USER_AGENT = "basecamp-connector outbox-resolve (https://github.com/basecamp/basecamp-connector)"
NOTHING_WAITS = "nothing waits for a person"
LISTED = ("id", "kind", "state", "refused", "waits_for_person", "event_id", "attempt_id", "destination",
          "note", "age_seconds")  # what list --json says of each intent, from what show details

THE_RULE = ("Mark sent only after you have seen the message in Basecamp; resend only after you have "
            "seen it is absent -- a resend of a message that exists doubles it.")

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
                       id Basecamp gave it (the boost, comment or chat line). Message N is
                       read first, through the configuration beside the ledger: it must be
                       at the intent's destination, the agent's, with the intent's words,
                       and not older than the intent's request. --unchecked records it
                       without looking (the intent's note says so).
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

example: bin/outbox-resolve --state-dir ~/.local/state/basecamp-connector/1-2 sent 17 --receipt 9001

exit codes: 0 done; 2 bad usage; 3 no usable ledger (missing, not a ledger, too new, not
owner-only), or no configuration beside it to check a receipt with; 4 no such intent; 5 the
decision is refused (for sent: message N is not the intent's); 6 the ledger is busy, or
Basecamp could not be asked about message N (nothing was changed)."""

SENT_EPILOG = """\
example: bin/outbox-resolve --state-dir DIR sent 17 --receipt 9001
         bin/outbox-resolve --ledger PATH sent 17 --receipt 9001 --unchecked

exit codes: 0 recorded; 3 no usable ledger, or no configuration beside it (--unchecked needs
none); 4 no such intent; 5 refused: the intent is not indeterminate, N is another intent's
receipt, or message N is not the intent's (not found there, someone else's, other words, older
than the request); 6 the ledger is busy, or Basecamp could not be asked about N."""

OWN_WORDS = (
    OwnWords(LedgerBusy, lambda error: f"the ledger is busy, nothing was changed; try again: {error}",
             EXIT_UNAVAILABLE),
    OwnWords(sqlite3.DatabaseError, lambda error: f"the ledger could not be read: {error}", EXIT_CONFIG))


class Context:
    def __init__(self, args: argparse.Namespace, clock: Clock, busy_timeout: float) -> None:
        if args.ledger is not None and args.state_dir is not None:
            raise UserError("name the ledger once: --ledger PATH or --state-dir DIR, not both", EXIT_USAGE)
        if args.state_dir is not None:
            given = str(StatePaths.at(Path(os.path.expanduser(args.state_dir))).ledger)
        else:
            given = args.ledger if args.ledger is not None else os.environ.get(LEDGER_ENVIRONMENT, "")
        if not given:
            raise UserError(f"name the ledger with --ledger PATH, --state-dir DIR or ${LEDGER_ENVIRONMENT}",
                            EXIT_USAGE)  # fmt: skip
        self.ledger_path = os.path.abspath(given)
        self.config_path = Path(self.ledger_path).parent / CONFIG_NAME
        self.clock, self.busy_timeout, self.json = clock, busy_timeout, bool(args.json)

    def read_only(self) -> Ledger:
        return open_ledger_read_only(self.ledger_path, clock=self.clock, busy_timeout=self.busy_timeout)

    def writable(self) -> AbstractContextManager[Ledger]:
        return deciding_on(Path(self.ledger_path), self.clock, self.busy_timeout)

    def command(self, *words: str) -> str:
        return shlex.join([PROG, "--ledger", self.ledger_path, *words])


Verb = Callable[[argparse.Namespace, Context], int]


def age_seconds(row: rows.IntentRow, now: datetime) -> int:
    since = row.finished_at or row.sending_at or row.created_at
    return max(0, int((now - since).total_seconds()))


def human_age(seconds: int) -> str:
    """An age as a person reads it: "40 s", "3 min", "2 h", "4 d"."""
    if seconds < 60:
        return f"{seconds} s"
    if seconds < 3600:
        return f"{seconds // 60} min"
    return f"{seconds // 3600} h" if seconds < 2 * 86400 else f"{seconds // 86400} d"


def time_text(moment: datetime | None) -> str | None:
    return None if moment is None else format_timestamp(moment)


def _state(state: IntentState, note: str) -> str:
    return "refused" if is_refused(state, note) else str(state)


def _list(args: argparse.Namespace, context: Context) -> int:
    with context.read_only() as ledger, ledger.read() as connection:
        if args.all:
            found = rows.intents_in(connection, list(IntentState))
        else:
            waiting = rows.intents_in(connection, [IntentState.indeterminate, IntentState.canceled])
            found = [row for row in waiting if waits_for_person(row.state, row.note)]
    now = context.clock.now()
    if context.json:
        listed = [_details(row, context, now) for row in found]
        print(json.dumps([{key: one[key] for key in LISTED} for one in listed], ensure_ascii=True, indent=2))
        return EXIT_OK
    if not found:
        print(NOTHING_WAITS if not args.all else "the ledger holds no intents")
        return EXIT_OK
    table = [("ID", "KIND", "STATE", "EVENT", "ATTEMPT", "DESTINATION", "AGE", "NOTE")]
    table += [(str(row.id), str(row.kind), _state(row.state, row.note),
               "-" if row.event_id is None else str(row.event_id), row.attempt_id or "-",
               row.destination.describe(), human_age(age_seconds(row, now)), one_line(row.note) or "-")
              for row in found]  # fmt: skip
    widths = [max(len(line[column]) for line in table) for column in range(len(table[0]) - 1)]
    for line in table:
        padded = (cell.ljust(width) for cell, width in zip(line, widths, strict=False))
        print("  ".join([*padded, line[-1]]))
    waiting_count = sum(1 for row in found if waits_for_person(row.state, row.note))
    if not waiting_count:
        print(NOTHING_WAITS)
        return EXIT_OK
    refused = any(is_refused(row.state, row.note) for row in found)
    meaning = " (refused: Basecamp refused the request, so no message exists)" if refused else ""
    print(f"\n{waiting_count} waiting for a person{meaning}.")
    print(f"See one, and what you may do with it: {PROG} show ID")
    return EXIT_OK


def _show(args: argparse.Namespace, context: Context) -> int:
    with context.read_only() as ledger, ledger.read() as connection:
        row = rows.intent(connection, args.id)
    if row is None:
        raise NoSuchIntent(f"no intent {args.id} in this ledger; `list --all` shows every intent")
    details = _details(row, context, context.clock.now())
    if context.json:
        print(json.dumps(details, ensure_ascii=True, indent=2))
        return EXIT_OK
    print(f"intent {row.id}: {row.kind}, {describe_state(row.state, row.note)}")
    fields = [
        ("key", row.key), ("event", row.event_id), ("task", row.task_id), ("attempt", row.attempt_id),
        ("occurrence", row.occurrence),
        ("destination", f"{row.destination.describe()} in project {row.destination.bucket_id}"),
        ("created at", details["created_at"]), ("not before", details["not_before"]),
        ("sending at", details["sending_at"]), ("finished at", details["finished_at"]),
        ("age", human_age(details["age_seconds"])), ("receipt", row.receipt_id), ("note", row.note),
        ("resolved by", row.resolved_by), ("reconcile failures", row.reconcile_failures),
        ("reconcile at", details["reconcile_at"])]  # fmt: skip
    for name, value in fields:
        print(f"  {name + ':':<20}{'-' if value is None or value == '' else printable(str(value))}")
    print("  body:")
    for line in row.body.splitlines() or [""]:
        print(f"    {printable(line)}")
    if not details["decisions"]:
        print(f"\nNothing for a person to decide: it is {describe_state(row.state, row.note)}.")
        return EXIT_OK
    print(f"\nWhat you may do now (look for the message: {row.destination.describe()}, among the agent's):")
    for offer in details["decisions"]:
        print(f"  if {offer['when']}:\n    {offer['command']}")
    print(f"\n{THE_RULE}")
    return EXIT_OK


_OFFERS = {  # what a person must have seen to take it, and the command's further words
    "sent": ("you have seen the message in Basecamp: record its id as the receipt",
             ("--receipt", "MESSAGE_ID")),
    "abandon": ("it should never be sent", ()),
    "resend": ("you have seen the message is not there: post it once more", ()),
}


def _details(row: rows.IntentRow, context: Context, now: datetime) -> dict[str, Any]:
    return {
        "id": row.id, "intent_key": row.key, "kind": str(row.kind), "state": str(row.state),
        "refused": is_refused(row.state, row.note), "waits_for_person": waits_for_person(row.state, row.note),
        "event_id": row.event_id, "task_id": row.task_id, "attempt_id": row.attempt_id,
        "occurrence": row.occurrence,
        "destination": {"message_kind": str(row.destination.kind), "bucket_id": row.destination.bucket_id,
                        "recording_id": row.destination.recording_id}, "body": row.body,
        "created_at": time_text(row.created_at), "not_before": time_text(row.not_before),
        "sending_at": time_text(row.sending_at), "finished_at": time_text(row.finished_at),
        "receipt_id": row.receipt_id, "note": row.note, "resolved_by": row.resolved_by,
        "reconcile_failures": row.reconcile_failures, "reconcile_at": time_text(row.reconcile_at),
        "age_seconds": age_seconds(row, now),
        "decisions": [{"decision": decision, "when": _OFFERS[decision][0],
                       "command": context.command(decision, str(row.id), *_OFFERS[decision][1])}
                      for decision in open_decisions(row.state, row.note)]}  # fmt: skip


def _decide(args: argparse.Namespace, context: Context) -> int:
    by = deciding_person(args.by)
    if args.decision == "sent":
        checked = not args.unchecked and check_receipt_at_basecamp(context, args.id, args.receipt)
        resolution: Resolution = Sent(args.receipt, by, checked=checked)
    else:
        resolution = Abandon(by) if args.decision == "abandon" else Resend(by)
    with context.writable() as ledger:
        resolved = resolve_intent(ledger, args.id, resolution)
    after = resolved.after
    if not context.json:
        head = f"intent {after.id} ({after.kind}, {after.destination.describe()}): "
        match after.state:
            case IntentState.sent:
                how = "read and checked" if after.note == notes.RESOLVED_SENT_CHECKED else "unchecked"
                tail = f"with receipt {after.receipt_id} ({how})"
            case IntentState.abandoned:
                tail = "it will never be sent"
            case _:
                tail = "due now: the connector posts it once more; its reconciliation starts afresh"
        print(f"{head}{_state(resolved.before, resolved.before_note)} -> {after.state}, "
              f"by {after.resolved_by}; {tail}")
        return EXIT_OK
    print(json.dumps({
        "id": after.id, "decision": args.decision, "from": str(resolved.before), "to": str(after.state),
        "note": after.note, "resolved_by": after.resolved_by, "receipt_id": after.receipt_id,
        "receipt_checked": after.note == notes.RESOLVED_SENT_CHECKED if after.receipt_id else None,
        "not_before": time_text(after.not_before), "finished_at": time_text(after.finished_at),
    }, ensure_ascii=True, indent=2))  # fmt: skip
    return EXIT_OK


def check_receipt_at_basecamp(context: Context, intent_id: int, receipt_id: int) -> bool:
    """True when message ``receipt_id`` was read and is intent ``intent_id``'s; False when the
    intent is not one to check; else the error that says why it cannot be recorded."""
    with context.read_only() as ledger, ledger.read() as connection:
        row = rows.intent(connection, intent_id)
        workers = snapshots.worker_task_events(connection, [receipt_id])
    if row is None or "sent" not in open_decisions(row.state, row.note):
        return False
    try:
        configuration = load_config(context.config_path)
    except UserError as error:
        raise UserError(f"{error}; checking a receipt reads Basecamp as the connector does, through the "
                        "configuration beside the ledger (give --state-dir DIR), or --unchecked to record it "
                        "without looking", EXIT_CONFIG) from error
    token_file = Path(configuration.token_file)
    tokens = tokens_from(token_file, context.clock)
    client = BasecampClient(configuration.base_url, configuration.account_id, tokens, USER_AGENT,
                            clock=context.clock)  # fmt: skip
    reads = SummaryReads(client, configuration.agent_id, context.clock)
    read = reads.message(row.destination, receipt_id, client.deadline_in(DEFAULT_READ_TIMEOUT))
    if isinstance(read, ReadFailure) and read.kind is not ReadFailureKind.not_found:
        raise UserError(f"intent {intent_id}: could not read message {receipt_id} at "
                        f"{row.destination.describe()} from {configuration.base_url} ({read.kind}); nothing "
                        "was changed. Try again, or --unchecked to record it without looking",
                        EXIT_UNAVAILABLE)
    verdict = check_receipt(
        receipt_id=receipt_id, body=row.body, destination=row.destination, agent_id=configuration.agent_id,
        since=listing_since(row.sending_at, row.created_at),
        found=None if isinstance(read, ReadFailure) else read,
        worker_messages=worker_message_ids(row.destination.kind, workers))  # fmt: skip
    if isinstance(verdict, Failure):
        raise UserError(f"intent {intent_id}: {verdict.failure()}; nothing was changed", EXIT_REFUSED)
    return True


def _global_options(parser: argparse.ArgumentParser, *, suppress: bool) -> None:
    """The options every verb takes before or after its name (a default after would overwrite one before)."""
    none, false = (argparse.SUPPRESS, argparse.SUPPRESS) if suppress else (None, False)
    parser.add_argument("--ledger", metavar="PATH", default=none,
                        help=f"the connector's ledger file (default: ${LEDGER_ENVIRONMENT})")
    parser.add_argument("--state-dir", metavar="DIR", default=none, help="the state directory `bin/connect "
                        "setup` wrote: its ledger.sqlite3 (instead of --ledger)")
    parser.add_argument("--json", action="store_true", default=false, help="print JSON for a machine to read")
    parser.add_argument("--by", metavar="WHO", default=none,
                        help="who decides, recorded on the intent (default: local:<your user name>)")
    parser.add_argument("-v", "--verbose", action="store_true", default=false,
                        help="log each change to stderr")


def build_parser() -> argparse.ArgumentParser:
    raw = argparse.RawDescriptionHelpFormatter
    parser: argparse.ArgumentParser = CommandParser(prog=PROG, description=DESCRIPTION, epilog=EPILOG,
                                                    formatter_class=raw)
    _global_options(parser, suppress=False)
    common = argparse.ArgumentParser(add_help=False)
    _global_options(common, suppress=True)
    verbs = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    def verb(name: str, summary: str, description: str, run: Verb, id_help: str | None = "the intent's id",
             **more: Any) -> argparse.ArgumentParser:
        found = verbs.add_parser(name, parents=[common], help=summary, description=description, **more)
        if id_help is not None:
            found.add_argument("id", metavar="ID", type=positive_integer, help=id_help)
        found.set_defaults(run=run, decision=name)
        return found

    listing = verb("list", "intents waiting for a person (indeterminate and refused)",
                   "List the intents waiting for a person: indeterminate ones, and canceled ones whose "
                   "request Basecamp refused. Age counts from when the intent last changed.", _list, None)
    listing.add_argument("--all", action="store_true", help="list every intent, whatever its state")
    verb("show", "everything about one intent, and what a person may do with it",
         "Print every column of one intent, and the exact commands a person may run for it now.", _show,
         "the intent's id (from `list`)")
    sent = verb(
        "sent", "indeterminate -> sent, with the id of the message you found in Basecamp",
        "Mark an indeterminate intent sent: you found its message in Basecamp, and N is the "
        "id Basecamp gave it. Message N is read first (through config.json beside the ledger) "
        "and recorded only when it is at the intent's destination, the agent's, with the "
        "intent's words, and not older than its request; --unchecked records it without "
        f"looking. {THE_RULE}", _decide, epilog=SENT_EPILOG, formatter_class=raw)  # fmt: skip
    sent.add_argument("--receipt", metavar="N", type=positive_integer, required=True,
                      help="the message's id in Basecamp")
    sent.add_argument("--unchecked", action="store_true",
                      help="record N without reading it at Basecamp first (the intent's note says so)")
    verb("abandon", "indeterminate -> abandoned: it will never be sent",
         "Abandon an indeterminate intent: its message will never be sent.", _decide)
    verb("resend", "indeterminate or refused -> pending: post it once more",
         "Send an indeterminate or refused intent once more: it is pending and due at once, "
         f"and its reconciliation starts afresh. {THE_RULE}", _decide)
    return parser


def main(argv: Sequence[str] | None = None, *, clock: Clock | None = None,
         busy_timeout: float = BUSY_TIMEOUT_SECONDS) -> int:  # fmt: skip
    try:
        args = parse_arguments(build_parser(), argv)
    except SystemExit as done:  # --help (0) or bad usage (its line already said)
        return done.code if isinstance(done.code, int) else EXIT_USAGE
    log_to_stderr(args.verbose)
    run: Verb = args.run
    return answer(lambda: run(args, Context(args, clock or SystemClock(), busy_timeout)), OWN_WORDS,
                  as_json=bool(args.json))  # fmt: skip


if __name__ == "__main__":
    guard()
    sys.exit(main())
