"""``bin/connect run``: the connector, until SIGTERM or SIGINT.

Rules: the instance lock is taken before anything else (one connector per account and agent);
the start order is the connector's (``shell.connector``); SIGTERM and SIGINT stop it within a
bound and exit 0; a configuration, token or ledger problem is one line and exit 3.
"""

from __future__ import annotations

import argparse
import logging
import signal
import sys
from datetime import timedelta
from pathlib import Path
from types import FrameType

from shell.basecamp import BasecampClient
from shell.clock import SystemClock
from shell.config import load_config, locate_state, read_token
from shell.connector import Connector
from shell.errors import EXIT_OK
from shell.ledger import open_ledger
from shell.lock import acquire
from shell.worker import WorkerCommand

USER_AGENT = "basecamp-connector (https://github.com/basecamp/basecamp-connector)"


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "run",
        help="run the connector until stopped",
        description=(
            "Run the connector: read the account's event feed, admit what is the agent's business, "
            "run a worker for it in the project's approved directory, and post the connector's own "
            "lifecycle messages exactly once or not at all. Stops cleanly on SIGTERM or SIGINT."
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
        "--poll-seconds", type=float, default=5.0, help="how often to read the feed (default 5)"
    )
    parser.add_argument(
        "--shutdown-seconds",
        type=float,
        default=60.0,
        help="the bound on stopping workers and flushing their notices (default 60)",
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    paths = locate_state(args.state_dir, args.account, args.agent)
    configuration = load_config(paths.config)
    token = read_token(Path(configuration.token_file))
    clock = SystemClock()
    lock = acquire(paths.directory, configuration.account_id, configuration.agent_id, clock.now())
    ledger_path = paths.directory / "shadow.sqlite3" if args.shadow else paths.ledger
    command = (
        WorkerCommand(argv=configuration.worker_command)
        if configuration.worker_command
        else WorkerCommand.claude_code()
    )
    with lock, open_ledger(ledger_path, clock=clock) as ledger:
        client = BasecampClient(
            configuration.base_url, configuration.account_id, token, USER_AGENT, clock=clock
        )
        connector = Connector(
            configuration,
            ledger,
            client,
            clock,
            command,
            paths.directory / "sessions",
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
