"""A ledger with the transitions the outbox answers for, written the way their owners will.

Admission, the dispatcher and a worker's dispatch tools arrive in later issues; until then
these helpers make the same writes in one transaction each, writing the intents core calls for, so the
outbox is tested against rows shaped exactly as it will meet them.
"""

from __future__ import annotations

import hashlib
import itertools
import secrets
from dataclasses import dataclass, field
from datetime import timedelta

from core.destinations import Destination, MessageKind
from core.message_kinds import GUARD_DELAY, intents_for_verdict
from core.timestamps import format_timestamp
from shell.ledger import outbox, snapshots, tasks
from shell.ledger.connection import Ledger
from shell.ledger.tasks import Launch
from tests.support.ids import ATTEMPTS_FROM

PROJECT = 2_085_958_504
SNAPSHOT = '{"type": "Kanban::Card", "title": "A card", "content": "<div>please look</div>"}'
CAMPFIRE = 1_069_478_985


@dataclass
class LedgerWorld:
    ledger: Ledger
    guard_delay: timedelta = GUARD_DELAY
    _attempts: itertools.count[int] = field(default_factory=lambda: itertools.count(ATTEMPTS_FROM))

    def now(self) -> str:
        return format_timestamp(self.ledger.clock.now())

    def seen(self, event_id: int, recording_id: int | None = None, reply_kind: str = "comment") -> None:
        """A feed event recorded by intake: a mention on a card, replies as comments there."""
        recording = recording_id or 1_000_000 + event_id
        reply_recording = CAMPFIRE if reply_kind == "chat_line" else recording
        with self.ledger.write() as connection:
            connection.execute(
                "INSERT INTO events (id, state, event_type, bucket_id, recording_id, creator_id, trigger_name,"
                " acknowledge, conversation_key, reply_kind, reply_bucket_id, reply_recording_id, seen_at,"
                " updated_at) VALUES (?, 'seen', 'comment.created', ?, ?, 11, 'mentioned', 1, ?, ?, ?, ?, ?, ?)",
                (
                    event_id,
                    PROJECT,
                    recording,
                    f"recording:{recording}",
                    reply_kind,
                    PROJECT,
                    reply_recording,
                    self.now(),
                    self.now(),
                ),
            )

    def verdict(self, event_id: int, state: str, reason: str = "", acknowledge: bool = True) -> None:
        """Admission's verdict and the intents it calls for, in one transaction."""
        with self.ledger.write() as connection:
            snapshot = SNAPSHOT if state in ("admitted", "queued") else None  # only these carry one
            connection.execute(
                "UPDATE events SET state = ?, reason = ?, acknowledge = ?, revision = revision + 1,"
                " decided_at = ?, updated_at = ?, snapshot = ? WHERE id = ?",
                (state, reason, int(acknowledge), self.now(), self.now(), snapshot, event_id),
            )
            now = self.ledger.clock.now()
            record = snapshots.record(connection, event_id)
            assert record is not None
            outbox.write_intents(connection, intents_for_verdict(record, now, self.guard_delay), now)

    def request(self, event_id: int, **options: object) -> None:
        """A mention admitted: seen, then the verdict (its guard is due in 30 s)."""
        self.seen(event_id, **options)  # type: ignore[arg-type]
        self.verdict(event_id, "admitted")

    def task(self, *event_ids: int) -> int:
        """The dispatcher's task for these events, guards armed for requests."""
        token = hashlib.sha256(secrets.token_bytes(32)).hexdigest()
        with self.ledger.write() as connection:
            task_id = connection.execute(
                "INSERT INTO tasks (token_sha256, conversation_key, originating_event_id, created_at)"
                " SELECT ?, conversation_key, id, ? FROM events WHERE id = ?",
                (token, self.now(), event_ids[0]),
            ).lastrowid
            for event_id in event_ids:
                connection.execute(
                    "INSERT INTO task_events (task_id, event_id, conversation_key, guard)"
                    " SELECT ?, id, conversation_key, CASE acknowledge WHEN 1 THEN 'armed' ELSE '' END"
                    " FROM events WHERE id = ?",
                    (task_id, event_id),
                )
                connection.execute("UPDATE events SET state = 'dispatched' WHERE id = ?", (event_id,))
        assert task_id is not None
        return task_id

    def launch(self, event_id: int, work_dir: str = "/srv/work", running_pid: int | None = None) -> Launch:
        """The dispatcher's launch of ``event_id`` (ledger_tasks.launch); with ``running_pid``, its
        process recorded as running too."""
        now = self.ledger.clock.now()
        with self.ledger.write() as connection:
            launched = tasks.launch(
                connection,
                event_id,
                work_dir=work_dir,
                driver="test",
                deadline_at=now + timedelta(hours=1),
                now=now,
            )
            if running_pid is not None:
                tasks.mark_running(
                    connection,
                    launched.attempt_id,
                    pid=running_pid,
                    pgid=running_pid,
                    process_started="77",
                    now=now,
                )
        return launched

    def attempt(self, task_id: int) -> str:
        attempt_id = f"att_{next(self._attempts):024x}"
        with self.ledger.write() as connection:
            connection.execute(
                "INSERT INTO attempts (id, task_id, seq, state, launched_at) VALUES (?, ?, 1, 'running', ?)",
                (attempt_id, task_id, self.now()),
            )
            connection.execute(
                "UPDATE task_events SET delivery = 'exposed', exposed_at = ?, exposed_attempt_id = ?"
                " WHERE task_id = ? AND event_id = (SELECT originating_event_id FROM tasks WHERE id = ?)",
                (self.now(), attempt_id, task_id, task_id),
            )
        return attempt_id

    def get_dispatch(self, task_id: int, event_id: int) -> str:
        """A worker pulls its instruction: the guard is canceled in this transaction."""
        with self.ledger.write() as connection:
            connection.execute(
                "UPDATE task_events SET delivery = CASE delivery WHEN 'admitted' THEN 'exposed' ELSE delivery END,"
                " pulled_at = ?, guard = CASE guard WHEN 'armed' THEN 'canceled' ELSE guard END"
                " WHERE task_id = ? AND event_id = ?",
                (self.now(), task_id, event_id),
            )
            (guard,) = connection.execute(
                "SELECT guard FROM task_events WHERE task_id = ? AND event_id = ?", (task_id, event_id)
            ).fetchone()
        return str(guard)

    def ack(self, task_id: int, event_id: int, ack_id: int) -> None:
        """ack_dispatch: the worker's own acknowledgement, written with the move to delivered."""
        with self.ledger.write() as connection:
            connection.execute(
                "UPDATE task_events SET delivery = 'delivered', ack_id = ?, delivered_at = ?"
                " WHERE task_id = ? AND event_id = ? AND delivery = 'exposed'",
                (ack_id, self.now(), task_id, event_id),
            )

    def report(
        self,
        task_id: int,
        event_id: int,
        outcome: str,
        reply_id: int | None = None,
        ack_id: int | None = None,
    ) -> None:
        """complete_dispatch: the worker's reported outcome, on an instruction it pulled (and acknowledged)."""
        if ack_id is not None:
            self.ack(task_id, event_id, ack_id)
        with self.ledger.write() as connection:
            connection.execute(
                "UPDATE task_events SET delivery = 'completed', outcome = ?, reply_id = ?, completed_at = ?"
                " WHERE task_id = ? AND event_id = ?",
                (outcome, reply_id, self.now(), task_id, event_id),
            )
            connection.execute("UPDATE events SET state = 'completed' WHERE id = ?", (event_id,))

    def end_attempt(self, attempt_id: str, stop_reason: str) -> None:
        """Settlement: unreported exposed events end unknown; the completion intent is written."""
        with self.ledger.write() as connection:
            (task_id,) = connection.execute(
                "SELECT task_id FROM attempts WHERE id = ?", (attempt_id,)
            ).fetchone()
            connection.execute(
                "UPDATE attempts SET state = 'ended', stop_reason = ?, ended_at = ? WHERE id = ?",
                (stop_reason, self.now(), attempt_id),
            )
            connection.execute(
                "UPDATE task_events SET delivery = 'completed', outcome = 'unknown', completed_at = ?"
                " WHERE task_id = ? AND delivery IN ('exposed', 'delivered')",
                (self.now(), task_id),
            )
            connection.execute(
                "UPDATE events SET state = 'completed' WHERE id IN"
                " (SELECT event_id FROM task_events WHERE task_id = ? AND delivery = 'completed')",
                (task_id,),
            )
            connection.execute(
                "UPDATE tasks SET superseded_at = ?, ended_at = ? WHERE id = ?",
                (self.now(), self.now(), task_id),
            )
            now = self.ledger.clock.now()
            notice = tasks.completion(connection, attempt_id, now)
            if notice is not None:
                outbox.write_intents(connection, (notice,), now)

    def tick(self, attempt_id: str) -> None:
        with self.ledger.write() as connection:
            tasks.still_running(connection, attempt_id, self.ledger.clock.now())

    def hold(self) -> None:
        with self.ledger.write() as connection:
            connection.execute(
                "INSERT INTO hold_marker (id, held_by, held_at) VALUES (1, 'local:test', ?)", (self.now(),)
            )

    def release(self) -> None:
        with self.ledger.write() as connection:
            connection.execute("DELETE FROM hold_marker")

    def outbox(self) -> list[tuple[int, str, str, str]]:
        """(id, kind, state, note) of every intent, oldest first."""
        with self.ledger.read() as connection:
            return [
                tuple(row)
                for row in connection.execute("SELECT id, kind, state, note FROM outbox ORDER BY id")
            ]

    def state_of(self, intent_id: int) -> str:
        with self.ledger.read() as connection:
            return str(
                connection.execute("SELECT state FROM outbox WHERE id = ?", (intent_id,)).fetchone()[0]
            )


def boost_on(event_id: int) -> Destination:
    return Destination(MessageKind.boost, PROJECT, 1_000_000 + event_id)


def comment_on(event_id: int) -> Destination:
    return Destination(MessageKind.comment, PROJECT, 1_000_000 + event_id)
