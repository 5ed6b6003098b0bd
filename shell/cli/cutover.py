"""``bin/connect shadow promote`` and ``bin/connect import``: taking over from another connector.
Promote makes the shadow run's ledger the connector's, under the hold; import applies a
reconciliation file in one transaction, or nothing (each ``--help`` gives the exit codes).

Both need the connector stopped: each takes its instance lock (``shell.state.lock``; promote the
shadow's too, after it) for the whole of its work and refuses naming the holder while one runs,
never stopping a process itself. Promote's steps and their crash safety are
``shell.state.promotion``'s: a crash at any point leaves the untouched shadow or a held ledger,
and running promote again finishes; once finished it says so and changes nothing. An import file
is refused larger than ``MAX_BYTES`` before it is read whole (its size first, then a read of at
most one byte more); reading and checking it is ``core.import_file.parse``, applying it one
transaction (``shell.ledger.decisions.apply_import``)."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
from pathlib import Path

from returns.result import Failure, Success

from core import import_file
from core.import_file import MAX_BYTES
from shell.cli.arguments import add_person_arguments
from shell.cli.decisions import person_of
from shell.cli.main import Subparsers, add_command
from shell.errors import EXIT_OK, EXIT_REFUSED, EXIT_USAGE, UserError
from shell.ledger.decisions import apply_import
from shell.state.config import SHADOW_DIRECTORY, load_config
from shell.state.lock import AlreadyRunning, acquire
from shell.state.promotion import promote

PROMOTE_DESCRIPTION = """\
Turn the shadow run's ledger into the connector's under the durable hold. Both the
shadow connector and the connector must be stopped. It sets the hold and tags every
open shadow record for review in one transaction, then moves the ledger into the
connector's state directory (an existing one is kept aside, named). A crash at any
point leaves the untouched shadow or a held ledger: run promote again to finish.
Start the connector afterwards: intake goes on from the shadow's position, nothing
dispatches until `bin/connect release`, and held records wait for a person."""

PROMOTE_EPILOG = """\
examples:
  bin/connect shadow promote                 # both connectors stopped first
  bin/connect shadow promote --state-dir ~/.local/state/basecamp-connector/999999999-1049715901 --json
  bin/connect run                            # then start the connector: it runs held
  bin/connect release                        # when the held records are reviewed

exit codes: 0 promoted, or already promoted; 2 bad arguments; 3 no configuration, no shadow
ledger, or a state directory promote cannot make sense of (the line says what to do); 6 the
connector or the shadow connector runs (the line names its pid), or a ledger stayed busy."""


def register_shadow(subparsers: Subparsers) -> None:
    shadow = add_command(subparsers, "shadow", "What to do with the ledger a `bin/connect run --shadow` "
                         "kept.", PROMOTE_EPILOG)
    verbs = shadow.add_subparsers(dest="verb", metavar="VERB", required=True)
    parser = verbs.add_parser("promote", help="make the shadow's ledger the connector's, under the hold",
                              description=PROMOTE_DESCRIPTION, epilog=PROMOTE_EPILOG,
                              formatter_class=argparse.RawDescriptionHelpFormatter)
    add_person_arguments(parser, "who promotes, recorded with the hold (default local:<your user name>)")
    parser.set_defaults(run=_promote)


def _promote(args: argparse.Namespace) -> int:
    deciding = person_of(args)
    by, paths, clock = deciding.by, deciding.paths, deciding.clock
    configuration = load_config(paths.config)
    ids = (configuration.account_id, configuration.agent_id)
    shadow = paths.directory / SHADOW_DIRECTORY
    with contextlib.ExitStack() as locks:
        locks.enter_context(acquire(paths.directory, *ids, clock.now()))
        if shadow.is_dir():
            try:
                locks.enter_context(acquire(shadow, *ids, clock.now()))
            except AlreadyRunning as running:
                raise AlreadyRunning(f"the shadow connector runs: {running}") from None
        done = promote(paths.directory, shadow, by, clock)
    result = {"promoted": not done.already, "already": done.already, "tagged_for_review": done.tagged,
              "held": done.held, "old_ledger_kept_as": done.aside,
              "steps": [str(step) for step in done.steps], "summary": done.summary}  # fmt: skip
    print(json.dumps(result, indent=2) if args.json else result["summary"])
    return EXIT_OK


IMPORT_DESCRIPTION = """\
Apply a reconciliation file in one transaction: a tombstone for every entry decided
done (discarded as imported_done; a record never seen gets a tombstone row, so it is
never admitted), and the review tag on every other open record, each keeping its
state and blocking reason. A file with an entry that cannot be applied changes
nothing. The connector must be stopped."""

IMPORT_EPILOG = """\
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


def register_import(subparsers: Subparsers) -> None:
    parser = add_command(subparsers, "import", IMPORT_DESCRIPTION, IMPORT_EPILOG)
    parser.add_argument("file", metavar="FILE", help="the reconciliation file (version-1 JSON)")
    add_person_arguments(parser, "who imports, recorded on each decision (default local:<user name>)")
    parser.set_defaults(run=_import)


def read_limited(path: Path) -> bytes:
    try:
        with path.open("rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            if size > MAX_BYTES:  # said before a byte is read; a stream is cut at one byte more
                raise UserError(f"{path}: {size} bytes, larger than {MAX_BYTES // (1024 * 1024)} MB; nothing "
                                "was changed", EXIT_USAGE)
            return handle.read(MAX_BYTES + 1)
    except OSError as error:
        raise UserError(f"{path}: cannot be read ({error.strerror or error})", EXIT_USAGE) from error


def _import(args: argparse.Namespace) -> int:
    deciding = person_of(args)
    path, paths, clock = Path(args.file), deciding.paths, deciding.clock
    configuration = load_config(paths.config)
    with acquire(paths.directory, configuration.account_id, configuration.agent_id, clock.now()):
        match import_file.parse(read_limited(path)):
            case Failure(import_file.NotAFile(why=why)):
                raise UserError(f"{path}: {why}; nothing was changed", EXIT_USAGE)
            case Failure(bad):
                raise UserError(f"{path}: {bad}; nothing was changed", EXIT_REFUSED)
            case Success(entries):
                pass
        with deciding.ledger() as ledger:  # a full disk: one line, nothing recorded
            match apply_import(ledger, entries, deciding.by, clock.now(), path.name):
                case Failure(bad):
                    raise UserError(f"{path}: {bad}; nothing was changed", EXIT_REFUSED)
                case Success(done):
                    plan = done.plan
    result = {"imported": plan.entries, "tombstoned": [record.event_id for record in plan.discard],
              "tombstones_added": list(plan.tombstones), "tagged_for_review": list(plan.review),
              "done_already": list(plan.already), "held_not_in_ledger": list(plan.unknown_held),
              "canceled_intents": list(done.canceled_intents), "summary": plan.summary}  # fmt: skip
    print(json.dumps(result, indent=2) if args.json else result["summary"])
    return EXIT_OK
