"""The scene admission's tests play in: a stand-in, a ledger, admission over them."""

from __future__ import annotations

from dataclasses import dataclass

from core.admission import AdmissionSettings
from core.timestamps import format_timestamp
from shell.admission import Admission, Admitted
from shell.basecamp.client import BasecampClient
from shell.basecamp.reads import SummaryReads
from shell.basecamp.standin.server import StandIn
from shell.basecamp.standin.world import Project
from shell.clock import FakeClock
from shell.ledger.connection import Ledger


@dataclass
class Scene:
    """The stand-in, the ledger and admission over them; the demo world's first two projects
    are routed, the third (Archive) is not. The operator is Ada; Grace is anyone else."""

    standin: StandIn
    ledger: Ledger
    clock: FakeClock
    client: BasecampClient
    reads: SummaryReads
    settings: AdmissionSettings
    admission: Admission

    @property
    def routed(self) -> Project:
        return self.standin.world.projects[0]

    @property
    def unrouted(self) -> Project:
        return self.standin.world.projects[2]

    @property
    def operator_id(self) -> int:
        return self.settings.operator_id

    @property
    def other_id(self) -> int:
        return self.standin.world.people[1].id

    @property
    def agent_id(self) -> int:
        return self.settings.agent_id

    def seen(self, event_id: int, *, creator_id: int | None = None, performed_by_id: int | None = None) -> int:
        """Record the stand-in's feed event ``event_id`` as intake does (state seen)."""
        event = next(found for found in self.standin.feed.events() if found.id == event_id)
        stamp = format_timestamp(self.clock.now())
        with self.ledger.write() as connection:
            connection.execute(
                "INSERT INTO events (id, state, event_type, bucket_id, recording_id, creator_id, performed_by_id,"
                " created_at, seen_at, updated_at) VALUES (?, 'seen', ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    event.id,
                    event.event_type,
                    event.bucket_id,
                    event.recording_id,
                    event.creator_id if creator_id is None else creator_id,
                    event.performed_by_id if performed_by_id is None else performed_by_id,
                    stamp,
                    stamp,
                    stamp,
                ),
            )
        return event_id

    def comment(self, author_id: int, recording_id: int, content: str) -> int:
        """A comment (no mention) on ``recording_id``; its feed event's id, recorded seen."""
        message_id = self.standin.seed_message("comment", recording_id, author_id, content)
        event = next(found for found in self.standin.feed.events() if found.recording_id == message_id)
        return self.seen(event.id)

    def mention(self, author_id: int, recording_id: int, text: str = "please look") -> int:
        return self.seen(self.standin.mention(author_id, recording_id, text))

    def admit(self, event_id: int, seconds: float = 10.0) -> Admitted:
        return self.admission.admit(event_id, self.client.deadline_in(seconds))

    def record(self, event_id: int) -> dict[str, object]:
        with self.ledger.read() as connection:
            cursor = connection.execute("SELECT * FROM events WHERE id = ?", (event_id,))
            names = [column[0] for column in cursor.description]
            row = cursor.fetchone()
        return dict(zip(names, row, strict=True))

    def intents(self, event_id: int | None = None) -> list[dict[str, object]]:
        with self.ledger.read() as connection:
            cursor = connection.execute(
                "SELECT * FROM outbox WHERE ? IS NULL OR event_id = ? ORDER BY id", (event_id, event_id)
            )
            names = [column[0] for column in cursor.description]
            return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]
