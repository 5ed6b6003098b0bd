"""The running connector's last failed ledger write, as ``bin/connect status`` shows it.

Rules:
1. A plain value: when (the ledger's time text, ``core.timestamps``), why in SQLite's or the
   system's words, and which process. ``shell.ledger.write_failures`` records and reads it;
   ``core.presentation.status_values.Status`` carries it.
2. Its own module: the ledger's connection (which every process opens, the MCP server's among
   them) records failures without importing status's presentation values.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class WriteFailure:
    """The running connector's last failed ledger write (``shell.ledger.write_failures``): when,
    why in SQLite's or the system's words, and which process. Cleared by its next good write."""

    at: str  # the ledger's time text (core.timestamps)
    why: str
    pid: int
