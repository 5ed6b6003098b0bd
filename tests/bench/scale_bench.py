"""``bin/bench scale``: ``bin/connect status`` over ledgers of growing size, in time and memory.

For each size N (default 1,000, 10,000 and 100,000) it writes a ledger holding N records and N
intents (a mention each, blocked without a route, its holding reply; all but one in a hundred
sent, the rest pending), in the state directory ``bin/connect setup`` writes against the bundled
stand-in. Then it runs ``bin/connect status`` on it as a real process, ``--repeat`` times, under a
small watcher process that reports the child's peak RSS (``ru_maxrss`` of its children), and
takes the median wall time.

It prints a row per size, beside ``bin/connect --version`` timed the same way (the start every
command pays); the last line is ``scale: rss_ratio=R status_ms=M start_ms=S prometheus_ms=P``: R is
the peak RSS at the largest size over the smallest, M the status time (ms) at the largest, S that
start, P ``status --prometheus``'s time (ms) at the largest, timed the same way.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from core.timestamps import format_timestamp
from shell.basecamp.standin.server import StandIn
from shell.ledger.connection import open_ledger
from shell.state.pair_lock import RUNTIME_ENV
from tests.bench.backlog import write_unrouted
from tests.bench.outbox_bench import ShiftedClock, progress
from tests.support.configured import configure_connector

REPOSITORY = Path(__file__).resolve().parents[2]
CONNECT = str(REPOSITORY / "bin" / "connect")
DEFAULT_SIZES = (1_000, 10_000, 100_000)
WATCH = (
    "import json, resource, subprocess, sys, time\n"
    "started = time.perf_counter()\n"
    "done = subprocess.run(sys.argv[1:], capture_output=True)\n"
    "wall = time.perf_counter() - started\n"
    "print(json.dumps({'code': done.returncode, 'wall': wall,"
    " 'rss_kb': resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss}))\n"
)


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "scale",
        help="bin/connect status over 1k, 10k and 100k records and intents (last line: scale: rss_ratio=R ...)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--sizes", type=lambda text: tuple(int(n) for n in text.split(",")),
                        default=DEFAULT_SIZES, metavar="N,N,...",
                        help="ledger sizes, smallest first (default 1000,10000,100000)")  # fmt: skip
    parser.add_argument("--repeat", type=int, default=5, metavar="R", help="status runs a size (default 5)")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    logging.disable(logging.INFO)
    rows: list[tuple[int, float, float, float]] = []
    floor = statistics.median(_watch([CONNECT, "--version"])[1] for _ in range(max(1, args.repeat)))
    print(f"{'bin/connect --version':>34}   {floor * 1000:7.0f} ms   (the start every status pays)")
    with tempfile.TemporaryDirectory(prefix="bench-scale-") as directory, StandIn(world="demo") as standin:
        for size in args.sizes:
            place = Path(directory) / str(size)
            place.mkdir()
            os.environ[RUNTIME_ENV] = str(place / "runtime")  # each size is its own pair's home
            with contextlib.redirect_stdout(sys.stderr):  # setup's report is progress here
                state = configure_connector(standin, place)
            _fill(state / "ledger.sqlite3", size)
            runs = [_status(state) for _ in range(max(1, args.repeat))]
            metrics = [_status(state, "--prometheus") for _ in range(max(1, args.repeat))]
            if any(code != 0 for code, _, _ in runs + metrics):
                print(f"scale: status failed at {size}", file=sys.stderr)
                return 1
            wall = statistics.median(wall for _, wall, _ in runs)
            metrics_wall = statistics.median(wall for _, wall, _ in metrics)
            rss = max(rss for _, _, rss in runs)
            rows.append((size, wall, rss, metrics_wall))
            print(f"{size:>8} records and intents   status {wall * 1000:7.0f} ms   peak RSS {rss:6.1f} MB"
                  f"   --prometheus {metrics_wall * 1000:7.0f} ms")
    ratio = rows[-1][2] / rows[0][2]
    print(f"scale: rss_ratio={ratio:.2f} status_ms={rows[-1][1] * 1000:.0f} start_ms={floor * 1000:.0f}"
          f" prometheus_ms={rows[-1][3] * 1000:.0f}")
    return 0


def _status(state: Path, *more: str) -> tuple[int, float, float]:
    """One ``bin/connect status`` run: its exit code, wall seconds and peak RSS in MB."""
    return _watch([CONNECT, "status", "--state-dir", str(state), *more])


def _watch(command: list[str]) -> tuple[int, float, float]:
    watched = subprocess.run(
        [sys.executable, "-c", WATCH, *command],
        capture_output=True,
        text=True,
        check=True,
    )
    figures = json.loads(watched.stdout)
    return int(figures["code"]), float(figures["wall"]), float(figures["rss_kb"]) / 1024


def _fill(path: Path, size: int) -> None:
    """``size`` mentions blocked without a route, each with its holding reply; 99% sent."""
    clock = ShiftedClock()
    started = time.monotonic()
    write_unrouted(path, size, lambda event_id: 9_000_000 + event_id % 1000, clock)
    with open_ledger(path) as ledger, ledger.write() as connection:
        stamp = format_timestamp(clock.now())
        connection.execute(
            "UPDATE outbox SET state = 'sending', sending_at = ? WHERE id % 100 <> 0", (stamp,)
        )
        connection.execute(
            "UPDATE outbox SET state = 'sent', receipt_id = id, finished_at = ? WHERE state = 'sending'",
            (stamp,),
        )
    progress(f"  {size} records and intents written in {time.monotonic() - started:.0f} s")
