"""The demo's read-only look at the connector's ledger, for narration.

Rules:
1. The ledger is opened with ``open_ledger_read_only`` (``mode=ro``, ``query_only``) and only
   ever read, in one snapshot per look; the connector that owns it runs on, killed and
   restarted, beside it.
2. The demo learns the event a request made by its recording (``events.recording_id``): the
   feed event's id is the ledger's.
3. ``live_workers`` names every attempt not ended that has a recorded process, so the demo
   can end a worker a dead connector left, by the recorded identity only.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

from core.text import message_lines
from shell.demo.narration import EventView, IntentView
from shell.ledger import status as narration
from shell.ledger.connection import Ledger, open_ledger_read_only


@dataclass(frozen=True, slots=True)
class LiveWorker:
    attempt_id: str
    pid: int
    pgid: int
    process_started: str


class LedgerView:
    def __init__(self, path: Path) -> None:
        self._ledger: Ledger = open_ledger_read_only(path)

    def __enter__(self) -> LedgerView:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.close()

    def close(self) -> None:
        self._ledger.close()

    def event_of(self, recording_id: int) -> int | None:
        """The event a request at ``recording_id`` made, once the connector has read it (rule 2)."""
        with self._ledger.read() as connection:
            return narration.event_of_recording(connection, recording_id)

    def event(self, event_id: int) -> EventView:
        with self._ledger.read() as connection:
            return _event(connection, event_id)

    def live_workers(self) -> list[LiveWorker]:
        """Rule 3."""
        with self._ledger.read() as connection:
            rows = narration.live_processes(connection)
        return [LiveWorker(*row) for row in rows]


def _event(connection: sqlite3.Connection, event_id: int) -> EventView:
    rows = narration.event_rows(connection, event_id)
    if rows is None:
        return EventView()
    record, attempt, intents = rows.record, rows.attempt, rows.intents
    task_id, pulled, ack_id, outcome, reply_id = (
        rows.joined if rows.joined is not None else (None, 0, None, "", None)
    )
    return EventView(
        state=str(record[0]),
        reason=str(record[1]),
        trigger=str(record[2]),
        task_id=None if task_id is None else int(task_id),
        pulled=bool(pulled),
        ack_id=None if ack_id is None else int(ack_id),
        outcome=str(outcome or ""),
        reply_id=None if reply_id is None else int(reply_id),
        attempt_state="" if attempt is None else str(attempt[0]),
        stop_reason="" if attempt is None else str(attempt[1]),
        intents=tuple(
            IntentView(
                id=int(row[0]),
                kind=str(row[1]),
                state=str(row[2]),
                receipt_id=None if row[3] is None else int(row[3]),
                note=str(row[4]),
                words="\n".join(message_lines(str(row[5]))),
            )
            for row in intents
        ),
    )
