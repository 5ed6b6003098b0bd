"""Core dumps off, for the processes that hold a secret: the one home of ``RLIMIT_CORE``.

Rules:
1. ``forbid`` sets ``RLIMIT_CORE`` to 0, soft and hard, so a crash of this process (or of a
   child it starts afterwards, which inherits the limit and cannot raise it) writes no core: a
   core of the connector holds the agent's token, one of the MCP server its task token, and
   it would be written in the worker's approved directory.
2. ``bin/connect run`` and the MCP server (``bin/connect mcp`` and its lean entry) call it first,
   before a secret is read. It never fails: where the limit cannot be set, nothing else is
   changed, and ``core_dumps_allowed`` says so (for a test, or ``doctor``).
"""

from __future__ import annotations

import contextlib
import resource


def forbid() -> None:
    """Rule 1."""
    with contextlib.suppress(OSError, ValueError):
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def core_dumps_allowed() -> bool:
    """Whether this process may still write a core."""
    soft, _ = resource.getrlimit(resource.RLIMIT_CORE)
    return soft != 0
