"""``bin/bench instructions``: the outbox's own work per intent against the raw-SQLite floor's,
counted in CPU instructions, which a busy disk or machine does not move.

``bin/bench outbox``'s wall ratio is fsync-bound: the same build moves 0.1-0.2 between runs. This
counts what the code costs instead. Each side runs in a child process under valgrind's callgrind,
which counts the instructions executed only while the timed part runs (the part is called through
``functools.reduce``, and callgrind collects only inside that C function: the interpreter's start,
the ledger's open and its ``quick_check`` are not counted):

1. flush: one ``Outbox.flush()`` draining N due guard intents (``bin/bench outbox``'s template and
   instant poster), claim -> post -> receipt.
2. floor: ``bin/bench outbox``'s floor moves of the same N intents on a copy of the same ledger.

Instructions are the process's own (user space); the kernel's share (fsync) is not counted, and
is the same on both sides. Needs valgrind (``apt install valgrind``): without it, exit 2. The last
line is ``instructions ratio: R``. Deterministic for one build under ``PYTHONHASHSEED=0`` (set
for the children) to within a few hundred instructions an intent.
"""

from __future__ import annotations

import argparse
import functools
import itertools
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from shell.ledger.connection import open_ledger
from shell.outbox import FlushSummary, Outbox, SendResult
from tests.bench.outbox_bench import (
    REPO,
    InstantPoster,
    _due_ids,
    _positive,
    build_template,
    copy_ledger,
    floor_moves,
    progress,
    raw_connection,
    states,
)
from tests.support.fake_basecamp import AGENT_ID

DEFAULT_INTENTS = 600
_COLLECTED = re.compile(r"Collected\s*:\s*([\d,]+)")


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "instructions",
        help="the outbox's CPU instructions per intent against the raw SQLite floor's (needs valgrind)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="About a minute at the default size. Exit 2 without valgrind, 1 if a side's work failed.",
    )
    parser.add_argument(
        "--intents",
        type=_positive,
        default=DEFAULT_INTENTS,
        metavar="N",
        help=f"due guard intents each side moves (default {DEFAULT_INTENTS})",
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    valgrind = shutil.which("valgrind")
    if valgrind is None:
        print("error: valgrind is not installed (apt install valgrind); nothing counted", file=sys.stderr)
        return 2
    directory = Path(tempfile.mkdtemp(prefix="bench-instructions-"))
    os.chmod(directory, 0o700)
    try:
        progress(f"writing a template ledger with {args.intents} due guard intents")
        template = directory / "template.sqlite3"
        build_template(template, args.intents, stale=False)
        counts: dict[str, int] = {}
        for side in ("flush", "floor"):
            progress(f"counting the {side} of {args.intents} intents under callgrind")
            counts[side] = _count(valgrind, side, args.intents, template, directory)
            if counts[side] <= 0:
                print(f"error: callgrind counted nothing for the {side}", file=sys.stderr)
                return 1
    except subprocess.CalledProcessError as error:
        print(f"error: the counted child failed (exit {error.returncode}):\n{error.stderr}", file=sys.stderr)
        return 1
    finally:
        shutil.rmtree(directory, ignore_errors=True)
    flush, floor = (counts[side] / args.intents for side in ("flush", "floor"))
    print(f"bin/bench instructions -- {args.intents} due guard intents, instructions per intent (user space)")
    print(f"outbox flush     {flush:12,.0f}")
    print(f"raw sqlite floor {floor:12,.0f}")
    print(f"beyond the floor {flush - floor:12,.0f}")
    print(f"instructions ratio: {flush / floor:.2f}")
    return 0


def _count(valgrind: str, side: str, intents: int, template: Path, directory: Path) -> int:
    out = directory / f"{side}.callgrind"
    finished = subprocess.run(
        [
            valgrind, "--tool=callgrind", "--collect-atstart=no", "--toggle-collect=functools_reduce",
            f"--callgrind-out-file={out}", sys.executable, "-m", "tests.bench.instructions_bench",
            side, str(intents), str(template), str(directory),
        ],
        cwd=REPO, env={**os.environ, "PYTHONHASHSEED": "0"}, capture_output=True, text=True, check=True,
    )  # fmt: skip
    found = _COLLECTED.search(finished.stderr)
    return 0 if found is None else int(found.group(1).replace(",", ""))


def _child(side: str, intents: int, template: Path, directory: Path) -> None:
    """One side's timed part, inside ``functools.reduce`` (the only part callgrind collects)."""
    path = copy_ledger(template, directory / f"{side}.sqlite3")
    if side == "flush":
        done: list[FlushSummary] = []
        with open_ledger(path) as ledger:
            outbox = Outbox(ledger, InstantPoster(), AGENT_ID)
            functools.reduce(lambda _, __: done.append(outbox.flush()), [0], None)
        sent = done[0].count(SendResult.sent)
        if sent != intents:
            raise SystemExit(f"the flush sent {sent} of {intents}")
        return
    connection = raw_connection(path)
    try:
        ids = _due_ids(connection)
        receipts = itertools.count(5_000_000_000)
        functools.reduce(lambda _, __: floor_moves(connection, ids, receipts), [0], None)
        if states(connection) != {"sent": intents}:
            raise SystemExit(f"the floor left {states(connection)}")
    finally:
        connection.close()


if __name__ == "__main__":
    _child(sys.argv[1], int(sys.argv[2]), Path(sys.argv[3]), Path(sys.argv[4]))
