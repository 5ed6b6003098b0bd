"""``bin/connect``: the table of subcommands and the argparse entry point.

Only the chosen subcommand's module is imported: every start pays for the imports it makes, and
``status`` has no use for the stand-in, the worker or HTTP. The others are listed by their summary
from ``SUMMARIES`` alone, the one home of a summary (each module registers the same line), so
``--help`` lists every one and imports none. The chosen one is the first argument that is not an
option: the top level's options take no value, so that is the one argparse takes too. A
subcommand lives in ``shell.cli.<its name, - as _>`` unless ``HOMES`` names the module of its
concern; such a module registers each of its commands with ``register_<name>``."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Callable, Sequence
from typing import TypeAlias

from shell.cli.seam import JSON_FLAG, CommandParser, answer, bad_usage, log_to_stderr, parse_arguments
from shell.cli.start_signals import chosen
from shell.log_format import TEXT

VERSION = "0.1.0"
PROG = "bin/connect"
Subparsers: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"

SUMMARIES: dict[str, str] = {
    "standin": "serve a local Basecamp stand-in (for the demo and the tests)",
    "mcp": "serve a worker its dispatch tools over MCP stdio (started by the connector)",
    "login": "obtain the agent's token through Launchpad (OAuth 2) and keep it owner-only",
    "setup": "write and check the configuration for one (account, agent)",
    "run": "run the connector until stopped",
    "unit": "print a systemd unit that runs this configuration's connector as a service",
    "status": "what the connector is doing (read-only, takes no lock)",
    "show": "one event's history: how it was heard, its tasks, attempts, messages and decisions (read-only)",
    "hold": "set the durable hold: nothing launches or posts until `release`",
    "release": "clear the durable hold; held records stay held",
    "redispatch": "run a record again that the connector will not run on its own",
    "discard": "close a record without running it",
    "settle-launch": "settle an attempt a stopped connector left mid-launch (the worker ran, or did not)",
    "shadow": "the shadow run's ledger: `shadow promote`",
    "import": "apply a reconciliation file in one transaction, or nothing",
    "doctor": "check what the connector needs, one line each (safe beside a running one)",
    "demo": "the connector's main job in five narrated scenes, against a Basecamp stand-in",
}
COMMANDS = tuple(SUMMARIES)
HOMES = {**dict.fromkeys(("hold", "release", "redispatch", "discard", "settle-launch"), "decisions"),
         **dict.fromkeys(("shadow", "import"), "cutover")}


def module_name(command: str) -> str:
    return f"shell.cli.{HOMES.get(command, command.replace('-', '_'))}"


def add_command(subparsers: Subparsers, name: str, description: str, epilog: str | None = None,
                *, raw: bool = True) -> argparse.ArgumentParser:
    """A subcommand's parser, its summary from the table; ``raw``: its help keeps its lines."""
    formatter = argparse.RawDescriptionHelpFormatter if raw else argparse.HelpFormatter
    return subparsers.add_parser(name, help=SUMMARIES[name], description=description, epilog=epilog,
                                 formatter_class=formatter)  # fmt: skip


def build_parser(commands: Sequence[str] = COMMANDS, *, listed: Sequence[str] = (),
                 prog: str = PROG) -> argparse.ArgumentParser:
    """The parser with ``commands`` in full (their modules imported), the rest of ``listed`` by summary."""
    parser: argparse.ArgumentParser = CommandParser(
        prog=prog, epilog=f"Run `{prog} COMMAND --help` for what each command does.",
        description="The Basecamp connector: reads an account's event feed, runs a worker for the requests "
        "addressed to the agent, and posts its own lifecycle messages exactly once or not at all.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {VERSION}")
    parser.add_argument("-v", "--verbose", action="store_true", help="log each transition to stderr")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS:
        if name in commands:  # only these are imported: a one-command start is faster
            module = importlib.import_module(module_name(name))
            register = getattr(module, f"register_{name.replace('-', '_')}", None) or module.register
            register(subparsers)
        elif name in listed:
            subparsers.add_parser(name, help=SUMMARIES[name], add_help=False)
    return parser


def main(argv: Sequence[str] | None = None, commands: Sequence[str] = COMMANDS, prog: str = PROG) -> int:
    arguments = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(tuple(name for name in commands if name == chosen(arguments)), listed=commands,
                          prog=prog)
    args = parse_arguments(parser, arguments)
    log_to_stderr(args.verbose, getattr(args, "log_format", TEXT))  # run's --log-format
    if args.command is None:  # one line like any bad usage
        return bad_usage(f"{parser.prog}: name a command: {', '.join(COMMANDS)} (see `{parser.prog} --help`)",
                         as_json=JSON_FLAG in arguments)
    run: Callable[[argparse.Namespace], int] = args.run
    return answer(lambda: run(args), as_json=bool(getattr(args, "json", False)))


if __name__ == "__main__":
    sys.exit(main())
