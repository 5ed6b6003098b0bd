"""A real sender process for crash tests: the outbox wired as ``bin/connect run`` will wire it.

Reads the token from its first stdin line (never argv), starts the outbox (reconcile what a
previous process left, then send), prints ``started`` on stdout, then ticks until SIGTERM.
A crash test kills it with SIGKILL wherever it likes, or at a named step
(``CONNECTOR_PAUSE_AT``, see ``shell.crashpoints``).
"""

from __future__ import annotations

import argparse
import logging
import signal
import sys
import threading
from datetime import timedelta
from types import FrameType

from shell.basecamp.client import BasecampClient
from shell.connector import StartParts, settle_previous
from shell.ledger.connection import open_ledger
from shell.outbox import Outbox, OutboxOptions


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--ledger", required=True)
    parser.add_argument("--base-url", required=True)
    parser.add_argument("--account", type=int, required=True)
    parser.add_argument("--agent", type=int, required=True)
    parser.add_argument("--reconcile-after", type=float, default=60.0)
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(name)s %(message)s")
    token = sys.stdin.readline().strip()
    stop = threading.Event()

    def on_term(signum: int, frame: FrameType | None) -> None:
        stop.set()

    signal.signal(signal.SIGTERM, on_term)
    client = BasecampClient(args.base_url, args.account, token, "connector crash tests (tests@example.com)")
    options = OutboxOptions(
        reconcile_after=timedelta(seconds=args.reconcile_after), tick=timedelta(seconds=0.1)
    )
    with open_ledger(args.ledger) as ledger:
        outbox = Outbox(ledger, client, args.agent, options)
        settle_previous(StartParts(outbox), ledger.clock.monotonic() + 30)
        print("started", flush=True)
        outbox.run(stop)
    return 0


if __name__ == "__main__":
    sys.exit(main())
