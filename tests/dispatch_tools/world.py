"""A ledger with tasks a worker can be started for, written the way their owners write them.

Admission writes the record and its snapshot (and, in the same transaction, the guard
intent core calls for); the dispatcher joins records to a task (rows first, then the record to dispatched)
with the guard armed for a request, and exposes the originating event at launch; the outbox's
claim marks a guard fired. Each is one transaction, legal under the ledger's triggers, so the
worker's tools are tested against rows shaped exactly as they will meet them.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import secrets
import sqlite3
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from core.message_kinds import GUARD_DELAY, guard_key, intents_for_verdict
from core.timestamps import format_timestamp
from shell.basecamp.standin.world import person_sgid
from shell.ledger import deliveries, fingerprints, snapshots
from shell.ledger import outbox as ledger_outbox
from shell.ledger.connection import Ledger
from shell.ledger.worker_calls import DispatchLedger
from tests.support.ids import ATTEMPTS_FROM

PROJECT = 2_085_958_504
AGENT = 1_049_715_999
REQUESTER = 1_049_715_916
SOMEONE_ELSE = 1_049_715_923


def mention(person_id: int, name: str = "Someone") -> str:
    """A mention as Basecamp returns it (the read form)."""
    return (
        f'<bc-attachment sgid="{person_sgid(person_id)}" content-type="application/vnd.basecamp.mention">'
        f"<figure><figcaption>{name}</figcaption></figure></bc-attachment>"
    )


def snapshot(content: str, title: str = "Fix the login page", updated_at: str = "2026-11-29T11:59:00.000Z") -> str:
    return json.dumps(
        {
            "type": "Kanban::Card",
            "title": title,
            "app_url": "https://3.basecamp.com/195539477/buckets/2085958504/card_tables/cards/9",
            "content": content,
            "updated_at": updated_at,
        }
    )


DEFAULT_CONTENT = f"<div>{mention(AGENT, 'Bot')} please fix the login page</div>"


@dataclass(frozen=True, slots=True)
class Task:
    id: int
    token: str


@dataclass
class DispatchWorld:
    ledger: Ledger
    guard_delay: timedelta = GUARD_DELAY
    _attempts: itertools.count[int] = field(default_factory=lambda: itertools.count(ATTEMPTS_FROM))

    def now(self) -> str:
        return format_timestamp(self.ledger.clock.now())

    # -- admission

    def request(
        self,
        event_id: int,
        *,
        acknowledge: bool = True,
        content: str = DEFAULT_CONTENT,
        conversation: str | None = None,
        record_snapshot: str | None = "default",
    ) -> None:
        """A mention on a card, admitted with its snapshot; its guard intent written if it asks."""
        recording = 1_000_000 + event_id
        with self.ledger.write() as connection:
            connection.execute(
                "INSERT INTO events (id, state, event_type, bucket_id, recording_id, creator_id, trigger_name,"
                " acknowledge, conversation_key, reply_kind, reply_bucket_id, reply_recording_id, seen_at,"
                " updated_at, requester_id, recording_url, recording_type)"
                " VALUES (?, 'seen', 'comment.created', ?, ?, ?, 'mentioned', ?, ?, 'comment', ?, ?, ?, ?, ?, ?,"
                " 'Kanban::Card')",
                (
                    event_id, PROJECT, recording, REQUESTER, int(acknowledge),
                    conversation or f"recording:{recording}", PROJECT, recording, self.now(), self.now(),
                    REQUESTER, f"https://3.basecamp.com/195539477/buckets/{PROJECT}/card_tables/cards/{recording}",
                ),
            )
        with self.ledger.write() as connection:
            connection.execute(
                "UPDATE events SET state = 'admitted', revision = revision + 1, decided_at = ?, updated_at = ?,"
                " snapshot = ? WHERE id = ?",
                (
                    self.now(), self.now(),
                    snapshot(content) if record_snapshot == "default" else record_snapshot,
                    event_id,
                ),
            )
            now = self.ledger.clock.now()
            record = snapshots.record(connection, event_id)
            assert record is not None
            ledger_outbox.write_intents(connection, intents_for_verdict(record, now, self.guard_delay), now)

    # -- the dispatcher

    def task(self, *event_ids: int) -> Task:
        """A live task carrying these records, guards armed for requests; the token returned once."""
        token = secrets.token_urlsafe(32)
        with self.ledger.write() as connection:
            task_id = connection.execute(
                "INSERT INTO tasks (token_sha256, conversation_key, originating_event_id, created_at)"
                " SELECT ?, conversation_key, id, ? FROM events WHERE id = ?",
                (hashlib.sha256(token.encode()).hexdigest(), self.now(), event_ids[0]),
            ).lastrowid
            assert task_id is not None
            fingerprints.record_task_token(connection, task_id, token, self.ledger.clock.now())  # as launch does
            for event_id in event_ids:
                connection.execute(
                    "INSERT INTO task_events (task_id, event_id, conversation_key, guard)"
                    " SELECT ?, id, conversation_key, CASE acknowledge WHEN 1 THEN 'armed' ELSE '' END"
                    " FROM events WHERE id = ?",
                    (task_id, event_id),
                )
                moved = connection.execute(
                    "UPDATE events SET state = 'dispatched', revision = revision + 1 WHERE id = ?"
                    " AND state IN ('admitted', 'queued', 'dispatched')",
                    (event_id,),
                ).rowcount
                assert moved == 1
        return Task(task_id, token)

    def launch(self, task: Task) -> str:
        """The first attempt, and the originating event exposed at launch (not a worker's pull)."""
        attempt_id = f"att_{next(self._attempts):024x}"
        with self.ledger.write() as connection:
            connection.execute(
                "INSERT INTO attempts (id, task_id, seq, state, launched_at) VALUES (?, ?, 1, 'running', ?)",
                (attempt_id, task.id, self.now()),
            )
            connection.execute(
                "UPDATE task_events SET delivery = 'exposed', exposed_at = ?, exposed_attempt_id = ?"
                " WHERE task_id = ? AND event_id = (SELECT originating_event_id FROM tasks WHERE id = ?)",
                (self.now(), attempt_id, task.id, task.id),
            )
        return attempt_id

    def supersede(self, task: Task) -> None:
        """A redispatch or a settlement: the token is refused from now on, the rows retired."""
        with self.ledger.write() as connection:
            connection.execute("UPDATE tasks SET superseded_at = ? WHERE id = ?", (self.now(), task.id))

    def settle_record(self, event_id: int) -> None:
        """The record moved to completed by something other than this task's worker."""
        with self.ledger.write() as connection:
            connection.execute("UPDATE events SET state = 'completed' WHERE id = ?", (event_id,))

    # -- the outbox

    def claim_guard(self, event_id: int) -> None:
        """The sender claims the guard: pending -> sending, armed rows fired, in one transaction."""
        with self.ledger.write() as connection:
            (intent_id,) = connection.execute(
                "SELECT id FROM outbox WHERE intent_key = ?", (guard_key(event_id),)
            ).fetchone()
            ledger_outbox.claim(connection, intent_id, self.ledger.clock.now())
            deliveries.fire_guard(connection, event_id)

    def hold(self) -> None:
        with self.ledger.write() as connection:
            connection.execute(
                "INSERT INTO hold_marker (id, held_by, held_at) VALUES (1, 'local:test', ?)", (self.now(),)
            )

    # -- reading

    def tools(self, task: Task, agent_id: int | None = AGENT) -> DispatchLedger:
        return DispatchLedger(self.ledger, task.token, agent_id)

    def row(self, task: Task, event_id: int) -> dict[str, Any]:
        with self.ledger.read() as connection:
            connection.row_factory = sqlite3.Row
            try:
                found = connection.execute(
                    "SELECT * FROM task_events WHERE task_id = ? AND event_id = ?", (task.id, event_id)
                ).fetchone()
            finally:
                connection.row_factory = None
        assert found is not None
        return dict(found)

    def record_state(self, event_id: int) -> str:
        with self.ledger.read() as connection:
            return str(connection.execute("SELECT state FROM events WHERE id = ?", (event_id,)).fetchone()[0])

    def guard_intent(self, event_id: int) -> tuple[str, str]:
        """(state, note) of the event's guard intent."""
        with self.ledger.read() as connection:
            state, note = connection.execute(
                "SELECT state, note FROM outbox WHERE intent_key = ?", (guard_key(event_id),)
            ).fetchone()
        return str(state), str(note)
