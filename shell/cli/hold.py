"""``bin/connect hold --reason TEXT``: a person sets the durable hold.

Rules:
1. The ledger is opened as it exists (never created, never migrated) and the hold is one write
   transaction (``shell.ledger.hold.set_hold``), so it is safe beside a running connector: the
   connector's dispatcher, its workers' first pulls and its outbox each read the marker in their
   own transactions, and from the commit on nothing launches, is handed out or is posted.
   Intake, admission and reconciliation go on.
2. Who set it is ``--by``, by default ``local:<user name>`` (``shell.cli.who``); the reason is one
   line, refused with a control character (``shell.cli.who`` rule 3). Setting a hold while one
   stands renews it: a new generation, the first setter kept.
3. One summary line and exit 0; ``--json`` prints the same facts, each revoked redispatch
   (decision, event, task) among them. The ledger missing or too
   new is exit 3 (``EXIT_CONFIG``).
"""

from __future__ import annotations

import argparse
from typing import Any

from shell.cli import person
from shell.cli.commands import SUMMARIES
from shell.cli.who import person_text
from shell.ledger.hold import HoldSet, set_hold

MAX_REASON_LENGTH = 500

EPILOG = """\
examples:
  bin/connect hold --reason "cutting over from the Ruby connector"
  bin/connect hold --reason "worker misbehaving" --by ana --json
  bin/connect status            # shows the hold: who, when, why, generation
  bin/connect release           # clears it; held records stay held

exit codes: 0 held; 2 bad arguments (an empty or over-long reason); 3 no configuration or
usable ledger; 6 the ledger stayed busy."""


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "hold",
        help=SUMMARIES["hold"],
        description=(
            "Set the durable hold. Intake and admission go on; nothing is launched, no worker gets\n"
            "its first instruction and no lifecycle message is posted until `bin/connect release`.\n"
            "Records waiting to run now are held for a person (redispatch or discard each), and\n"
            "every record not yet settled is tagged for review. Safe while the connector runs."
        ),
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--reason", required=True, metavar="TEXT", help="why, recorded with the hold")
    person.add_arguments(parser, "who holds it (default local:<your user name>)")
    parser.set_defaults(run=run)


def reason_of(text: str) -> str:
    """The reason as given: one line, never empty (rule 2)."""
    return person_text(text, "--reason", "says why the connector is held", MAX_REASON_LENGTH)


def described(done: HoldSet, by: str) -> dict[str, Any]:
    """The JSON of a hold set (rule 3); shared with ``run --hold``'s log line."""
    return {
        "held": True,
        "generation": done.generation,
        "held_by": done.plan.marker_by,
        "held_at": done.plan.marker_at,
        "set_by": by,
        "cause": done.plan.cause,
        "renewed": done.plan.already,
        "held_records": [record.event_id for record in done.plan.to_hold],
        "tagged_for_review": list(done.plan.review),
        "canceled_intents": list(done.canceled_intents),
        "revoked_redispatches": [
            {"decision_id": one.decision_id, "event_id": one.event_id, "task_id": one.task_id}
            for one in done.plan.revoke
        ],
        "summary": done.summary,
    }


def run(args: argparse.Namespace) -> int:
    reason = reason_of(args.reason)
    deciding = person.person_of(args)
    with deciding.ledger() as ledger:
        done = set_hold(ledger, deciding.by, reason, deciding.clock.now())
    return person.answer(args, described(done, deciding.by))
