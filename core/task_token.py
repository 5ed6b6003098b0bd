"""The task token's fixed facts: the variable that carries it, and what the ledger keeps of it.

The token reaches the MCP server in one environment variable, ``TASK_TOKEN_ENV``: the session
config sets it, ``bin/connect mcp`` reads (and removes) it, and no worker command's configuration
may name it. The ledger keeps no token, only its SHA-256 in lowercase hex: a task is created with
it and a worker's call is matched by it. A token is at most ``MAX_TOKEN_BYTES``; whatever carries
one carries at most one byte more, so the server can tell "more than a token" without reading it
all. A probe token (``PROBE_PREFIX``, then random hex) is ``bin/connect doctor --deep``'s: it
names no task (a task token, URL-safe base64, never holds a colon), and the server it starts
answers the MCP handshake and refuses every tool.
"""

from __future__ import annotations

import hashlib

TASK_TOKEN_ENV = "BASECAMP_CONNECT_TASK_TOKEN"  # noqa: S105 -- a variable's name, not its value
MAX_TOKEN_BYTES = 4096  # a task token is 43 bytes; a probe token about 45
PROBE_PREFIX = "doctor-probe:"


def token_sha256(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def is_probe(token: str) -> bool:
    return token.startswith(PROBE_PREFIX)


def probe_marker_name(token: str) -> str:
    """The file, beside the ledger, the probe's server writes once its client is initialized:
    named from the token's hash, so only the doctor that made the token knows which it is."""
    return f"doctor-probe-{token_sha256(token)[:32]}.initialized"
