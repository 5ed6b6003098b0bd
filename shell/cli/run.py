"""``bin/connect run``: the connector, until SIGTERM or SIGINT.

Rules:
1. The pair's machine-wide lock (``shell.state.pair_lock``) is taken first, once the
   configuration has named the pair: one connector per (account, agent) per machine, whatever
   the state directory, and only from the state directory the pair's record names. Then the
   state directory's own lock (``shell.state.lock``), before anything else touches the state.
   The start order is the connector's (``shell.connector``); SIGTERM and
   SIGINT stop it within a bound and exit 0. ``--shadow`` keeps its own lock, ledger and feed
   position in ``<state>/shadow/``, so it runs beside the connector and never shares its state.
2. A configuration, token or ledger problem is one line and exit 3 (``EXIT_CONFIG``); a
   ledger from a newer program is refused before anything in it changes.
3. Before the connector starts -- before it reads the feed, reconciles or posts anything --
   the token is asked who it acts as, by ``shell.basecamp.identity`` (the rules are there, shared with
   ``setup``). The check comes after the local ones (the worker program, the lock, the ledger),
   so a person offline still hears of those, and a second ``run`` beside a running one is
   turned away by the lock without a request.
4. The running connector re-reads its configuration file (``shell.connector`` rule 5): routes
   change without a restart; an unusable file authorizes nothing, and the lock file's metadata
   says why (``status`` shows it).
5. The token file holds a bare token or ``bin/connect login``'s credentials; the latter are
   refreshed before they expire and once on a 401 (``shell.basecamp.tokens``).
"""

from __future__ import annotations

import argparse
import logging
import signal
import sys
from datetime import timedelta
from pathlib import Path
from types import FrameType

from core.configuration import Configuration
from core.timing_floors import below_floor
from shell import private_files
from shell.basecamp.client import BasecampClient
from shell.basecamp.identity import check_identity
from shell.basecamp.tokens import tokens_from
from shell.cli.arguments import add_state_arguments, positive_seconds
from shell.clock import SystemClock
from shell.connector import Connector
from shell.errors import EXIT_CONFIG, EXIT_OK, UserError
from shell.ledger.connection import open_ledger
from shell.state import pair_lock
from shell.state.config import StatePaths, load_config, locate_state, read_token_file
from shell.state.lock import acquire
from shell.worker.driver import WorkerCommand

USER_AGENT = "basecamp-connector (https://github.com/basecamp/basecamp-connector)"
SHADOW_DIRECTORY = "shadow"
"""``--shadow``'s state, inside the state directory: its own lock, ledger and feed position."""


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "run",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=(
            "examples:\n"
            "  bin/connect run --account 999999999 --agent 1049715901\n"
            "  bin/connect run --state-dir ~/.local/state/basecamp-connector/999999999-1049715901\n"
            "  bin/connect run --shadow        # beside the running one: admits and logs, posts nothing\n"
            "\n"
            "exit codes: 0 stopped by SIGTERM or SIGINT; 3 configuration, token, worker program,\n"
            "ledger, or the pair is served from another state directory (one line says which);\n"
            "6 another connector on this machine serves this account and agent (the line names its\n"
            "state directory and pid), or Basecamp could not be asked who the token is."
        ),
        help="run the connector until stopped",
        description=(
            "Run the connector: read the account's event feed, admit what is the agent's business,\n"
            "run a worker for it in the project's approved directory, and post the connector's own\n"
            "lifecycle messages exactly once or not at all. Stops cleanly on SIGTERM or SIGINT,\n"
            "within --shutdown-seconds. Run it under a supervisor that restarts it on exit."
        ),
    )
    add_state_arguments(parser)
    parser.add_argument(
        "--shadow",
        action="store_true",
        help="admit and log on a ledger of its own; dispatch nothing, post nothing",
    )
    parser.add_argument(
        "--poll-seconds", type=positive_seconds, default=5.0, help="how often to read the feed (default 5)"
    )
    parser.add_argument(
        "--no-live",
        action="store_true",
        help="poll the feed only: no live lane (the WebSocket that hears events at once)",
    )
    parser.add_argument(
        "--shutdown-seconds",
        type=positive_seconds,
        default=60.0,
        help="the bound on stopping workers and flushing their notices (default 60)",
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    paths = locate_state(args.state_dir, args.account, args.agent)
    configuration = load_config(paths.config)
    clock = SystemClock()
    ids = (configuration.account_id, configuration.agent_id)
    with pair_lock.acquire(*ids, paths.directory, clock.now(), shadow=args.shadow):
        pair_lock.refuse_if_served_elsewhere(*ids, paths.directory)
        return _run_locked(args, paths, configuration, clock)


def _run_locked(
    args: argparse.Namespace, paths: StatePaths, configuration: Configuration, clock: SystemClock
) -> int:
    """The connector, once this machine's one lock of its (account, agent) is held (rule 1)."""
    token_file = Path(configuration.token_file)
    tokens = tokens_from(token_file, read_token_file(token_file), clock)
    command = WorkerCommand.configured(configuration.worker_command, configuration.worker_env)
    poll_every = timedelta(seconds=args.poll_seconds)
    poll_floor = below_floor("--poll-seconds", poll_every, unsafe=configuration.unsafe_test_timings)
    if poll_floor is not None:
        raise UserError(poll_floor, EXIT_CONFIG)
    missing_program = None if args.shadow else command.program_missing()
    if missing_program is not None:  # every request would fail to start, in public
        raise UserError(f"{missing_program}: not started", EXIT_CONFIG)
    directory = paths.directory / SHADOW_DIRECTORY if args.shadow else paths.directory
    if args.shadow:
        private_files.ensure_directory(directory, "shadow directory")
    lock = acquire(directory, configuration.account_id, configuration.agent_id, clock.now())
    ledger_path = StatePaths.at(directory).ledger
    with lock, open_ledger(ledger_path, clock=clock) as ledger:
        client = BasecampClient(
            configuration.base_url, configuration.account_id, tokens, USER_AGENT, clock=clock
        )
        check_identity(
            client,
            agent_id=configuration.agent_id,
            token_file=configuration.token_file,
            base_url=configuration.base_url,
            consequence="not started",
            wrong_person_hint=" (give the agent's own token, or run setup for that person)",
        )
        connector = Connector(
            configuration,
            ledger,
            client,
            clock,
            command,
            directory / "sessions",
            shadow=args.shadow,
            poll_every=timedelta(seconds=args.poll_seconds),
            live=not args.no_live,
            on_event=lambda line: print(line, flush=True),
            config_path=paths.config,
            note_configuration=lock.note_configuration,
        )
        bound = timedelta(seconds=args.shutdown_seconds)

        def on_signal(signum: int, frame: FrameType | None) -> None:
            connector.stop(bound)

        signal.signal(signal.SIGTERM, on_signal)
        signal.signal(signal.SIGINT, on_signal)
        held = connector.start(timedelta(seconds=60))
        print(
            f"running account={configuration.account_id} agent={configuration.agent_id}"
            f"{' shadow' if args.shadow else ''} held={','.join(held) or 'none'}",
            flush=True,
        )
        connector.run()
    logging.getLogger("connector.run").info("stopped")
    print("stopped", file=sys.stderr)
    return EXIT_OK
