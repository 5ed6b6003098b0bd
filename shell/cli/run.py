"""``bin/connect run``: the connector, until SIGTERM or SIGINT (``--help`` gives the exit codes).

The pair's machine-wide lock (``shell.state.pair_lock``) is taken first, then the state
directory's own; ``--shadow`` keeps its own lock, ledger and feed position in ``<state>/shadow/``.
Neither starts while a ``shadow promote`` is unfinished. Every local check comes before Basecamp
is asked who the token acts as, and that before anything is read, reconciled or posted: a person
offline still hears of a local problem, and a second ``run`` is turned away by the lock without a
request. ``--hold`` sets the durable hold after that question, before intake. A stop noted before
the start ends ``run`` before its next step; one during the start stops it there, stderr naming
the step; both exit 0, leaving what was not settled to the next start. Once started, stdout gets
``running account=A agent=B [shadow] mid_launch=ATTEMPTS|none hold=on|off``, then one line per
transition. A loop ended by a failure it did not expect stops the connector as a signal does,
then one ``error:`` line and exit 1."""

from __future__ import annotations

import argparse
import logging
import os
import sqlite3
import sys
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from datetime import timedelta
from functools import partial
from pathlib import Path

from core.configuration import Configuration, below_floor, route_advice, route_problem
from core.log_lines import Transition
from core.worker_stream import GRACE_SECONDS, stop_shares
from shell import log_format, private_files, process_secrets, processes, stack_dumps
from shell import metrics as metrics_file
from shell.basecamp.client import BasecampClient, check_identity
from shell.basecamp.tokens import tokens_from
from shell.cli.arguments import add_state_arguments, deciding_person, positive_seconds, reason_of
from shell.cli.main import Subparsers, add_command
from shell.cli.seam import stdout_written
from shell.cli.start_signals import note_stops, said_hangups, stop_asked, stop_name
from shell.clock import SystemClock
from shell.connector import STOP_WITHIN, Connector
from shell.errors import EXIT_CONFIG, EXIT_FAILURE, EXIT_OK, EXIT_USAGE, UserError
from shell.ledger.connection import LedgerError, ledger_failure, open_ledger, watch_write_failures
from shell.ledger.hold import set_hold, standing
from shell.notify import Service
from shell.outbox import OutboxLedgerError
from shell.state import pair_lock
from shell.state.config import (
    SHADOW_DIRECTORY,
    StatePaths,
    configured_own_paths,
    load_config,
    locate_state,
    route_facts,
)
from shell.state.lock import acquire
from shell.state.promotion import unless_promoting
from shell.worker.driver import WorkerCommand

USER_AGENT = "basecamp-connector (https://github.com/basecamp/basecamp-connector)"

DESCRIPTION = """\
Run the connector: read the account's event feed, admit what is the agent's business,
run a worker for it in the project's approved directory, and post the connector's own
lifecycle messages exactly once or not at all. Stops cleanly on SIGTERM or SIGINT,
within --shutdown-seconds; during the start, at once (no `running` line; stderr says
which step it stopped in, and the next start settles the rest); before it, in one line.
SIGHUP is ignored (said on stderr): the configuration is re-read every 2 s on its own.
Run it under a supervisor that restarts it on exit (`bin/connect unit` prints a systemd
unit); under NOTIFY_SOCKET it speaks systemd's notify protocol: READY=1 once the start
settled, WATCHDOG=1 while every loop turns, STOPPING=1 at the stop."""

EPILOG = """\
examples:
  bin/connect run --account 999999999 --agent 1049715901
  bin/connect run --state-dir ~/.local/state/basecamp-connector/999999999-1049715901
  bin/connect run --shadow        # beside the running one: admits and logs, posts nothing
  bin/connect run --hold --reason 'after the upgrade'   # nothing launches or posts until
                                                        # `bin/connect release`

exit codes: 0 stopped by SIGTERM or SIGINT; 2 usage; 3 configuration, token, worker
program, route directory, state directory, a NOTIFY_SOCKET that is not a socket, or
ledger (damaged, full disk, failed at start, not this connector's), a --metrics-file
whose directory is missing or not writable, standard output that cannot be written,
or the pair is served from another state directory (one line says which): a
person must act, do not restart on it; 6 another connector on this machine serves this
account and agent (the line names its state directory and pid), the ledger is busy, or
Basecamp could not be asked who the token is: passes by itself, restart it."""


def register(subparsers: Subparsers) -> None:
    parser = add_command(subparsers, "run", DESCRIPTION, EPILOG)
    add_state_arguments(parser)
    parser.add_argument("--shadow", action="store_true",
                        help="admit and log on a ledger of its own; dispatch nothing, post nothing")
    parser.add_argument("--hold", action="store_true", help="set the durable hold before intake starts: "
                        "nothing launches or posts until `release`")
    parser.add_argument("--reason", metavar="TEXT", default="run --hold",
                        help="why, with --hold (default 'run --hold')")
    parser.add_argument("--by", help="who holds it, with --hold (default local:<your user name>)")
    parser.add_argument("--poll-seconds", type=positive_seconds, default=5.0,
                        help="how often to read the feed (default 5)")
    parser.add_argument("--no-live", action="store_true",
                        help="poll the feed only: no live lane (the WebSocket that hears events at once)")
    parser.add_argument("--shutdown-seconds", type=positive_seconds, default=STOP_WITHIN.total_seconds(),
                        help="the bound on stopping workers and flushing their notices (default 60); each "
                             f"worker's grace before SIGKILL is {stop_shares(1.0).grace:g} of it, "
                             f"{GRACE_SECONDS:g} s at most")
    parser.add_argument("--metrics-file", type=Path, metavar="PATH",
                        help="rewrite PATH every 15 s with the metrics in Prometheus's text format, for "
                             "node_exporter's textfile collector (name it *.prom in the collector's "
                             "directory); its directory must exist and be writable (exit 3); a write that "
                             "fails later is warned of once and the connector goes on")
    parser.add_argument("--log-format", choices=log_format.FORMATS, default=log_format.TEXT,
                        help="text (the default: lines for a person) or json: one object a line on stdout "
                             "and stderr (time, level, logger, message, and the line's ids: event_id, task, "
                             "attempt, intent, kind), for a log pipeline")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    note_stops()  # already standing when bin/connect started this process
    process_secrets.forbid_core_dumps()  # before the token file is read
    with stack_dumps.on_sigusr1():  # from the first step of the start to `stopped`
        return _run_checked(args)


def _run_checked(args: argparse.Namespace) -> int:
    poll_every = timedelta(seconds=args.poll_seconds)  # the times first: every local check before
    bound = timedelta(seconds=args.shutdown_seconds)  # a question is asked of anyone
    if args.hold and args.shadow:
        raise UserError("--hold is the connector's: a shadow run dispatches and posts nothing", EXIT_USAGE)
    hold = (deciding_person(args.by), reason_of(args.reason)) if args.hold else ("", "")
    paths = locate_state(args.state_dir, args.account, args.agent)
    configuration = load_config(paths.config)
    if stop_asked():
        return _stopped_before_start()
    service = Service.of(os.environ)  # before any lock: a NOTIFY_SOCKET that is not one is refused
    if args.metrics_file is not None:
        metrics_file.check_metrics_path(args.metrics_file)
    clock = SystemClock()
    ids = (configuration.account_id, configuration.agent_id)
    with pair_lock.acquire(*ids, paths.directory, clock.now(), shadow=args.shadow):
        pair_lock.refuse_if_served_elsewhere(*ids, paths.directory)
        return _run_locked(args, paths, configuration, clock, service, poll_every=poll_every, bound=bound,
                           hold=hold)


def _run_locked(args: argparse.Namespace, paths: StatePaths, configuration: Configuration, clock: SystemClock,
                service: Service, *, poll_every: timedelta, bound: timedelta, hold: tuple[str, str]) -> int:
    """The connector, once this machine's one lock of its pair is held; ``hold``: who and why (``--hold``)."""
    token_file = Path(configuration.token_file)
    tokens = tokens_from(token_file, clock)
    command = _worker_command(paths, configuration, poll_every, shadow=args.shadow)
    directory = paths.directory / SHADOW_DIRECTORY if args.shadow else paths.directory
    ledger_path = StatePaths.at(directory).ledger
    try:
        if args.shadow:
            private_files.ensure_directory(directory, "shadow directory")
        lock = acquire(directory, configuration.account_id, configuration.agent_id, clock.now())
    except OSError as error:  # the shadow directory's (the lock says its own in the ledger's words)
        raise ledger_failure(error, directory, "take the instance lock") from error
    # processes.subreaper: what a worker orphans is reparented here, to be ended with its attempt.
    with lock, processes.subreaper(), open_ledger(unless_promoting(paths.directory, ledger_path),
                                                  clock=clock) as ledger:
        if stop_asked():
            return _stopped_before_start()
        watch_write_failures(ledger)  # status shows this connector's failed writes
        client = BasecampClient(configuration.base_url, configuration.account_id, tokens, USER_AGENT,
                                clock=clock)
        check_identity(client, agent_id=configuration.agent_id, token_file=configuration.token_file,
                       base_url=configuration.base_url, consequence="not started",
                       wrong_person_hint=" (give the agent's own token, or run setup for that person)")
        if stop_asked():
            return _stopped_before_start()
        if args.hold:  # before intake starts
            print(log_format.line(set_hold(ledger, *hold, clock.now()).summary), flush=True)
        connector = Connector(
            configuration, ledger, client, clock, command, directory / "sessions", shadow=args.shadow,
            poll_every=poll_every, live=not args.no_live, on_event=_said,
            config_path=paths.config, note_configuration=lock.note_configuration,
            credentials=tokens.credentials, on_start_step=service.starting)  # fmt: skip
        running = f"account={configuration.account_id} agent={configuration.agent_id}"
        label = f"{running} shadow" if args.shadow else running
        pair = metrics_file.pair_labels(configuration.account_id, configuration.agent_id, shadow=args.shadow)
        metrics = partial(metrics_file.kept_in, args.metrics_file, ledger_path, pair, clock,
                          loops=connector.heartbeats.beats, process=client.figures)
        _serve(connector, ledger_path, bound, label, metrics=metrics, service=service)
    if connector.ended_by is not None:  # the supervisor starts it again
        ended = (f"error: the {connector.ended_by} loop ended on a failure it did not expect (its traceback"
                 " is in the log above); stopped, to be started again")  # fmt: skip
        print(log_format.line(ended, level="error"), file=sys.stderr)
        return EXIT_FAILURE
    logging.getLogger("connector.run").info("stopped")
    print(log_format.line("stopped"), file=sys.stderr)
    return EXIT_OK


def _worker_command(paths: StatePaths, configuration: Configuration, poll_every: timedelta, *,
                    shadow: bool) -> WorkerCommand:
    """The worker's command, once nothing the connector would run is sure to fail in public: the
    feed's interval above its floor, the worker's program there, every route's directory usable."""
    command = WorkerCommand.of(configuration)
    poll_floor = below_floor("--poll-seconds", poll_every, unsafe=configuration.unsafe_test_timings)
    if poll_floor is not None:
        raise UserError(poll_floor, EXIT_CONFIG)
    missing_program = None if shadow else command.program_missing()
    if missing_program is not None:  # every request would fail to start, in public
        raise UserError(f"{missing_program}: not started", EXIT_CONFIG)
    routes = () if shadow else configuration.routes
    own = configured_own_paths(paths, configuration)
    facts = [route_facts(route.project_id, route.directory, own) for route in routes]
    failing = [route for route in facts if route_problem(route) is not None]
    if failing:  # its requests would end in a public "could not be started" notice (core.configuration)
        more = f" (and {len(failing) - 1} more)" if len(failing) > 1 else ""
        first = failing[0]
        raise UserError(f"{route_problem(first)}{more}: not started; {route_advice(first)}", EXIT_CONFIG)
    return command


def _said(transition: Transition) -> None:
    said = log_format.line(transition.line, logger="connector.transition", fields=transition.fields)
    print(said, flush=True)


def _stop_requested() -> bool:
    """Whether a stop was asked for (the main thread stops the connector); a SIGHUP is said, ignored."""
    said_hangups()
    return stop_asked()


def _stopped_before_start() -> int:
    print(log_format.line(f"stopped before the start ({stop_name()}): nothing was started"),
          file=sys.stderr)
    return EXIT_OK


def _serve(connector: Connector, ledger_path: Path, bound: timedelta, running: str, *,
           metrics: Callable[[], AbstractContextManager[None]] = nullcontext,
           service: Service | None = None) -> None:
    """The start, then the loops until a signal (a signal during the start ends it there); the
    service manager told each step, ready once the start settled, and stopping at the stop."""
    service = service or Service()

    def requested() -> bool:
        if _stop_requested():
            service.stopping()
            return True
        return False

    try:
        held = connector.start(timedelta(seconds=60), requested=requested)
    except (sqlite3.Error, OSError) as error:
        raise ledger_failure(error, ledger_path, "settle what the last run left") from error
    except OutboxLedgerError as error:
        raise LedgerError(f"{ledger_path}: the start could not settle the outbox: {error}") from error
    if connector.stopped_in is not None:
        stopped = (f"stopped during the start ({connector.stopped_in}): what it had not settled is left as it"
                   " was, for the next start")
        print(log_format.line(stopped), file=sys.stderr)
        return
    with connector.ledger.read() as connection:
        hold = "on" if standing(connection) is not None else "off"
    started = f"running {running} mid_launch={','.join(held) or 'none'} hold={hold}"
    print(log_format.line(started), flush=True)
    stdout_written()  # a stdout that cannot take it stops the connector here, exit 3
    service.ready(running)
    with metrics(), service.watching(connector.heartbeats.beats, connector.clock.now, running):
        connector.run(requested=requested, within=bound)
    service.stopping()  # a loop that ended stops it too
