"""What every ``bin/outbox-resolve`` verb shares: its name, the rule a person reads, the ledger it
was pointed at (``Context``), and how an intent's times, age and destination are shown.

Rules:
1. The ledger is named once: ``--ledger PATH``, ``--state-dir DIR`` (its ledger.sqlite3) or
   ``$CONNECTOR_LEDGER``; both flags, or none of the three, is a usage error.
2. Reading opens the ledger read-only, deciding opens it as it exists: neither creates,
   migrates or tightens it (rule 1 of ``shell.cli.resolve``).
3. A command a person is offered names the ledger by its absolute path, quoted for a shell.
4. The connector's configuration is the ``config.json`` beside the ledger (the state directory
   ``setup`` wrote holds both): ``sent``'s check of a receipt reads Basecamp through it.
"""

from __future__ import annotations

import argparse
import os
import shlex
from contextlib import AbstractContextManager
from datetime import datetime
from pathlib import Path
from typing import Any

from core.file_kinds import CONFIG_NAME
from core.timestamps import format_timestamp
from shell.cli.person import deciding_on
from shell.clock import Clock
from shell.errors import EXIT_USAGE, UserError
from shell.ledger import outbox as rows
from shell.ledger.connection import Ledger, open_ledger_read_only
from shell.state.config import StatePaths

PROG = "bin/outbox-resolve"
LEDGER_ENVIRONMENT = "CONNECTOR_LEDGER"

THE_RULE = (
    "Mark sent only after you have seen the message in Basecamp; resend only after you have "
    "seen it is absent -- a resend of a message that exists doubles it."
)


class Context:
    """What a command needs besides its arguments: the ledger's path, the clock, the timeout."""

    def __init__(self, args: argparse.Namespace, clock: Clock, busy_timeout: float) -> None:
        if args.ledger is not None and args.state_dir is not None:
            raise UserError("name the ledger once: --ledger PATH or --state-dir DIR, not both", EXIT_USAGE)
        if args.state_dir is not None:
            given = str(StatePaths.at(Path(os.path.expanduser(args.state_dir))).ledger)
        else:
            given = args.ledger if args.ledger is not None else os.environ.get(LEDGER_ENVIRONMENT, "")
        if not given:
            raise UserError(
                f"name the ledger with --ledger PATH, --state-dir DIR or ${LEDGER_ENVIRONMENT}", EXIT_USAGE
            )
        self.ledger_path = os.path.abspath(given)
        self.config_path = Path(self.ledger_path).parent / CONFIG_NAME
        self.clock = clock
        self.busy_timeout = busy_timeout
        self.json: bool = args.json

    def read_only(self) -> Ledger:
        return open_ledger_read_only(self.ledger_path, clock=self.clock, busy_timeout=self.busy_timeout)

    def writable(self) -> AbstractContextManager[Ledger]:
        """For a decision: a full disk or a read-only directory says it was not recorded."""
        return deciding_on(Path(self.ledger_path), self.clock, self.busy_timeout)

    def command(self, *words: str) -> str:
        return shlex.join([PROG, "--ledger", self.ledger_path, *words])


def age_seconds(row: rows.IntentRow, now: datetime) -> int:
    since = row.finished_at or row.sending_at or row.created_at
    return max(0, int((now - since).total_seconds()))


def human_age(seconds: int) -> str:
    """An age as a person reads it: "40 s", "3 min", "2 h", "4 d"."""
    if seconds < 60:
        return f"{seconds} s"
    if seconds < 3600:
        return f"{seconds // 60} min"
    if seconds < 2 * 86400:
        return f"{seconds // 3600} h"
    return f"{seconds // 86400} d"


def time_text(moment: datetime | None) -> str | None:
    return None if moment is None else format_timestamp(moment)


def destination(row: rows.IntentRow) -> dict[str, Any]:
    return {
        "message_kind": str(row.destination.kind),
        "bucket_id": row.destination.bucket_id,
        "recording_id": row.destination.recording_id,
    }
