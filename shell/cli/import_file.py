"""``bin/connect import FILE``: a reconciliation file applied in one transaction, or nothing.
The module is named ``import_file``: ``import`` is Python's own word.

Rules:
1. The connector must be stopped: import takes its instance lock (``shell.state.lock``) for the
   whole of its work, and refuses naming the holder while it runs (exit 6).
2. The file is at most 16 MB, refused larger before it is read whole (its size first, then a read
   of at most one byte more). Reading and checking it is ``core.import_file.parse``; applying
   it ``shell.ledger.decisions.apply_import``, one transaction.
3. A file that cannot be read or is not a version-1 reconciliation file is exit 2; an entry that
   cannot be applied is exit 5, naming the first such entry (its index, its event, why) and
   saying nothing was changed. The ledger missing or too new is exit 3.
4. One summary line, exit 0; ``--json`` prints the same facts.
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

from returns.result import Failure, Success

from core import import_file
from core.import_file import MAX_BYTES
from shell.cli.arguments import add_state_arguments
from shell.cli.commands import SUMMARIES
from shell.cli.person import Decider
from shell.cli.who import deciding_person
from shell.clock import SystemClock
from shell.errors import EXIT_OK, EXIT_REFUSED, EXIT_USAGE, UserError
from shell.ledger.decisions import apply_import
from shell.state.config import load_config, locate_state
from shell.state.lock import acquire

EPILOG = """\
examples:
  bin/connect import reconciliation.json
  bin/connect import reconciliation.json --account 999999999 --agent 1049715901 --json

  the file (version 1, at most 16 MB):
    {"version": 1, "entries": [{"event_id": 123, "decision": "done"},
                               {"event_id": 456, "decision": "held"}]}

exit codes: 0 imported; 2 bad arguments, or a file that cannot be read, is larger than 16 MB, is
not JSON or not version 1; 3 no configuration or usable ledger; 5 an entry cannot be applied (the
line names it; nothing was changed); 6 the connector runs (the line names its pid), or the
ledger stayed busy."""


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "import",
        help=SUMMARIES["import"],
        description=(
            "Apply a reconciliation file in one transaction: a tombstone for every entry decided\n"
            "done (discarded as imported_done; a record never seen gets a tombstone row, so it is\n"
            "never admitted), and the review tag on every other open record, each keeping its\n"
            "state and blocking reason. A file with an entry that cannot be applied changes\n"
            "nothing. The connector must be stopped."
        ),
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("file", metavar="FILE", help="the reconciliation file (version-1 JSON)")
    add_state_arguments(parser)
    parser.add_argument("--by", help="who imports, recorded on each decision (default local:<user name>)")
    parser.add_argument("--json", action="store_true", help="print the result as JSON on stdout")
    parser.set_defaults(run=run)


def read_limited(path: Path) -> bytes:
    """The file's bytes, refused larger than ``MAX_BYTES`` before it is read whole (rule 2)."""
    try:
        with path.open("rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            if size > MAX_BYTES:  # said before a byte is read; a stream is cut at one byte more
                limit = MAX_BYTES // (1024 * 1024)
                too_large = f"{path}: {size} bytes, larger than {limit} MB; nothing was changed"
                raise UserError(too_large, EXIT_USAGE)
            raw = handle.read(MAX_BYTES + 1)
    except OSError as error:
        raise UserError(f"{path}: cannot be read ({error.strerror or error})", EXIT_USAGE) from error
    return raw


def run(args: argparse.Namespace) -> int:
    by = deciding_person(args.by)
    path = Path(args.file)
    paths = locate_state(args.state_dir, args.account, args.agent)
    configuration = load_config(paths.config)
    clock = SystemClock()
    with acquire(paths.directory, configuration.account_id, configuration.agent_id, clock.now()):
        match import_file.parse(read_limited(path)):
            case Failure(import_file.NotAFile(why=why)):
                raise UserError(f"{path}: {why}; nothing was changed", EXIT_USAGE)
            case Failure(bad):
                raise UserError(f"{path}: {bad}; nothing was changed", EXIT_REFUSED)
            case Success(entries):
                pass
        with Decider(by, paths, clock).ledger() as ledger:  # a full disk: one line, nothing recorded
            match apply_import(ledger, entries, by, clock.now(), path.name):
                case Failure(bad):
                    raise UserError(f"{path}: {bad}; nothing was changed", EXIT_REFUSED)
                case Success(done):
                    plan = done.plan
    result = {
        "imported": plan.entries,
        "tombstoned": [record.event_id for record in plan.discard],
        "tombstones_added": list(plan.tombstones),
        "tagged_for_review": list(plan.review),
        "done_already": list(plan.already),
        "held_not_in_ledger": list(plan.unknown_held),
        "canceled_intents": list(done.canceled_intents),
        "summary": plan.summary,
    }
    print(json.dumps(result, indent=2) if args.json else result["summary"])
    return EXIT_OK
