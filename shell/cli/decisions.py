"""What ``bin/connect redispatch`` and ``bin/connect discard`` share: options, the one
transaction, and what a person reads (spec 5.3, 5.4).

Rules:
1. The ledger is opened as it exists (never created, never migrated) and the decision is one
   write transaction (``shell.ledger.decisions``), so both commands are safe beside a running
   connector; they take no instance lock and need no token.
2. Who decided is ``--by``, by default ``local:<user name>``, one line (``shell.cli.who``).
3. A decision taken prints one summary line and exits 0. A refusal is one line on stderr and
   exit 5; a decision already taken (a record a person discarded) is one line and exit 0; an
   unknown event id is one line and exit 4. ``--json`` prints the same facts on stdout.
4. Whether a connector runs is read from the lock file's metadata, and said only as a hint
   (diagnostic: the flock is the truth): a redispatch admitted with no connector running waits
   for ``bin/connect run``. A running connector re-reads its routes (``core.route_reload``), so
   nobody is told to restart it.
5. A redispatch of a record a live task carries is authorized and committed first; then, outside
   the transaction, the task's recorded worker is stopped by ``shell.processes.terminate_group``
   (SIGTERM, ``STOP_GRACE_SECONDS``, SIGKILL, each only while its leader is provably the recorded
   process). The output says what became of it (``worker_state``: stopped, gone, held,
   not_recorded) and whether a signal was sent (``worker_signaled``). The running connector
   settles the task when its worker ends, and admits the record then.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from returns.result import Failure, Success

from core.decisions import Action, Refusal, WorkerState, worker_state
from shell import processes
from shell.cli.arguments import add_state_arguments, positive_integer
from shell.cli.commands import SUMMARIES
from shell.cli.who import deciding_person
from shell.clock import SystemClock
from shell.errors import EXIT_NOT_FOUND, EXIT_OK, EXIT_REFUSED, UserError
from shell.ledger.connection import open_existing_ledger
from shell.ledger.decisions import Decided, UnknownEvent, decide
from shell.ledger.tasks import RecordedWorker
from shell.state.config import load_config, locate_state
from shell.state.lock import peek


def register(
    subparsers: argparse._SubParsersAction[argparse.ArgumentParser],
    action: Action,
    *,
    description: str,
) -> None:
    parser = subparsers.add_parser(action.value, help=SUMMARIES[action.value], description=description)
    parser.add_argument(
        "event_id", type=positive_integer, metavar="EVENT_ID",
        help="the record's event id, as notices and `status` name it",
    )
    add_state_arguments(parser)
    parser.add_argument("--by", help="who decides (default local:<your user name>), recorded with it")
    parser.add_argument("--json", action="store_true", help="print the result as JSON on stdout")
    parser.set_defaults(run=lambda args: run(args, action))


def run(args: argparse.Namespace, action: Action) -> int:
    by = deciding_person(args.by)
    paths = locate_state(args.state_dir, args.account, args.agent)
    configuration = load_config(paths.config)
    clock = SystemClock()
    with open_existing_ledger(paths.ledger, clock=clock) as ledger:
        try:
            served = frozenset(route.project_id for route in configuration.routes)
            decided = decide(ledger, args.event_id, action, by, clock.now(), served=served)
        except UnknownEvent:
            raise UserError(f"the ledger holds no event {args.event_id}", EXIT_NOT_FOUND) from None
    holder = peek(paths.directory, configuration.account_id, configuration.agent_id)
    connector_runs = holder is not None and holder.pid_present is not False
    match decided:
        case Success(done):
            taken = _taken(done, connector_runs)
            if done.plan.stop_task is not None:
                taken.update(_stopped(done.worker))
                taken["summary"] += f"; its worker {taken.pop('worker_phrase')}"
            return _report(args, taken)
        case Failure(refusal):
            return _report(args, _refused(action, refusal))
    raise AssertionError("unreachable")  # pragma: no cover


def _taken(done: Decided, connector_runs: bool) -> dict[str, Any]:
    plan = done.plan
    line = plan.summary
    if done.sending_intents:
        line += f"; {len(done.sending_intents)} notice(s) already being sent cannot be called back"
    if plan.action is Action.redispatch and done.held:
        line += "; the hold stands, so nothing launches until `bin/connect release`"
    if plan.action is Action.redispatch and not connector_runs:
        line += "; no connector seems to run (lock file, diagnostic): it starts with `bin/connect run`"
    return {
        "event_id": plan.facts.event_id,
        "action": str(plan.action),
        "decided": True,
        "already": False,
        "decision_id": done.decision_id,
        "decided_by": done.decided_by,
        "from": {"state": str(plan.facts.state), "reason": plan.facts.reason, "outcome": plan.facts.outcome},
        "to": {"state": str(plan.to_state), "reason": plan.to_reason},
        "canceled_intents": list(done.canceled_intents),
        "sending_intents": list(done.sending_intents),
        "summary": line,
    }


STOP_GRACE_SECONDS = 10.0
"""How long a redispatched live task's worker has between SIGTERM and SIGKILL (rule 5)."""

_WORKER_PHRASES = {
    WorkerState.stopped: "was stopped",
    WorkerState.gone: "was already gone",
    WorkerState.held: "could not be proven this task's, or outlived SIGKILL: check it (nothing more sent)",
    WorkerState.not_recorded: "had no recorded process: its token is retired, so it can do nothing more",
}


def _stopped(worker: RecordedWorker | None) -> dict[str, Any]:
    """Stop the redispatched live task's recorded worker (rule 5); what became of it."""
    signals: tuple[str, ...] = ()
    if worker is None or worker.pid is None or worker.pgid is None:
        state, note = worker_state(None), "no process was recorded for its attempt"
    else:
        grace = STOP_GRACE_SECONDS
        result = processes.terminate_group(worker.pgid, worker.pid, worker.process_started, grace)
        state, note, signals = worker_state(str(result.outcome)), result.reason, result.signals
    return {
        "worker_state": str(state),
        "worker_phrase": _WORKER_PHRASES[state],
        "worker_note": note,
        "worker_signaled": bool(signals),
        "pending": True,
    }


def _refused(action: Action, refusal: Refusal) -> dict[str, Any]:
    return {
        "event_id": refusal.event_id,
        "action": str(action),
        "decided": False,
        "already": refusal.already,
        "summary": refusal.reason,
    }


def _report(args: argparse.Namespace, result: dict[str, Any]) -> int:
    refused = not result["decided"] and not result["already"]
    if args.json:
        print(json.dumps(result, indent=2))
    if refused:
        print(f"error: {result['summary']}", file=sys.stderr)
        return EXIT_REFUSED
    if not args.json:
        print(result["summary"])
    return EXIT_OK
