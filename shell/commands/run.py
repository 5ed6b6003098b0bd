"""``bin/connect run``: the connector, until SIGTERM or SIGINT.

Rules:
1. The instance lock is taken before anything else that touches the state (one connector per
   account and agent); the start order is the connector's (``shell.connector``); SIGTERM and
   SIGINT stop it within a bound and exit 0. ``--shadow`` keeps its own lock, ledger and feed
   position in ``<state>/shadow/``, so it runs beside the connector and never shares its state.
2. A configuration, token or ledger problem is one line and exit 3 (``EXIT_CONFIG``); a
   ledger from a newer program is refused before anything in it changes.
3. Before the connector starts -- before it reads the feed, reconciles or posts anything --
   the token is asked who it acts as (``my/profile.json``). A token acting as anyone but the
   configured agent is refused, one line naming both ids, ``EXIT_CONFIG``: a connector running
   as someone else would post its notices in their name, and its loop guard
   (``exclude_performers=self``) would hide that person's events and let the agent's own
   through. A token Basecamp refuses (401) is ``EXIT_CONFIG``; a Basecamp that cannot answer
   within ``CHECK_SECONDS`` is ``EXIT_UNAVAILABLE``: an identity that cannot be checked is not
   assumed. The check comes after the local ones (the lock, the ledger), so a person offline
   still hears of those, and a second ``run`` beside a running one is turned away by the lock
   without a request.
"""

from __future__ import annotations

import argparse
import logging
import signal
import sys
from datetime import timedelta
from pathlib import Path
from types import FrameType

from shell.arguments import positive_seconds
from shell.basecamp import AuthenticationFailed, BasecampClient, BasecampError
from shell.clock import SystemClock
from shell.config import load_config, locate_state, read_token
from shell.connector import Connector
from shell.errors import EXIT_CONFIG, EXIT_OK, EXIT_UNAVAILABLE, UserError
from shell.ledger import open_ledger
from shell.lock import acquire
from shell.worker import WorkerCommand

USER_AGENT = "basecamp-connector (https://github.com/basecamp/basecamp-connector)"
CHECK_SECONDS = 20.0
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
            "exit codes: 0 stopped by SIGTERM or SIGINT; 3 configuration, token, worker program or\n"
            "ledger (one line says which); 6 another connector runs for this account and agent, or\n"
            "Basecamp could not be asked who the token is."
        ),
        help="run the connector until stopped",
        description=(
            "Run the connector: read the account's event feed, admit what is the agent's business,\n"
            "run a worker for it in the project's approved directory, and post the connector's own\n"
            "lifecycle messages exactly once or not at all. Stops cleanly on SIGTERM or SIGINT,\n"
            "within --shutdown-seconds. Run it under a supervisor that restarts it on exit."
        ),
    )
    parser.add_argument("--state-dir", help="the state directory `setup` wrote (default: found from the ids)")
    parser.add_argument("--account", help="the account id (with --agent) to find the state directory")
    parser.add_argument("--agent", help="the agent's person id (with --account)")
    parser.add_argument(
        "--shadow",
        action="store_true",
        help="admit and log on a ledger of its own; dispatch nothing, post nothing",
    )
    parser.add_argument(
        "--poll-seconds", type=positive_seconds, default=5.0, help="how often to read the feed (default 5)"
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
    token = read_token(Path(configuration.token_file))
    clock = SystemClock()
    command = WorkerCommand.configured(configuration.worker_command)
    missing_program = None if args.shadow else command.program_missing()
    if missing_program is not None:  # every request would fail to start, in public
        raise UserError(f"{missing_program}: not started", EXIT_CONFIG)
    directory = paths.directory / SHADOW_DIRECTORY if args.shadow else paths.directory
    if args.shadow:
        directory.mkdir(mode=0o700, exist_ok=True)
    lock = acquire(directory, configuration.account_id, configuration.agent_id, clock.now())
    ledger_path = directory / "ledger.sqlite3" if args.shadow else paths.ledger
    with lock, open_ledger(ledger_path, clock=clock) as ledger:
        client = BasecampClient(
            configuration.base_url, configuration.account_id, token, USER_AGENT, clock=clock
        )
        check_identity(client, configuration.agent_id, configuration.token_file, configuration.base_url)
        connector = Connector(
            configuration,
            ledger,
            client,
            clock,
            command,
            directory / "sessions",
            shadow=args.shadow,
            poll_every=timedelta(seconds=args.poll_seconds),
            on_event=lambda line: print(line, flush=True),
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


def check_identity(client: BasecampClient, agent_id: int, token_file: str, base_url: str) -> None:
    """Refuse to start unless the token acts as the configured agent (rule 3)."""
    try:
        person = client.me(client.deadline_in(CHECK_SECONDS))
    except AuthenticationFailed as error:
        raise UserError(
            f"Basecamp refused the token in {token_file} (401): not started", EXIT_CONFIG
        ) from error
    except BasecampError as error:
        raise UserError(
            f"could not ask {base_url} who the token in {token_file} acts as ({error}): not started",
            EXIT_UNAVAILABLE,
        ) from error
    if person.id != agent_id:
        raise UserError(
            f"the token in {token_file} acts as person {person.id} ({person.name}), "
            f"not the configured agent {agent_id}: not started "
            "(give the agent's own token, or run setup for that person)",
            EXIT_CONFIG,
        )
