"""``bin/bench start``: a restart over a large backlog in doubt, counted in listings.

What it runs: a ledger left by a crash with S holding replies still ``sending`` (claimed an hour
ago, each landed, its answer lost) spread evenly over D destinations, plus one guard that fell
due meanwhile; then the start path (``shell.connector.settle_previous``), as the connector starts, against an in-process Basecamp
(``tests.support.fake_basecamp.FakeBasecamp``) holding each intent's message, which counts the
listings asked of it.

It prints the listings made (target: about one a destination), the intents adopted, the start's
wall time and when the guard went out after the start began. The last line is
``start: listings=L intents=S destinations=D guard_after=G s``. It exits 1 when an intent was
not adopted or the guard was not sent by the start.
"""

from __future__ import annotations

import argparse
import logging
import sys
import tempfile
import time
from pathlib import Path

from core.destinations import Destination, MessageKind
from core.timestamps import format_timestamp
from shell.clock import SystemClock
from shell.connector import StartParts, settle_previous
from shell.ledger.connection import open_ledger
from shell.outbox import Outbox
from tests.bench.backlog import write_unrouted
from tests.bench.outbox_bench import OneTransaction, ShiftedClock, progress
from tests.support.fake_basecamp import AGENT_ID, FakeBasecamp
from tests.support.ledger_world import LedgerWorld

DEFAULT_INTENTS = 10_000
DEFAULT_DESTINATIONS = 1_000
FIRST_RECORDING = 8_000_000


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "start",
        help="a restart over intents left in doubt: listings per destination "
        "(last line: start: listings=L intents=S destinations=D guard_after=G s)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--intents", type=int, default=DEFAULT_INTENTS, metavar="S",
                        help=f"stale sending intents (default {DEFAULT_INTENTS})")  # fmt: skip
    parser.add_argument("--destinations", type=int, default=DEFAULT_DESTINATIONS, metavar="D",
                        help=f"destinations they are spread over (default {DEFAULT_DESTINATIONS})")  # fmt: skip
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    if args.intents < 1 or not 1 <= args.destinations <= args.intents:
        print("start: needs 1 <= destinations <= intents", file=sys.stderr)
        return 2
    logging.disable(logging.INFO)
    with tempfile.TemporaryDirectory(prefix="bench-start-") as directory:
        state = Path(directory) / "state"
        state.mkdir(mode=0o700)
        path = state / "ledger.sqlite3"
        guard_event = _build(path, args.intents, args.destinations)
        clock = SystemClock()
        basecamp = FakeBasecamp(clock)
        with open_ledger(path, clock=clock) as ledger:
            with ledger.read() as connection:
                for kind, bucket, recording, body in connection.execute(
                    "SELECT message_kind, bucket_id, recording_id, body FROM outbox WHERE state = 'sending'"
                ):
                    basecamp.seed(Destination(MessageKind(kind), bucket, recording), body)
            progress(f"starting over {args.intents} intents in doubt ...")
            began = time.monotonic()
            settle_previous(StartParts(Outbox(ledger, basecamp, AGENT_ID)), clock.monotonic() + 600)
            wall = time.monotonic() - began
            with ledger.read() as connection:
                adopted = connection.execute(
                    "SELECT count(*) FROM outbox WHERE kind = 'holding_reply' AND state = 'sent'"
                ).fetchone()[0]
                guard = connection.execute(
                    "SELECT state, finished_at FROM outbox WHERE kind = 'guard_ack' AND event_id = ?",
                    (guard_event,),
                ).fetchone()
    listings = basecamp.list_count()
    guard_sent = guard is not None and guard[0] == "sent"
    guard_after = wall if guard_sent else float("inf")
    print(
        f"listings made          {listings} for {args.intents} intents over {args.destinations} destinations"
    )
    print(f"intents adopted        {adopted} of {args.intents}")
    print(f"start wall time        {wall:.1f} s (the guard went out at its end: {guard_sent})")
    print(
        f"start: listings={listings} intents={args.intents} destinations={args.destinations}"
        f" guard_after={guard_after:.1f} s"
    )
    return 0 if adopted == args.intents and guard_sent else 1


def _build(path: Path, intents: int, destinations: int) -> int:
    """The crashed ledger (see the module's docstring); the guard's event id."""
    clock = ShiftedClock()
    write_unrouted(path, intents, lambda event_id: FIRST_RECORDING + event_id % destinations, clock)
    with open_ledger(path) as ledger, ledger.write() as connection:
        connection.execute(
            "UPDATE outbox SET state = 'sending', sending_at = ? WHERE state = 'pending'",
            (format_timestamp(clock.now()),),
        )
        world = LedgerWorld(OneTransaction(connection, clock))  # type: ignore[arg-type]
        world.request(intents + 1)  # admitted an hour ago: its guard is long due
    return intents + 1
