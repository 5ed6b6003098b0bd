"""The MCP server's own entry point, as a worker's MCP configuration launches it:
``PYTHON -P -m shell.worker.mcp_entry --ledger LEDGER [--agent-id N]``.

Rules:
1. It is ``bin/connect mcp``: the same options, the same exits and the same stderr lines
   (``shell.cli.main.main`` with the one command), so nothing about the server differs.
2. It is cheaper to start: the connector already runs in a checked environment, so the worker's
   configuration names this interpreter directly (no shell script, no dependency check) and
   only the ``mcp`` command's modules are imported, none of the other commands'.
"""

from __future__ import annotations

import sys

from shell.cli.main import main

COMMAND = "mcp"


def run(argv: list[str]) -> int:
    return main([COMMAND, *argv], commands=(COMMAND,))


if __name__ == "__main__":
    sys.exit(run(sys.argv[1:]))
