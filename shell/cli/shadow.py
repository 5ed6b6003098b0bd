"""``bin/connect shadow promote``: the shadow run's ledger becomes the connector's, under the hold
.

Rules:
1. Both connectors must be stopped: promote takes both instance locks (``shell.state.lock``), the
   connector's then the shadow's, and refuses naming the holder while either runs (exit 6). It
   never stops a process itself.
2. The steps and their crash safety are ``shell.state.promotion``'s (the order is
   ``core.promotion``'s): a crash at any point leaves the untouched shadow or a held ledger, and
   running promote again finishes; once finished, it says so and changes nothing.
3. One summary line, exit 0; ``--json`` prints the same facts. Nothing to promote, or a state
   directory promote cannot make sense of, is exit 3 with one line saying what to do.
"""

from __future__ import annotations

import argparse
import contextlib
import json
from pathlib import Path

from shell.cli.arguments import add_state_arguments
from shell.cli.commands import SUMMARIES
from shell.cli.who import deciding_person
from shell.clock import SystemClock
from shell.errors import EXIT_OK
from shell.state.config import SHADOW_DIRECTORY, load_config, locate_state
from shell.state.lock import AlreadyRunning, InstanceLock, acquire
from shell.state.promotion import promote

EPILOG = """\
examples:
  bin/connect shadow promote                 # both connectors stopped first
  bin/connect shadow promote --state-dir ~/.local/state/basecamp-connector/999999999-1049715901 --json
  bin/connect run                            # then start the connector: it runs held
  bin/connect release                        # when the held records are reviewed

exit codes: 0 promoted, or already promoted; 2 bad arguments; 3 no configuration, no shadow
ledger, or a state directory promote cannot make sense of (the line says what to do); 6 the
connector or the shadow connector runs (the line names its pid), or a ledger stayed busy."""


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    shadow = subparsers.add_parser(
        "shadow",
        help=SUMMARIES["shadow"],
        description="What to do with the ledger a `bin/connect run --shadow` kept.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    verbs = shadow.add_subparsers(dest="verb", metavar="VERB", required=True)
    parser = verbs.add_parser(
        "promote",
        help="make the shadow's ledger the connector's, under the hold",
        description=(
            "Turn the shadow run's ledger into the connector's under the durable hold. Both the\n"
            "shadow connector and the connector must be stopped. It sets the hold and tags every\n"
            "open shadow record for review in one transaction, then moves the ledger into the\n"
            "connector's state directory (an existing one is kept aside, named). A crash at any\n"
            "point leaves the untouched shadow or a held ledger: run promote again to finish.\n"
            "Start the connector afterwards: intake goes on from the shadow's position, nothing\n"
            "dispatches until `bin/connect release`, and held records wait for a person."
        ),
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_state_arguments(parser)
    parser.add_argument("--by", help="who promotes, recorded with the hold (default local:<your user name>)")
    parser.add_argument("--json", action="store_true", help="print the result as JSON on stdout")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    by = deciding_person(args.by)
    paths = locate_state(args.state_dir, args.account, args.agent)
    configuration = load_config(paths.config)
    ids = (configuration.account_id, configuration.agent_id)
    clock = SystemClock()
    shadow = paths.directory / SHADOW_DIRECTORY
    with contextlib.ExitStack() as locks:
        locks.enter_context(acquire(paths.directory, *ids, clock.now()))
        if shadow.is_dir():
            locks.enter_context(_shadow_lock(shadow, ids, clock))
        done = promote(paths.directory, shadow, by, clock)
    result = {
        "promoted": not done.already,
        "already": done.already,
        "tagged_for_review": done.tagged,
        "held": done.held,
        "old_ledger_kept_as": done.aside,
        "steps": [str(step) for step in done.steps],
        "summary": done.summary,
    }
    print(json.dumps(result, indent=2) if args.json else result["summary"])
    return EXIT_OK


def _shadow_lock(shadow: Path, ids: tuple[int, int], clock: SystemClock) -> InstanceLock:
    try:
        return acquire(shadow, *ids, clock.now())
    except AlreadyRunning as running:
        raise AlreadyRunning(f"the shadow connector runs: {running}") from None
