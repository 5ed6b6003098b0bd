"""``bin/connect``: the argparse entry point. One subcommand a module in this package.

Rules:
1. A subcommand's ``UserError`` becomes a line on stderr and an exit code at the one seam of
   both command lines (``shell.cli.seam``).
2. Only the chosen subcommand's module is imported: every start pays for the imports it makes,
   and ``status`` has no use for the stand-in, the worker or HTTP. The others are listed by
   their one-line summary from ``shell.cli.commands`` alone, so ``--help`` lists every one and
   imports none. The chosen one is the first argument that is not an option (``chosen``): the
   top level's options (``-h``, ``--version``, ``-v``) take no value, so that is the argument
   argparse takes for the subcommand too.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import sys
from collections.abc import Callable, Sequence
from typing import Protocol

from shell.cli.commands import SUMMARIES, chosen, module_name
from shell.cli.seam import JSON_FLAG, CommandParser, answer, bad_usage, parse_arguments

VERSION = "0.1.0"
COMMANDS = tuple(SUMMARIES)


class _Command(Protocol):
    def register(self, subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None: ...


def build_parser(
    commands: Sequence[str] = COMMANDS, *, listed: Sequence[str] = ()
) -> argparse.ArgumentParser:
    """The parser with ``commands`` in full (their modules imported), and each other one of
    ``listed`` by its summary only."""
    parser: argparse.ArgumentParser = CommandParser(
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
    for name in COMMANDS:
        if name in commands:  # only these are imported: a one-command start is faster
            module: _Command = importlib.import_module(module_name(name))
            module.register(subparsers)
        elif name in listed:
            subparsers.add_parser(name, help=SUMMARIES[name], add_help=False)
    return parser


def main(argv: Sequence[str] | None = None, commands: Sequence[str] = COMMANDS) -> int:
    arguments = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(tuple(name for name in commands if name == chosen(arguments)), listed=commands)
    args = parse_arguments(parser, arguments)
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.WARNING,
        format="%(asctime)s %(name)s %(message)s",
        stream=sys.stderr,
    )
    if args.command is None:  # one line like any bad usage (rule 6 of shell.cli.seam)
        return bad_usage(f"{parser.prog}: name a command: {', '.join(COMMANDS)} (see `{parser.prog} --help`)",
                         as_json=JSON_FLAG in arguments)
    run: Callable[[argparse.Namespace], int] = args.run
    return answer(lambda: run(args), as_json=bool(getattr(args, "json", False)))


if __name__ == "__main__":
    sys.exit(main())
