"""The task token's two fixed facts: the variable that carries it, and what the ledger keeps of it.

Rules:
1. The token reaches the MCP server in one environment variable, ``TASK_TOKEN_ENV``: the
   session config sets it, ``bin/connect mcp`` reads (and removes) it, and no worker command's
   configuration may name it.
2. The ledger keeps no token, only ``token_sha256``: 64 lowercase hex digits of SHA-256 over
   the token's UTF-8 bytes. A task is created with it and a worker's call is matched by it.
3. A probe token (``PROBE_PREFIX``) is ``bin/connect doctor --deep``'s: it names no task, and
   the server it starts serves the MCP handshake and nothing else.
4. A token is at most ``MAX_TOKEN_BYTES`` bytes; whatever carries one carries no more than one
   byte past that, so the server can tell "more than a token" without reading it all.
"""

from __future__ import annotations

import hashlib

TASK_TOKEN_ENV = "BASECAMP_CONNECT_TASK_TOKEN"  # noqa: S105 -- a variable's name, not its value
MAX_TOKEN_BYTES = 4096  # a task token is 43 bytes; a probe token about 45


def token_sha256(token: str) -> str:
    """What a task keeps of its token (rule 2)."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


PROBE_PREFIX = "doctor-probe:"
"""``bin/connect doctor --deep`` starts the worker with a probe token: this prefix, then random
hex. A task token (URL-safe base64) never holds a colon, so no task's token is ever a probe's.
A probe token grants nothing: ``bin/connect mcp`` answers the handshake and refuses every tool."""


def is_probe(token: str) -> bool:
    return token.startswith(PROBE_PREFIX)


def probe_marker_name(token: str) -> str:
    """The file, beside the ledger, the probe's server writes once its client is initialized:
    named from the token's hash, so only the doctor that made the token knows which it is."""
    return f"doctor-probe-{token_sha256(token)[:32]}.initialized"
