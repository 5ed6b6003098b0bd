"""``bin/connect``: the argparse entry point. One subcommand a module in this package.

Rule: a subcommand's ``UserError`` becomes a line on stderr and an exit code at the one seam of
both command lines (``shell.cli.seam``).
"""

from __future__ import annotations

import argparse
import importlib
import logging
import sys
from collections.abc import Callable, Sequence
from typing import Protocol

from shell.cli.seam import answer, parse_arguments
from shell.errors import EXIT_USAGE

VERSION = "0.1.0"
COMMANDS = (
    "standin", "mcp", "login", "setup", "run", "status", "hold", "release", "redispatch", "discard",
    "settle-launch", "shadow", "import", "doctor", "demo",
)
MODULES = {"import": "import_file"}
"""A command whose module cannot be named as the command is (``import`` is Python's word)."""


class _Command(Protocol):
    def register(self, subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None: ...


def build_parser(commands: Sequence[str] = COMMANDS) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="bin/connect",
        description=(
            "The Basecamp connector: reads an account's event feed, runs a worker for the "
            "requests addressed to the agent, and posts its own lifecycle messages exactly "
            "once or not at all."
        ),
        epilog="Run `bin/connect COMMAND --help` for what each command does.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {VERSION}")
    parser.add_argument("-v", "--verbose", action="store_true", help="log each transition to stderr")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in commands:  # only these are imported: a one-command entry starts faster
        module: _Command = importlib.import_module(f"shell.cli.{MODULES.get(name, name.replace('-', '_'))}")
        module.register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None, commands: Sequence[str] = COMMANDS) -> int:
    parser = build_parser(commands)
    args = parse_arguments(parser, argv)
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.WARNING,
        format="%(asctime)s %(name)s %(message)s",
        stream=sys.stderr,
    )
    if args.command is None:
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    run: Callable[[argparse.Namespace], int] = args.run
    return answer(lambda: run(args), as_json=bool(getattr(args, "json", False)))


if __name__ == "__main__":
    sys.exit(main())
