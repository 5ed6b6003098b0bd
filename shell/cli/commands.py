"""The table of ``bin/connect``'s subcommands: each one's name and one-line summary, in the order
``--help`` lists them.

Rules:
1. This is the one home of a subcommand's summary: its module's ``register`` passes
   ``SUMMARIES[name]`` as the subparser's ``help``, so the line ``--help`` lists without importing
   the module is the line the module registers.
2. A subcommand ``name`` lives in ``shell.cli.<name with - as _>`` (``import``, Python's word,
   in ``shell.cli.import_file``), whose ``register(subparsers)`` adds it. This module imports
   nothing: it is read on every start.
"""

SUMMARIES: dict[str, str] = {
    "standin": "serve a local Basecamp stand-in (for the demo and the tests)",
    "mcp": "serve a worker its dispatch tools over MCP stdio (started by the connector)",
    "login": "obtain the agent's token through Launchpad (OAuth 2) and keep it owner-only",
    "setup": "write and check the configuration for one (account, agent)",
    "run": "run the connector until stopped",
    "status": "what the connector is doing (read-only, takes no lock)",
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


MODULES = {"import": "import_file"}
"""A command whose module cannot be named as the command is (rule 2)."""


def module_name(command: str) -> str:
    """Rule 2."""
    return f"shell.cli.{MODULES.get(command, command.replace('-', '_'))}"


def chosen(argv: list[str] | tuple[str, ...]) -> str | None:
    """The subcommand argparse will take from ``argv``: its first argument that is not an option
    (``shell.cli.main`` rule 2). One starting with ``-`` names no subcommand, whatever argparse
    makes of it."""
    return next((argument for argument in argv if not argument.startswith("-")), None)
