"""What the ledger hands the dispatch tools (a task's live rows and their records), the
instruction a worker pulls from them, and the receipt its reports leave.

``Instruction`` is an allowlist: every field a worker is handed is named here. Its content is
admission's snapshot with the agent's own mentions stripped (``core.mentions``). Each text field
someone wrote names its author and whether the connector trusts them (``content_author``, the
recording's ``title_author``); a snapshot that does not say is not trusted.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from core import json_input
from core.intent_kinds import IntentKind
from core.mentions import strip_mentions_of
from core.states import DeliveryState, EventOutcome, GuardState, RecordState

if TYPE_CHECKING:
    from core.worker_words import WordsAnswer


@dataclass(frozen=True, slots=True)
class InstructionRecord:
    """A record as the instruction needs it; ``snapshot`` is the JSON text admission wrote."""

    event_id: int
    state: RecordState
    event_type: str
    trigger: str
    bucket_id: int
    recording_id: int
    recording_type: str
    recording_url: str
    reply_kind: str
    reply_recording_id: int
    requester_id: int
    acknowledge: bool
    snapshot: str | None
    reply_bucket_id: int = 0


@dataclass(frozen=True, slots=True)
class Spoken:
    """A worker message already written for a task row, as the ledger reads its intent."""

    key: str
    kind: IntentKind
    body: str
    state: str
    receipt_id: int | None
    message_kind: str


@dataclass(frozen=True, slots=True)
class DispatchRow:
    """One live row of the token's task (``task_events``) with its record."""

    record: InstructionRecord
    delivery: DeliveryState
    guard: GuardState
    pulled: bool
    ack_id: int | None = None
    outcome: EventOutcome = EventOutcome.none
    reply_id: int | None = None
    links: tuple[str, ...] = ()
    words: tuple[Spoken, ...] = ()  # the worker's messages the connector posts for this row

    @property
    def event_id(self) -> int:
        return self.record.event_id

    def spoken(self, kind: IntentKind) -> Spoken | None:
        """The first of this row's worker messages of ``kind`` (one at most, bar notes)."""
        return next((found for found in self.words if found.kind is kind), None)


@dataclass(frozen=True, slots=True)
class RecordingSnapshot:
    """The recording as admission read it: the only content the ledger keeps."""

    type: str
    title: str
    app_url: str
    content: str
    updated_at: str | None
    author_id: int | None = None
    author_trusted: bool = False
    title_author_id: int | None = None
    title_author_trusted: bool = False


def read_snapshot(text: str | None) -> RecordingSnapshot | None:
    value = json_input.json_or_none(text) if text else None
    if not isinstance(value, dict):
        return None

    def field(name: str) -> str:
        item = value.get(name)
        return item if isinstance(item, str) else ""

    def person(name: str) -> int | None:
        return int(found) if (found := field(name)).isascii() and found.isdigit() else None

    return RecordingSnapshot(
        type=field("type"), title=field("title"), app_url=field("app_url"), content=field("content"),
        updated_at=field("updated_at") or None, author_id=person("author_id"),
        author_trusted=field("author_trusted") == "true", title_author_id=person("title_author_id"),
        title_author_trusted=field("title_author_trusted") == "true",
    )


def servable(row: DispatchRow) -> bool:
    """Whether the row's instruction may be handed out: its record dispatched (or completed once
    this worker pulled it), never first handed out once past exposure, its snapshot readable."""
    state = row.record.state
    if not (state == RecordState.dispatched or (state == RecordState.completed and row.pulled)):
        return False
    if not row.pulled and row.delivery not in (DeliveryState.admitted, DeliveryState.exposed):
        return False
    return read_snapshot(row.record.snapshot) is not None


@dataclass(frozen=True, slots=True)
class Instruction:
    """What ``get_dispatch`` hands a worker."""

    event_id: int
    event_type: str
    trigger: str
    bucket_id: int
    recording_id: int
    recording_type: str
    recording_title: str
    recording_url: str
    reply_kind: str
    reply_recording_id: int
    requester_id: int
    acknowledge: bool
    guard_acknowledged: bool
    delivery: DeliveryState
    content: str
    content_updated_at: str | None
    content_author_id: int | None = None
    content_author_trusted: bool = False
    title_author_id: int | None = None
    title_author_trusted: bool = False

    def to_json(self) -> dict[str, Any]:
        return {
            "event_id": self.event_id, "event_type": self.event_type, "trigger": self.trigger,
            "recording": {"bucket_id": self.bucket_id, "recording_id": self.recording_id,
                          "type": self.recording_type, "title": self.recording_title,
                          "title_author": {"id": self.title_author_id, "trusted": self.title_author_trusted},
                          "url": self.recording_url},
            "reply_to": {"kind": self.reply_kind, "recording_id": self.reply_recording_id},
            "requester_id": self.requester_id, "acknowledge": self.acknowledge,
            "guard_acknowledged": self.guard_acknowledged, "delivery": str(self.delivery),
            "content": self.content, "content_updated_at": self.content_updated_at,
            "content_author": {"id": self.content_author_id, "trusted": self.content_author_trusted},
        }


def build_instruction(row: DispatchRow, agent_id: int | None) -> Instruction | None:
    """The instruction for ``row`` as its writes left it; None if its snapshot is unreadable.
    ``agent_id`` is the agent's Person, whose own mentions are stripped (None: none are)."""
    snapshot = read_snapshot(row.record.snapshot)
    if snapshot is None:
        return None
    record = row.record
    return Instruction(
        event_id=record.event_id, event_type=record.event_type, trigger=record.trigger,
        bucket_id=record.bucket_id, recording_id=record.recording_id,
        recording_type=record.recording_type or snapshot.type, recording_title=snapshot.title,
        recording_url=record.recording_url or snapshot.app_url, reply_kind=record.reply_kind,
        reply_recording_id=record.reply_recording_id, requester_id=record.requester_id,
        acknowledge=record.acknowledge, guard_acknowledged=row.guard == GuardState.fired,
        delivery=row.delivery,
        content=snapshot.content if agent_id is None else strip_mentions_of(snapshot.content, agent_id),
        content_updated_at=snapshot.updated_at, content_author_id=snapshot.author_id,
        content_author_trusted=snapshot.author_trusted, title_author_id=snapshot.title_author_id,
        title_author_trusted=snapshot.title_author_trusted,
    )


@dataclass(frozen=True, slots=True)
class DeliveryReceipt:
    """The delivery an acknowledgement, a completion or a note left, absent fields left out;
    ``message`` says what became of the words the call gave the connector to post."""

    event_id: int
    delivery: DeliveryState
    ack_id: int | None = None
    outcome: EventOutcome = EventOutcome.none
    reply_id: int | None = None
    links: tuple[str, ...] = ()
    words: WordsAnswer | None = None

    def to_json(self) -> dict[str, Any]:
        body: dict[str, Any] = {"event_id": self.event_id, "delivery": str(self.delivery)}
        if self.ack_id is not None:
            body["ack_id"] = self.ack_id
        if self.outcome != EventOutcome.none:
            body["outcome"] = str(self.outcome)
        if self.reply_id is not None:
            body["reply_id"] = self.reply_id
        if self.links:
            body["links"] = list(self.links)
        if self.words is not None:
            body["message"] = self.words.to_json()
        return body


def receipt_of(row: DispatchRow) -> DeliveryReceipt:
    return DeliveryReceipt(row.event_id, row.delivery, row.ack_id, row.outcome, row.reply_id, row.links)
