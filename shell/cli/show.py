"""``bin/connect show EVENT_ID``: one event's history, read beside a running connector as ``status`` reads:
the ledger opened read-only (never created or migrated), no lock taken (``shell.ledger.history``
reads, ``core.presentation.event_history`` tells). An id the ledger holds no record of is one line
and ``EXIT_NOT_FOUND``, as for every command naming an event."""

from __future__ import annotations

import argparse
import json
import sqlite3

from core.presentation.event_history import lines, report
from core.text import printable
from shell.cli.arguments import add_state_arguments, positive_integer
from shell.cli.main import Subparsers, add_command
from shell.errors import EXIT_CONFIG, EXIT_NOT_FOUND, EXIT_OK, UserError
from shell.ledger.connection import open_ledger_read_only
from shell.ledger.history import read_history
from shell.state.config import locate_state

DESCRIPTION = """\
Tell one event's history, from the ledger, in time order, without disturbing a running connector.

It shows how the event was heard (the lane that brought it first, when), its verdict, each task
that carried it with its attempts (launched, running with pid and session, how each ended, the
worker's result and cost), every lifecycle message and worker's message of the event or of its
tasks' attempts (when written, claimed and finished; posted, adopted by reconciliation or marked
sent by a person, with the message id), the worker's ack_id and reply_id, and every person's
decision on it.

The ledger keeps no log of moves, only the times its rows carry: an intent's written, retrying
since, claimed and finished times and the note of its last move; the record's latest verdict, and
the record as it was at each decision. Message bodies are not shown (bin/outbox-resolve show ID).

Examples:
  bin/connect show 7000000001
  bin/connect show 7000000001 --state-dir ~/.local/state/basecamp-connector/999-42 --json

exit codes: 0 shown; 2 bad usage; 3 no state directory or usable ledger; 4 no such event; 6 the
ledger stayed busy."""


def register(subparsers: Subparsers) -> None:
    parser = add_command(subparsers, "show", DESCRIPTION)
    parser.add_argument("event_id", type=positive_integer, metavar="EVENT_ID",
                        help="the event's id, as status, the log and notices name it")
    add_state_arguments(parser)
    parser.add_argument("--json", action="store_true", help="print one JSON object (keys: see the README)")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    paths = locate_state(args.state_dir, args.account, args.agent)
    if not paths.directory.is_dir():
        raise UserError(f"no state directory at {paths.directory}: run bin/connect setup first", EXIT_CONFIG)
    try:
        with open_ledger_read_only(paths.ledger) as ledger:
            history = read_history(ledger, args.event_id)
    except sqlite3.DatabaseError as error:
        raise UserError(f"{paths.ledger}: the ledger could not be read: {error}", EXIT_CONFIG) from error
    if history is None:
        raise UserError(f"the ledger holds no event {args.event_id}", EXIT_NOT_FOUND)
    if args.json:
        print(json.dumps(report(history), ensure_ascii=False, indent=2))
    else:
        print("\n".join(printable(line) for line in lines(history)))
    return EXIT_OK
