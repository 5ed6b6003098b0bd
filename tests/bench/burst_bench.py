"""``bin/bench burst``: a backlog drained against Basecamp's rate limit, with a guard due mid-way.

What it runs, all real but the worker: the bundled stand-in on 127.0.0.1 enforcing Basecamp's
limit (default 50 requests per 10 s per client address), a ledger file, the connector's
``BasecampClient`` (its default pacing: 47 of every 50 the limit allows) and its ``Outbox`` running its
own loop (``Outbox.run``), beside a feed poller reading ``events.json`` every 5 s on the same
client, as the connector's intake does, and its inbox (``inbox.json``) every sixth poll, as the
inbox lane does (``shell.intake.inbox_lane.DEFAULT_EVERY_POLLS``): both spend from the one budget.

The backlog: N mentions in a project without a route, each blocked ``no_route`` at once, so N
holding replies fall due together (written by the verdict's own transaction, as admission writes them). Plus
one fresh mention admitted at the start whose guard (a boost) falls due half-way through the
expected drain.

It prints: the drain's rate (holding replies sent, first claim to last receipt) as a share of
the limit; the 429s the stand-in answered (any request); the guard's lateness (its receipt
past its due time); the polls made; peak RSS of this process (stand-in included). The last line
is ``burst: use=U% 429=N guard_late=S s``. Figures, not a test: it exits 1 only when the bench
did not do its work (a message left unsent).
"""

from __future__ import annotations

import argparse
import logging
import resource
import sys
import tempfile
import threading
import time
from datetime import timedelta
from pathlib import Path

from core.feed import FeedFilters
from core.pacing import DEFAULT_LIMIT
from core.snapshots import NO_ROUTE
from core.timestamps import parse_timestamp
from shell.basecamp.client import BasecampClient
from shell.basecamp.errors import FeedFailed
from shell.basecamp.standin.faults import RateLimit
from shell.basecamp.standin.server import StandIn
from shell.clock import SystemClock
from shell.intake.inbox_lane import DEFAULT_EVERY_POLLS
from shell.ledger.connection import Ledger, open_ledger
from shell.outbox import Outbox
from tests.support.ledger_world import LedgerWorld

DEFAULT_MESSAGES = 1000
USER_AGENT = "basecamp-connector bench (bench@example.com)"
POLL_EVERY = 5.0
CLIENT_SHARE = DEFAULT_LIMIT / 50  # the client's default share of Basecamp's limit: 47 of 50


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "burst",
        help="a backlog of holding replies drained at the rate limit, a guard due mid-way "
        "(last line: burst: use=U%% 429=N guard_late=S s)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="The defaults take about 4 minutes (1,000 messages at 47 per 10 s).",
    )
    parser.add_argument(
        "--messages",
        type=int,
        default=DEFAULT_MESSAGES,
        metavar="N",
        help=f"holding replies queued at once (default {DEFAULT_MESSAGES})",
    )
    parser.add_argument(
        "--limit",
        type=RateLimit.parse,
        default=RateLimit(),
        metavar="N/SECONDS",
        help="the stand-in's rate limit (default 50/10, Basecamp's); the client paces at 47/50 of it",
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    limit: RateLimit = args.limit
    if limit.requests == 0 or args.messages < 1:
        print("burst: needs a rate limit and at least one message", file=sys.stderr)
        return 2
    logging.disable(logging.INFO)
    per_second = limit.requests / limit.window
    client_requests = max(1, int(limit.requests * CLIENT_SHARE))
    expected = max(0.0, args.messages - client_requests) / (client_requests / limit.window)
    guard_delay = timedelta(seconds=max(1.0, expected / 2))
    with (
        tempfile.TemporaryDirectory(prefix="bench-burst-") as directory,
        StandIn(world="demo", rate_limit=limit) as standin,
    ):
        state = Path(directory) / "state"
        state.mkdir(mode=0o700)
        clock = SystemClock()
        with open_ledger(state / "ledger.sqlite3", clock=clock) as ledger:
            card = standin.world.projects[0].recording_ids[0]
            world = LedgerWorld(ledger, guard_delay=guard_delay)
            print(f"queueing {args.messages} holding replies and one guard ...", file=sys.stderr)
            for number in range(1, args.messages + 1):
                world.seen(number, recording_id=card)
                world.verdict(number, "blocked", reason=NO_ROUTE)
            guard_event = args.messages + 1
            world.request(guard_event, recording_id=standin.world.projects[1].recording_ids[0])
            client = BasecampClient(
                standin.base_url,
                standin.world.account_id,
                standin.world.token,
                USER_AGENT,
                clock=clock,
                requests_per_window=client_requests,
                window_seconds=limit.window,
            )
            print(
                f"draining at {limit.describe()} (client {client_requests}/{limit.window:g}); "
                f"about {expected:.0f} s ...",
                file=sys.stderr,
            )
            started = time.monotonic()
            polls = _drain(ledger, client, standin.world.agent.id, args.messages + 1)
            wall = time.monotonic() - started
            figures = _figures(ledger, guard_event)
        statuses = [request.status for request in standin.requests()]
    sent, first, last, guard_late = figures
    drain = (last - first) if sent > 1 else 0.0
    use = 100.0 * (sent - 1) / drain / per_second if drain > 0 else 0.0
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    limited = statuses.count(429)
    print(f"holding replies sent   {sent - 1} of {args.messages} in {drain:.1f} s ({wall:.1f} s in all)")
    print(
        f"drain rate             {(sent - 1) / drain if drain else 0:.2f}/s of a limit of {per_second:.2f}/s"
    )
    print(f"requests answered 429  {limited} (of {len(statuses)} requests; {polls} feed polls)")
    print(f"guard past its due     {guard_late:.2f} s")
    print(f"peak RSS               {rss_mb:.1f} MB (this process, the stand-in included)")
    print(f"burst: use={use:.0f}% 429={limited} guard_late={guard_late:.1f} s")
    return 0 if sent == args.messages + 1 else 1


def _drain(ledger: Ledger, client: BasecampClient, agent_id: int, total: int) -> int:
    """Run the outbox's loop and a feed poller until every intent is settled; the polls made."""
    stop = threading.Event()
    outbox = Outbox(ledger, client, agent_id)
    sender = threading.Thread(target=outbox.run, args=(stop,), name="outbox", daemon=True)
    polls = 0

    def poll() -> None:
        nonlocal polls
        position: str | None = None
        inbox_position: str | None = None
        while not stop.is_set():
            try:
                page = client.poll_events(None, position, FeedFilters.of(), client.deadline_in(30))
                position = page.position or position
                polls += 1
                if polls % DEFAULT_EVERY_POLLS == 1:
                    inbox_position = client.poll_inbox(None, inbox_position, client.deadline_in(30)).position
            except FeedFailed:
                pass
            stop.wait(POLL_EVERY)

    poller = threading.Thread(target=poll, name="intake", daemon=True)
    sender.start()
    poller.start()
    while _settled(ledger) < total:
        time.sleep(0.5)
    stop.set()
    sender.join()
    poller.join()
    return polls


def _settled(ledger: Ledger) -> int:
    with ledger.read() as connection:
        row = connection.execute(
            "SELECT count(*) FROM outbox WHERE state NOT IN ('pending', 'sending')"
        ).fetchone()
    return int(row[0])


def _figures(ledger: Ledger, guard_event: int) -> tuple[int, float, float, float]:
    """Sent intents; the first claim and last receipt of the holding replies (epoch seconds);
    the guard's receipt past its due time (seconds)."""
    with ledger.read() as connection:
        sent = int(connection.execute("SELECT count(*) FROM outbox WHERE state = 'sent'").fetchone()[0])
        first, last = connection.execute(
            "SELECT min(sending_at), max(finished_at) FROM outbox WHERE kind = 'holding_reply' AND state = 'sent'"
        ).fetchone()
        due, done = connection.execute(
            "SELECT not_before, finished_at FROM outbox WHERE kind = 'guard_ack' AND event_id = ?",
            (guard_event,),
        ).fetchone()
    seconds = [
        parse_timestamp(str(value)).timestamp() if value else 0.0 for value in (first, last, due, done)
    ]
    late = seconds[3] - seconds[2] if done else float("inf")
    return sent, seconds[0], seconds[1], late
