"""What the commands by which a person decides share: ``hold``, ``release``, ``redispatch``,
``discard`` and ``settle-launch``.

Rules:
1. Each takes the state options (``shell.cli.arguments``), ``--by`` and ``--json``.
2. Who decides is settled first (``shell.cli.who``), then the state directory located; the
   ledger is opened as it exists, so each command is safe beside a running connector, takes no
   lock and needs no token. Its decision is its ``shell.ledger`` module's one write transaction.
3. A decision taken (or already taken) prints its summary line, or with ``--json`` one object,
   exit 0. A refusal prints the same JSON with ``--json`` and always one ``error:`` line on
   stderr, exit 5 (``EXIT_REFUSED``).
4. A full disk or a read-only or unreadable state directory is one line saying the decision was
   not recorded, exit 3. A decision recorded whose answer cannot be written says it was recorded
   (``shell.cli.streams``)."""

from __future__ import annotations

import argparse
import json
import sqlite3
import sys
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from shell.cli import streams
from shell.cli.arguments import add_state_arguments
from shell.cli.streams import StdoutUnwritable
from shell.cli.who import deciding_person
from shell.clock import Clock, SystemClock
from shell.errors import EXIT_OK, EXIT_REFUSED
from shell.ledger.connection import (
    BUSY_TIMEOUT_SECONDS,
    Ledger,
    LedgerError,
    LedgerNoSpace,
    LedgerNotWritable,
    is_storage_failure,
    ledger_failure,
    open_existing_ledger,
)
from shell.state.config import StatePaths, locate_state


def add_arguments(parser: argparse.ArgumentParser, by_help: str) -> None:
    """The state options, ``--by`` (``by_help`` says what it records) and ``--json`` (rule 1)."""
    add_state_arguments(parser)
    parser.add_argument("--by", help=by_help)
    parser.add_argument("--json", action="store_true", help="print the result as JSON on stdout")


STORAGE_REFUSALS = (LedgerNoSpace, LedgerNotWritable)
"""What the disk says at open, in the ledger's words (``shell.ledger.connection.ledger_failure``)."""


@dataclass(frozen=True, slots=True)
class Decider:
    """Who decides, and the state the decision is taken on."""

    by: str
    paths: StatePaths
    clock: Clock = field(default_factory=SystemClock)

    def ledger(self) -> AbstractContextManager[Ledger]:
        """The ledger as it exists (rule 2), closed at the block's end (``deciding_on``)."""
        return deciding_on(self.paths.ledger, self.clock)


@contextmanager
def deciding_on(path: Path, clock: Clock, busy_timeout: float = BUSY_TIMEOUT_SECONDS) -> Iterator[Ledger]:
    """The ledger at ``path`` as it exists, for a person's decision (``bin/outbox-resolve``'s too).
    What the disk or SQLite says while it is opened or the decision written is one line that
    says nothing was recorded (rule 4): the decision's transaction rolled back whole."""
    try:
        with open_existing_ledger(path, clock=clock, busy_timeout=busy_timeout) as ledger:
            yield ledger
    except LedgerError as error:
        if not isinstance(error, STORAGE_REFUSALS):
            raise
        raise type(error)(f"{error}; the decision was not recorded") from error
    except (sqlite3.Error, OSError) as error:
        if not is_storage_failure(error):  # a refused move, a bug: its traceback is for a developer
            raise
        failure = ledger_failure(error, path, "record the decision")
        raise type(failure)(f"{failure}; the decision was not recorded") from error


def person_of(args: argparse.Namespace) -> Decider:
    """Who decides, then where (rule 2): a usage error before any file is read."""
    by = deciding_person(args.by)
    return Decider(by, locate_state(args.state_dir, args.account, args.agent))


def answer(args: argparse.Namespace, result: dict[str, Any]) -> int:
    """A decision taken: its summary, or its facts with ``--json``; exit 0 (rule 3). An answer
    stdout cannot take says the decision was recorded (rule 4)."""
    try:
        print(json.dumps(result, indent=2) if args.json else result["summary"], flush=True)
    except StdoutUnwritable as unwritable:
        raise StdoutUnwritable(f"{unwritable}; the decision was recorded: {result['summary']}") from None
    return EXIT_OK


def refused(args: argparse.Namespace, result: dict[str, Any]) -> int:
    """A refusal: its facts with ``--json``, one ``error:`` line on stderr; exit 5 (rule 3)."""
    if args.json:
        try:
            print(json.dumps(result, indent=2), flush=True)
        except StdoutUnwritable:
            streams.stop_writing()  # the refusal is said on stderr too; 5 stands
    print(f"error: {result['summary']}", file=sys.stderr)
    return EXIT_REFUSED
