"""What ``bin/connect redispatch`` and ``bin/connect discard`` share: options, the one
transaction, and what a person reads (what every decision command shares is ``shell.cli.person``'s).

Rules:
1. The ledger is opened as it exists and the decision is one write transaction
   (``shell.ledger.decisions``), safe beside a running connector: no instance lock, no token.
2. Who decided is ``shell.cli.who``'s.
3. A decision taken prints one line, exit 0; a refusal one line on stderr, exit 5; one already
   taken (a record a person discarded) exit 0; an unknown event id exit 4. ``--json`` prints the
   same facts on stdout.
4. Whether a connector runs is read from the lock file's metadata, said only as a hint: a
   redispatch admitted with none running waits for ``run``. A running one re-reads its routes
   (``core.configuration``), so nobody is told to restart it.
5. A redispatch of a record a live task carries is committed first; then the task's worker is
   stopped (``shell.processes.terminate_group``) and the output says what became of it
   (``worker_state``, ``worker_signaled``). The connector admits the record as the task ends.
"""

from __future__ import annotations

import argparse
from typing import Any

from returns.result import Failure, Success

from core.decisions import Action, DecisionRefused, WorkerState, worker_state
from shell import processes
from shell.cli import person
from shell.cli.arguments import positive_integer
from shell.cli.commands import SUMMARIES
from shell.errors import EXIT_NOT_FOUND, UserError
from shell.ledger.decisions import Decided, UnknownEvent, decide
from shell.ledger.tasks import RecordedWorker
from shell.state.config import load_config
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
    person.add_arguments(parser, "who decides (default local:<your user name>), recorded with it")
    parser.set_defaults(run=lambda args: run(args, action))


def run(args: argparse.Namespace, action: Action) -> int:
    deciding = person.person_of(args)
    configuration = load_config(deciding.paths.config)
    with deciding.ledger() as ledger:
        try:
            served = frozenset(route.project_id for route in configuration.routes)
            decided = decide(ledger, args.event_id, action, deciding.by, deciding.clock.now(), served=served)
        except UnknownEvent:
            raise UserError(f"the ledger holds no event {args.event_id}", EXIT_NOT_FOUND) from None
    holder = peek(deciding.paths.directory, configuration.account_id, configuration.agent_id)
    connector_runs = holder is not None and holder.pid_present is not False
    match decided:
        case Success(done):
            taken = _taken(done, connector_runs)
            if done.plan.stop_task is not None:
                taken.update(_stopped(done.worker))
                taken["summary"] += f"; its worker {taken.pop('worker_phrase')}"
            return person.answer(args, taken)
        case Failure(refusal):
            found = _refused(action, refusal)
            return person.answer(args, found) if refusal.already else person.refused(args, found)
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


def _refused(action: Action, refusal: DecisionRefused) -> dict[str, Any]:
    return {
        "event_id": refusal.event_id,
        "action": str(action),
        "decided": False,
        "already": refusal.already,
        "summary": refusal.reason,
    }

