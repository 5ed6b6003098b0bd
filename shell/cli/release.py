"""``bin/connect release``: a person clears the durable hold.

Rules:
1. One write transaction (``shell.ledger.hold.release``) on the ledger as it exists, safe beside
   a running connector: from its commit, records admitted after the hold and records a person
   authorized dispatch, and the outbox sends what is due. Held records stay held until each is
   redispatched or discarded.
2. "Released; N held records stay held", or "No hold stood" (not an error), exit 0; ``--json``
   prints the same facts. The ledger missing or too new is exit 3.
"""

from __future__ import annotations

import argparse

from shell.cli import person
from shell.cli.commands import SUMMARIES
from shell.ledger.hold import release

EPILOG = """\
examples:
  bin/connect release
  bin/connect release --by ana --json

exit codes: 0 released, or no hold stood; 3 no configuration or usable ledger; 6 the ledger
stayed busy."""


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "release",
        help=SUMMARIES["release"],
        description=(
            "Clear the durable hold that `bin/connect hold` or `run --hold` set. Records a person\n"
            "authorized, and records that arrived after the hold, dispatch; held records stay held\n"
            "until each is redispatched or discarded. Safe while the connector runs."
        ),
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    person.add_arguments(parser, "who releases it (default local:<your user name>)")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    deciding = person.person_of(args)
    with deciding.ledger() as ledger:
        released = release(ledger, deciding.by, deciding.clock.now())
    stood = released.hold
    result = {
        "released": stood is not None,
        "released_by": deciding.by if stood is not None else None,
        "generation": None if stood is None else stood.generation,
        "held_records": released.held_records,
        "summary": released.summary,
    }
    return person.answer(args, result)
