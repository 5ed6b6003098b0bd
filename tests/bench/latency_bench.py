"""``bin/bench latency``: how long a person who mentions the agent waits, with the live lane and
without it, against a stand-in whose poll lane waits as Basecamp's does (30 s by default).

For each lane setting it starts the stand-in and a real ``bin/connect run`` (the bundled demo
worker, which speaks MCP), then mentions the agent ``--mentions`` times, one after another:
each mention waits for its worker to finish before the next is made. Three figures a mention,
all from recorded wall-clock times (the event's ``created_at`` on the stand-in; the ledger's
``events.seen_at``, ``attempts.running_at`` and ``task_events.exposed_at``), none from polling:

  recorded   mention -> the event's record (``seen``)
  spawned    mention -> the worker's process is running, as the connector notes it (after
             the spawn returns: a quick worker may pull before this is written)
  pulled     mention -> the worker's first ``get_dispatch`` (its instruction exposed)

It prints p50 and p95 of each for each setting, and last ``live p50: X s`` (spawned, live lane
on). Exit 1 when a mention was not pulled within the bound.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from core.timestamps import parse_timestamp
from shell.basecamp.standin.server import StandIn
from shell.ledger.connection import open_ledger_read_only
from tests.support.configured import configure_connector

REPOSITORY = Path(__file__).resolve().parents[2]
CONNECT = str(REPOSITORY / "bin" / "connect")
DEFAULT_MENTIONS = 5
DEFAULT_FEED_DELAY = 30.0
FIGURES = ("recorded", "spawned", "pulled")


@dataclass(frozen=True, slots=True)
class Timing:
    recorded: float
    spawned: float
    pulled: float


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError("at least 1")
    return value


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "latency",
        help="mention -> recorded / worker spawned / first get_dispatch, live lane on and off (last line: live p50)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="Defaults take about four minutes (the poll lane's 30 s, five times). Progress goes to stderr.",
    )
    parser.add_argument("--mentions", type=_positive, default=DEFAULT_MENTIONS, metavar="N",
                        help=f"mentions a setting (default {DEFAULT_MENTIONS})")  # fmt: skip
    parser.add_argument("--feed-delay", type=float, default=DEFAULT_FEED_DELAY, metavar="SECONDS",
                        help="the stand-in's poll-lane delay (default 30, Basecamp's)")  # fmt: skip
    parser.add_argument("--live-only", action="store_true", help="skip the run without the live lane")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    settings = [("live lane on", True)] + ([] if args.live_only else [("poll lane only", False)])
    results: dict[str, list[Timing]] = {}
    for name, live in settings:
        print(f"== {name}: {args.mentions} mentions, poll lane delay {args.feed_delay:g} s", file=sys.stderr)
        timings = _measure(live, args.mentions, args.feed_delay)
        if timings is None:
            return 1
        results[name] = timings
    print(f"{'setting':<16} {'figure':<10} {'p50 s':>8} {'p95 s':>8}")
    for name, timings in results.items():
        for figure in FIGURES:
            values = [getattr(timing, figure) for timing in timings]
            print(f"{name:<16} {figure:<10} {percentile(values, 50):>8.2f} {percentile(values, 95):>8.2f}")
    spawned = [timing.spawned for timing in results["live lane on"]]
    print(f"live p50: {percentile(spawned, 50):.2f} s")
    return 0


def percentile(values: list[float], percent: int) -> float:
    """The ``percent``-th percentile of ``values`` (inclusive); the value itself for one."""
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[percent - 1]


def _measure(live: bool, mentions: int, feed_delay: float) -> list[Timing] | None:
    with tempfile.TemporaryDirectory(prefix="bench-latency-") as directory, StandIn(
        world="demo", feed_delay=feed_delay
    ) as standin:
        root = Path(directory)
        os.chmod(root, 0o700)
        with contextlib.redirect_stdout(sys.stderr):
            state = configure_connector(standin, root)
        command = [CONNECT, "run", "--state-dir", str(state), *([] if live else ["--no-live"])]
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        try:
            assert process.stdout is not None
            process.stdout.readline()  # "running ..."
            time.sleep(2.0)  # the live lane connects; the poll lane has read once
            timings: list[Timing] = []
            card = standin.world.projects[0].recording_ids[0]
            for number in range(mentions):
                event_id = standin.mention(standin.world.people[0], card, f"latency {number}")
                timing = _wait_for(state, standin, event_id, bound=feed_delay + 60)
                if timing is None:
                    print(f"  event {event_id} was not pulled in time", file=sys.stderr)
                    return None
                print(f"  event {event_id}: " + ", ".join(f"{name} {getattr(timing, name):.2f} s"
                                                        for name in FIGURES), file=sys.stderr)  # fmt: skip
                timings.append(timing)
            return timings
        finally:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def _wait_for(state: Path, standin: StandIn, event_id: int, bound: float) -> Timing | None:
    mentioned = next(event.created_at for event in standin.feed.events() if event.id == event_id)
    deadline = time.monotonic() + bound
    while time.monotonic() < deadline:
        with open_ledger_read_only(state / "ledger.sqlite3") as ledger, ledger.read() as connection:
            row = connection.execute(
                "SELECT e.seen_at, a.running_at, te.exposed_at, a.state FROM events e"
                " JOIN task_events te ON te.event_id = e.id JOIN attempts a ON a.id = te.exposed_attempt_id"
                " WHERE e.id = ?",
                (event_id,),
            ).fetchone()
        if row is not None and row[1] and row[2] and row[3] == "ended":
            seen, running, exposed = (parse_timestamp(str(stamp)) for stamp in row[:3])
            return Timing(*((stamp - mentioned).total_seconds() for stamp in (seen, running, exposed)))
        time.sleep(0.2)
    return None
