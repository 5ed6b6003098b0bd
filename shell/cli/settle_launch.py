"""``bin/connect settle-launch EVENT_ID --ran | --did-not-run``: a person settles an attempt a
connector left mid-launch.

Rules:
1. The rules are ``core.launch_settlement``'s and the one transaction
   ``shell.ledger.decisions.settle_launch``'s; the ledger is opened as it exists, so this is safe
   beside a running connector.
2. Exactly one of ``--ran`` and ``--did-not-run`` (argparse: exit 2 without one). Who settled it
   is ``--by``, by default ``local:<user name>``, recorded on the attempt.
3. Settled: one summary line, exit 0. Refused (no such launch, or ``--did-not-run`` where a
   worker pulled): one line on stderr, exit 5. ``--json`` prints the same facts on stdout.
"""

from __future__ import annotations

import argparse

from returns.result import Failure, Success

from core.settlement import LaunchFinding
from shell.cli import person
from shell.cli.arguments import positive_integer
from shell.cli.commands import SUMMARIES
from shell.ledger.decisions import settle_launch

EPILOG = """\
examples:
  bin/connect status                                  # flags the launch: NEEDS A PERSON
  bin/connect settle-launch 7000000123 --did-not-run  # no worker ran: it runs again
  bin/connect settle-launch 7000000123 --ran --json   # a worker may have acted: outcome unknown

exit codes: 0 settled; 2 neither or both of --ran and --did-not-run; 3 no configuration or
usable ledger; 5 refused (no launch left for a person on that event's task, or a worker pulled
its instruction, so it ran); 6 the ledger stayed busy."""


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "settle-launch",
        help=SUMMARIES["settle-launch"],
        description=(
            "A connector stopped between launching a worker and recording its process leaves the\n"
            "attempt launching: nobody can tell whether the worker ran, so its task holds the\n"
            "conversation and the project's directory and every later request there waits.\n"
            "`bin/connect status` flags it as NEEDS A PERSON. Check whether a worker ran, then say\n"
            "so: --did-not-run returns its records to run again; --ran ends it with an unknown\n"
            "outcome (redispatch or discard each). Either way the project moves again."
        ),
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "event_id", type=positive_integer, metavar="EVENT_ID", help="an event of the task, as status names it"
    )
    found = parser.add_mutually_exclusive_group(required=True)
    found.add_argument("--ran", dest="claim", action="store_const", const=LaunchFinding.ran,
                       help="a worker ran (or may have): its outcome is unknown")
    found.add_argument("--did-not-run", dest="claim", action="store_const", const=LaunchFinding.did_not_run,
                       help="no worker process ran: its records wait to run again")
    person.add_arguments(parser, "who settles it (default local:<your user name>), recorded with it")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    deciding = person.person_of(args)
    with deciding.ledger() as ledger:
        settled = settle_launch(ledger, args.event_id, args.claim, deciding.by, deciding.clock.now())
    match settled:
        case Success(plan):
            return person.answer(args, {
                "event_id": args.event_id, "settled": True, "claim": str(plan.claim),
                "settled_by": deciding.by, "task_id": plan.facts.task_id, "attempt_id": plan.facts.attempt_id,
                "stop_reason": str(plan.stop_reason), "summary": plan.summary,
            })
        case Failure(why):  # rule 3
            return person.refused(args, {"event_id": args.event_id, "settled": False, "summary": why})
    raise AssertionError("unreachable")  # pragma: no cover
