"""``bin/outbox-resolve``'s parser and ``main``: the verbs' options, one help text, one seam.

Rules:
1. Every option is taken before or after the verb's name; a verb is required.
2. ``main`` runs the verb at ``shell.cli.seam``, with this program's own words for a busy
   ledger (nothing was changed, EXIT_UNAVAILABLE) and an unreadable one (EXIT_CONFIG).
"""

from __future__ import annotations

import argparse
import logging
import sqlite3
import sys
import textwrap
from collections.abc import Callable, Sequence

from shell.cli.arguments import positive_integer
from shell.cli.resolve import decide, listing, show
from shell.cli.resolve.shared import LEDGER_ENVIRONMENT, PROG, THE_RULE, Context
from shell.cli.seam import CommandParser, OwnWords, answer, parse_arguments
from shell.clock import Clock, SystemClock
from shell.errors import EXIT_CONFIG, EXIT_UNAVAILABLE, EXIT_USAGE
from shell.ledger.connection import BUSY_TIMEOUT_SECONDS, LedgerBusy

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
    OwnWords(
        LedgerBusy,
        lambda error: f"the ledger is busy, nothing was changed; try again: {error}",
        EXIT_UNAVAILABLE,
    ),
    OwnWords(sqlite3.DatabaseError, lambda error: f"the ledger could not be read: {error}", EXIT_CONFIG),
)


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
    parser: argparse.ArgumentParser = CommandParser(
        prog=PROG,
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _global_options(parser, suppress=False)
    common = argparse.ArgumentParser(add_help=False)
    _global_options(common, suppress=True)
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    listing_all = commands.add_parser(
        "list",
        parents=[common],
        help="intents waiting for a person (indeterminate and refused)",
        description=(
            "List the intents waiting for a person: indeterminate ones, and canceled ones whose "
            "request Basecamp refused. Age counts from when the intent last changed."
        ),
    )
    listing_all.add_argument("--all", action="store_true", help="list every intent, whatever its state")
    listing_all.set_defaults(run=listing.run)

    showing = commands.add_parser(
        "show",
        parents=[common],
        help="everything about one intent, and what a person may do with it",
        description="Print every column of one intent, and the exact commands a person may run for it now.",
    )
    showing.add_argument("id", metavar="ID", type=positive_integer, help="the intent's id (from `list`)")
    showing.set_defaults(run=show.run)

    sent = commands.add_parser(
        "sent",
        parents=[common],
        epilog=SENT_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        help="indeterminate -> sent, with the id of the message you found in Basecamp",
        description=(
            "Mark an indeterminate intent sent: you found its message in Basecamp, and N is the "
            "id Basecamp gave it. Message N is read first (through config.json beside the ledger) "
            "and recorded only when it is at the intent's destination, the agent's, with the "
            "intent's words, and not older than its request; --unchecked records it without "
            f"looking. {THE_RULE}"
        ),
    )
    sent.add_argument("id", metavar="ID", type=positive_integer, help="the intent's id")
    sent.add_argument(
        "--receipt", metavar="N", type=positive_integer, required=True, help="the message's id in Basecamp"
    )
    sent.add_argument(
        "--unchecked",
        action="store_true",
        help="record N without reading it at Basecamp first (the intent's note says so)",
    )
    sent.set_defaults(run=decide.run, decision="sent")

    abandon = commands.add_parser(
        "abandon",
        parents=[common],
        help="indeterminate -> abandoned: it will never be sent",
        description="Abandon an indeterminate intent: its message will never be sent.",
    )
    abandon.add_argument("id", metavar="ID", type=positive_integer, help="the intent's id")
    abandon.set_defaults(run=decide.run, decision="abandon")

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
    resend.set_defaults(run=decide.run, decision="resend")
    return parser


def main(
    argv: Sequence[str] | None = None,
    *,
    clock: Clock | None = None,
    busy_timeout: float = BUSY_TIMEOUT_SECONDS,
) -> int:
    parser = build_parser()
    try:
        args = parse_arguments(parser, argv)
    except SystemExit as done:  # --help (0) or bad usage (argparse's 2, its message already printed)
        return done.code if isinstance(done.code, int) else EXIT_USAGE
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.WARNING,
        format="%(asctime)s %(name)s %(message)s",
        stream=sys.stderr,
    )
    run: Callable[[argparse.Namespace, Context], int] = args.run
    return answer(
        lambda: run(args, Context(args, clock or SystemClock(), busy_timeout)),
        OWN_WORDS,
        as_json=bool(args.json),
    )
