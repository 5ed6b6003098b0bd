"""``bin/bench``: benchmarks of the connector's hot paths. Scripts, not tests: pytest never collects
them (no ``test_`` names), and they print figures rather than pass or fail -- except that each
checks its own work (every intent it timed really ended ``sent``) and exits 1 when it did not.

One subcommand a module under ``tests/bench``. Every bench keeps the connector's machine-wide pair
locks in a directory of its own (``BASECAMP_CONNECTOR_RUNTIME_DIR``), never in this machine's real
one: the stand-in's ids are fixed, and a record left there would refuse the next setup for them.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import tempfile
from collections.abc import Sequence
from typing import Protocol

from shell.state.pair_lock import RUNTIME_ENV

BENCHES = ("outbox", "instructions", "burst", "start", "scale", "mcp", "latency", "worker")


class _Bench(Protocol):
    def register(self, subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None: ...


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="bin/bench",
        description=(
            "Time the connector's hot paths on this machine, on a real disk, and print the figures. "
            "Progress goes to stderr; the results table to stdout."
        ),
        epilog="Run `bin/bench BENCH --help` for what each benchmark measures and its options.",
    )
    subparsers = parser.add_subparsers(dest="bench", metavar="BENCH")
    for name in BENCHES:
        module: _Bench = importlib.import_module(f"tests.bench.{name}_bench")
        module.register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.bench is None:
        parser.print_help()
        return 2
    with tempfile.TemporaryDirectory(prefix="bench-runtime-") as runtime:
        os.environ[RUNTIME_ENV] = runtime
        try:
            code: int = args.run(args)
        except KeyboardInterrupt:
            return 130
    return code


if __name__ == "__main__":
    sys.exit(main())
