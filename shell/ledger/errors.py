"""The ledger's errors: each a line a person can act on (exit code ``EXIT_CONFIG`` unless noted).

Rules:
1. Every refusal of a ledger is a ``LedgerError`` (a ``UserError``); its subclass says why.
2. ``LedgerMisuse`` is a programming error (a nested transaction, a write on a read-only
   ledger, a closed one), not a person's: it is no ``UserError``.
"""

from __future__ import annotations

from shell.errors import EXIT_CONFIG, EXIT_UNAVAILABLE, UserError


class LedgerError(UserError):
    """A ledger that cannot be opened or used as asked."""

    exit_code = EXIT_CONFIG


class LedgerPathRefused(LedgerError):
    """The path is not one a ledger may live at (empty, in memory, a URI, a symlink...)."""


class LedgerNotPrivate(LedgerError):
    """The file or its directory could be read or changed by someone else."""


class LedgerMissing(LedgerError):
    """No ledger at the path, and this way in never creates one."""


class LedgerTooNew(LedgerError):
    """A newer program wrote this ledger."""


class LedgerOutOfDate(LedgerError):
    """An older program wrote this ledger and the connector has not migrated it yet."""


class LedgerUnreadable(LedgerError):
    """The file is not an SQLite database SQLite can open."""


class LedgerBusy(LedgerError):
    """Another process held the write lock past the busy timeout."""

    exit_code = EXIT_UNAVAILABLE


class LedgerMisuse(RuntimeError):
    """A programming error: a nested transaction, a write on a read-only ledger, a closed one."""
