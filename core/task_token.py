"""The task token's two fixed facts: the variable that carries it, and what the ledger keeps of it.

Rules:
1. The token reaches the MCP server in one environment variable, ``TASK_TOKEN_ENV``: the
   session config sets it, ``bin/connect mcp`` reads (and removes) it, and no worker command's
   configuration may name it.
2. The ledger keeps no token, only ``token_sha256``: 64 lowercase hex digits of SHA-256 over
   the token's UTF-8 bytes. A task is created with it and a worker's call is matched by it.
"""

from __future__ import annotations

import hashlib

TASK_TOKEN_ENV = "BASECAMP_CONNECT_TASK_TOKEN"  # noqa: S105 -- a variable's name, not its value


def token_sha256(token: str) -> str:
    """What a task keeps of its token (rule 2)."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()
