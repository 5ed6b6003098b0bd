"""A real connector process for crash tests: the outbox and the dispatcher wired as
``bin/connect run`` will wire them, in the order the design requires.

The outbox reconciles and sends first; then dispatcher recovery; then the loop. The token
arrives on the first stdin line. The worker is the demo worker (shell.demo.worker), shaped by
WORKER_BEHAVIOUR. SIGTERM stops the workers (shutdown), settles them and flushes their notices.
"""

from __future__ import annotations

import argparse
import logging
import signal
import sys
import threading
from datetime import timedelta
from pathlib import Path
from types import FrameType

from shell.basecamp.client import BasecampClient
from shell.connector import StartParts, settle_previous
from shell.dispatcher import Dispatcher, DispatchOptions
from shell.ledger.connection import open_ledger
from shell.outbox import Outbox, OutboxOptions
from shell.worker.driver import CommandDriver, WorkerCommand

REPOSITORY = Path(__file__).resolve().parents[2]


def main() -> int:
    parser = argparse.ArgumentParser()
    for name in ("--ledger", "--base-url", "--work-dir", "--sessions"):
        parser.add_argument(name, required=True)
    for name in ("--account", "--agent", "--project"):
        parser.add_argument(name, type=int, required=True)
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(name)s %(message)s")
    token = sys.stdin.readline().strip()
    stop = threading.Event()

    def on_term(signum: int, frame: FrameType | None) -> None:
        stop.set()

    signal.signal(signal.SIGTERM, on_term)
    with open_ledger(args.ledger) as ledger:
        client = BasecampClient(
            args.base_url, args.account, token, "connector crash tests (tests@example.com)"
        )
        outbox = Outbox(ledger, client, args.agent, OutboxOptions(reconcile_after=timedelta(seconds=1)))
        command = WorkerCommand(
            argv=(sys.executable, "-m", "shell.demo.worker", "--mcp-config", "{mcp_config}"),
            env=(
                ("PYTHONPATH", str(REPOSITORY)),
                ("STANDIN_BASE_URL", args.base_url),
                ("STANDIN_ACCOUNT", str(args.account)),
                ("STANDIN_TOKEN", token),
            ),
            pass_env=("WORKER_BEHAVIOUR",),
        )

        driver = CommandDriver(
            command,
            private_dir=Path(args.sessions),
            ledger_path=ledger.path,
            grace_seconds=2,
            agent_id=args.agent,
        )
        dispatcher = Dispatcher(
            ledger,
            {args.project: Path(args.work_dir)},
            driver,
            driver,
            DispatchOptions(),
        )
        parts = StartParts(outbox, sessions=Path(args.sessions), recovery=dispatcher)
        held = settle_previous(parts, ledger.clock.monotonic() + 30).held
        print(f"started held={','.join(held)}", flush=True)
        while not stop.is_set():
            dispatcher.tick()
            outbox.run_once()
            stop.wait(0.1)
        dispatcher.stop(timeout=20)
        outbox.flush(deadline=ledger.clock.monotonic() + 10)
    return 0


if __name__ == "__main__":
    sys.exit(main())
