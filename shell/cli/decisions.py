"""``bin/connect hold``, ``release``, ``redispatch``, ``discard`` and ``settle-launch``: a person's
decisions on a connector's ledger (each ``--help`` says what it does, and its exit codes).

Each is safe beside a running connector: who decides is settled first (a usage error before any file
is read); the ledger is opened as it exists, no lock is taken and no token read, and the decision is
its ``shell.ledger`` module's one write transaction. A decision taken (or already taken) prints its
summary line, or with ``--json`` one object; a refusal also prints one ``error:`` line on stderr. A
full disk or an unwritable state directory is one line saying the decision was not recorded; an
answer that cannot be written says it was recorded. Under a hold reconciliation goes on too; one set
while one stands is renewed (a new generation, the first setter kept). Whether a connector runs is
read from the lock file and said only as a hint. A redispatch of a record a live task carries is
committed first; then the task's worker is stopped and the answer says what became of it."""

from __future__ import annotations

import argparse
import json
import sqlite3
import sys
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from returns.result import Failure

from core.decisions import Action, WorkerState, worker_state
from core.settlement import LaunchFinding
from shell import processes
from shell.cli.arguments import add_person_arguments, deciding_person, positive_integer, reason_of
from shell.cli.main import Subparsers, add_command
from shell.cli.seam import StdoutUnwritable, stop_writing
from shell.clock import Clock, SystemClock
from shell.errors import EXIT_NOT_FOUND, EXIT_OK, EXIT_REFUSED, UserError
from shell.ledger import connection
from shell.ledger.decisions import Decided, UnknownEvent, decide, settle_launch
from shell.ledger.hold import HoldSet, release, set_hold
from shell.ledger.tasks import RecordedWorker
from shell.state.config import StatePaths, load_config, locate_state
from shell.state.lock import may_run

STOP_GRACE_SECONDS = 10.0  # how long a redispatched live task's worker has between SIGTERM and SIGKILL


@dataclass(frozen=True, slots=True)
class Decider:
    by: str
    paths: StatePaths
    clock: Clock = field(default_factory=SystemClock)

    def ledger(self) -> AbstractContextManager[connection.Ledger]:
        return deciding_on(self.paths.ledger, self.clock)


@contextmanager
def deciding_on(path: Path, clock: Clock,
                busy_timeout: float = connection.BUSY_TIMEOUT_SECONDS) -> Iterator[connection.Ledger]:
    """The ledger at ``path`` as it exists, for a person's decision (``bin/outbox-resolve``'s too).
    What the disk or SQLite says while it is opened or the decision written is one line that says
    nothing was recorded: the decision's transaction rolled back whole."""
    try:
        with connection.open_existing_ledger(path, clock=clock, busy_timeout=busy_timeout) as ledger:
            yield ledger
    except connection.LedgerError as error:
        if not isinstance(error, connection.LedgerNoSpace | connection.LedgerNotWritable):  # the disk said
            raise
        raise type(error)(f"{error}; the decision was not recorded") from error
    except (sqlite3.Error, OSError) as error:
        if not connection.is_storage_failure(error):  # a refused move, a bug: its traceback is a developer's
            raise
        failure = connection.ledger_failure(error, path, "record the decision")
        raise type(failure)(f"{failure}; the decision was not recorded") from error


def person_of(args: argparse.Namespace) -> Decider:
    """Who decides, then where: a usage error before any file is read."""
    return Decider(deciding_person(args.by), locate_state(args.state_dir, args.account, args.agent))


def answer(args: argparse.Namespace, result: dict[str, Any]) -> int:
    try:
        print(json.dumps(result, indent=2) if args.json else result["summary"], flush=True)
    except StdoutUnwritable as unwritable:
        raise StdoutUnwritable(f"{unwritable}; the decision was recorded: {result['summary']}") from None
    return EXIT_OK


def refused(args: argparse.Namespace, result: dict[str, Any]) -> int:
    if args.json:
        try:
            print(json.dumps(result, indent=2), flush=True)
        except StdoutUnwritable:
            stop_writing()  # the refusal is said on stderr too; 5 stands
    print(f"error: {result['summary']}", file=sys.stderr)
    return EXIT_REFUSED


HOLD_DESCRIPTION = """\
Set the durable hold. Intake and admission go on; nothing is launched, no worker gets
its first instruction and no lifecycle message is posted until `bin/connect release`.
Records waiting to run now are held for a person (redispatch or discard each), and
every record not yet settled is tagged for review. Safe while the connector runs."""

HOLD_EPILOG = """\
examples:
  bin/connect hold --reason "cutting over from the Ruby connector"
  bin/connect hold --reason "worker misbehaving" --by ana --json
  bin/connect status            # shows the hold: who, when, why, generation
  bin/connect release           # clears it; held records stay held

exit codes: 0 held; 2 bad arguments (an empty or over-long reason); 3 no configuration or
usable ledger; 6 the ledger stayed busy."""


def register_hold(subparsers: Subparsers) -> None:
    parser = add_command(subparsers, "hold", HOLD_DESCRIPTION, HOLD_EPILOG)
    parser.add_argument("--reason", required=True, metavar="TEXT", help="why, recorded with the hold")
    add_person_arguments(parser, "who holds it (default local:<your user name>)")
    parser.set_defaults(run=_hold)


def described(done: HoldSet, by: str) -> dict[str, Any]:
    plan = done.plan
    return {
        "held": True, "generation": done.generation, "held_by": plan.marker_by, "held_at": plan.marker_at,
        "set_by": by, "cause": plan.cause, "renewed": plan.already,
        "held_records": [record.event_id for record in plan.to_hold], "tagged_for_review": list(plan.review),
        "canceled_intents": list(done.canceled_intents),
        "revoked_redispatches": [{"decision_id": one.decision_id, "event_id": one.event_id,
                                  "task_id": one.task_id} for one in done.plan.revoke],
        "summary": done.summary}  # fmt: skip


def _hold(args: argparse.Namespace) -> int:
    reason = reason_of(args.reason)
    deciding = person_of(args)
    with deciding.ledger() as ledger:
        done = set_hold(ledger, deciding.by, reason, deciding.clock.now())
    return answer(args, described(done, deciding.by))


RELEASE_DESCRIPTION = """\
Clear the durable hold that `bin/connect hold` or `run --hold` set. Records a person
authorized, and records that arrived after the hold, dispatch; held records stay held
until each is redispatched or discarded. Safe while the connector runs."""

RELEASE_EPILOG = """\
examples:
  bin/connect release
  bin/connect release --by ana --json

exit codes: 0 released, or no hold stood; 3 no configuration or usable ledger; 6 the ledger
stayed busy."""


def register_release(subparsers: Subparsers) -> None:
    parser = add_command(subparsers, "release", RELEASE_DESCRIPTION, RELEASE_EPILOG)
    add_person_arguments(parser, "who releases it (default local:<your user name>)")
    parser.set_defaults(run=_release)


def _release(args: argparse.Namespace) -> int:
    deciding = person_of(args)
    with deciding.ledger() as ledger:
        released = release(ledger, deciding.by, deciding.clock.now())
    stood = released.hold
    return answer(args, {
        "released": stood is not None, "released_by": deciding.by if stood is not None else None,
        "generation": None if stood is None else stood.generation, "held_records": released.held_records,
        "summary": released.summary})  # fmt: skip


REDISPATCH_DESCRIPTION = """\
Authorize a record the connector will not run on its own. Accepted for a completed record whose outcome is
unknown or failed (it is admitted at once, and the running connector starts a new worker for it), for a
blocked one (admission runs again what blocked it and admits it when that succeeds), and for a held one.
Only in a project the configuration serves. A record a live task carries is authorized at once: the task's
token is retired, its worker stopped (SIGTERM, a grace, SIGKILL, only while it is provably that worker;
worker_state says: stopped, gone, held or not_recorded), and it is admitted when that task ends. Refused
for a success, a discarded record, and one still waiting to run. Who decided is recorded. Safe while the
connector runs. Exit codes: 0 decided; 3 configuration or ledger; 4 no such event; 5 refused."""


DISCARD_DESCRIPTION = """\
Close a record without running it, as discarded(by_operator), and record who decided. Accepted for a record
waiting to run, a blocked or held one, and a completed one whose outcome is unknown. A lifecycle message
still pending for it is not sent. Refused for anything live and for a settled success or failure. Safe
while the connector runs. Exit codes: 0 decided (or already discarded by a person); 3 configuration or
ledger; 4 no such event; 5 refused."""


def _register_decision(subparsers: Subparsers, action: Action, description: str) -> None:
    parser = add_command(subparsers, action.value, description, raw=False)
    parser.add_argument("event_id", type=positive_integer, metavar="EVENT_ID",
                        help="the record's event id, as notices and `status` name it")
    add_person_arguments(parser, "who decides (default local:<your user name>), recorded with it")
    parser.set_defaults(run=lambda args: _decide(args, action))


register_redispatch = partial(_register_decision, action=Action.redispatch,
                              description=REDISPATCH_DESCRIPTION)
register_discard = partial(_register_decision, action=Action.discard, description=DISCARD_DESCRIPTION)


def _decide(args: argparse.Namespace, action: Action) -> int:
    deciding = person_of(args)
    configuration = load_config(deciding.paths.config)
    with deciding.ledger() as ledger:
        try:
            served = frozenset(route.project_id for route in configuration.routes)
            decided = decide(ledger, args.event_id, action, deciding.by, deciding.clock.now(), served=served)
        except UnknownEvent:
            raise UserError(f"the ledger holds no event {args.event_id}", EXIT_NOT_FOUND) from None
    connector_runs = may_run(deciding.paths.directory, configuration.account_id, configuration.agent_id)
    if isinstance(decided, Failure):
        refusal = decided.failure()
        found = {"event_id": refusal.event_id, "action": str(action), "decided": False,
                 "already": refusal.already, "summary": refusal.reason}
        return answer(args, found) if refusal.already else refused(args, found)
    done = decided.unwrap()
    taken = _taken(done, connector_runs)
    if done.plan.stop_task is not None:
        taken.update(_stopped(done.worker))
        taken["summary"] += f"; its worker {taken.pop('worker_phrase')}"
    return answer(args, taken)


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
        "event_id": plan.facts.event_id, "action": str(plan.action), "decided": True, "already": False,
        "decision_id": done.decision_id, "decided_by": done.decided_by,
        "from": {"state": str(plan.facts.state), "reason": plan.facts.reason, "outcome": plan.facts.outcome},
        "to": {"state": str(plan.to_state), "reason": plan.to_reason},
        "canceled_intents": list(done.canceled_intents), "sending_intents": list(done.sending_intents),
        "summary": line}  # fmt: skip


_WORKER_PHRASES = {
    WorkerState.stopped: "was stopped",
    WorkerState.gone: "was already gone",
    WorkerState.held: "could not be proven this task's, or outlived SIGKILL: check it (nothing more sent)",
    WorkerState.not_recorded: "had no recorded process: its token is retired, so it can do nothing more",
}


def _stopped(worker: RecordedWorker | None) -> dict[str, Any]:
    """Stop the redispatched live task's recorded worker; what became of it."""
    signals: tuple[str, ...] = ()
    if worker is None or worker.pid is None or worker.pgid is None:
        state, note = worker_state(None), "no process was recorded for its attempt"
    else:
        grace = STOP_GRACE_SECONDS
        result = processes.terminate_group(worker.pgid, worker.pid, worker.process_started, grace)
        state, note, signals = worker_state(str(result.outcome)), result.reason, result.signals
    return {"worker_state": str(state), "worker_phrase": _WORKER_PHRASES[state], "worker_note": note,
            "worker_signaled": bool(signals), "pending": True}  # fmt: skip


SETTLE_LAUNCH_DESCRIPTION = """\
A connector stopped between launching a worker and recording its process leaves the
attempt launching: nobody can tell whether the worker ran, so its task holds the
conversation and the project's directory and every later request there waits.
`bin/connect status` flags it as NEEDS A PERSON. Check whether a worker ran, then say
so: --did-not-run returns its records to run again; --ran ends it with an unknown
outcome (redispatch or discard each). Either way the project moves again."""

SETTLE_EPILOG = """\
examples:
  bin/connect status                                  # flags the launch: NEEDS A PERSON
  bin/connect settle-launch 7000000123 --did-not-run  # no worker ran: it runs again
  bin/connect settle-launch 7000000123 --ran --json   # a worker may have acted: outcome unknown

exit codes: 0 settled; 2 neither or both of --ran and --did-not-run; 3 no configuration or
usable ledger; 5 refused (no launch left for a person on that event's task, or a worker pulled
its instruction, so it ran); 6 the ledger stayed busy."""


def register_settle_launch(subparsers: Subparsers) -> None:
    parser = add_command(subparsers, "settle-launch", SETTLE_LAUNCH_DESCRIPTION, SETTLE_EPILOG)
    parser.add_argument("event_id", type=positive_integer, metavar="EVENT_ID",
                        help="an event of the task, as status names it")
    found = parser.add_mutually_exclusive_group(required=True)
    found.add_argument("--ran", dest="claim", action="store_const", const=LaunchFinding.ran,
                       help="a worker ran (or may have): its outcome is unknown")
    found.add_argument("--did-not-run", dest="claim", action="store_const", const=LaunchFinding.did_not_run,
                       help="no worker process ran: its records wait to run again")
    add_person_arguments(parser, "who settles it (default local:<your user name>), recorded with it")
    parser.set_defaults(run=_settle_launch)


def _settle_launch(args: argparse.Namespace) -> int:
    deciding = person_of(args)
    with deciding.ledger() as ledger:
        settled = settle_launch(ledger, args.event_id, args.claim, deciding.by, deciding.clock.now())
    if isinstance(settled, Failure):
        return refused(args, {"event_id": args.event_id, "settled": False, "summary": settled.failure()})
    plan = settled.unwrap()
    return answer(args, {
        "event_id": args.event_id, "settled": True, "claim": str(plan.claim), "settled_by": deciding.by,
        "task_id": plan.facts.task_id, "attempt_id": plan.facts.attempt_id,
        "stop_reason": str(plan.stop_reason), "summary": plan.summary})  # fmt: skip
