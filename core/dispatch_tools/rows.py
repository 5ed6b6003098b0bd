"""What the ledger hands the dispatch tools: a task's live rows, their records, and whether each
may be served (``servable``, rule 2 of ``core.dispatch_tools``).
"""

from __future__ import annotations

from dataclasses import dataclass

from core import json_input
from core.intent_kinds import IntentKind
from core.states import DeliveryState, EventOutcome, GuardState, RecordState


@dataclass(frozen=True, slots=True)
class InstructionRecord:
    """A record (``events``) as the instruction needs it. ``snapshot`` is the JSON text admission
    wrote (type, title, app_url, content, updated_at), None when the record carries none."""

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
    """A worker message already written for a task row, as the ledger reads its intent
    (``core.worker_words``)."""

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
    author_trusted: bool = False  # a snapshot that does not say is not trusted (rule 2 of core.admission)


def read_snapshot(text: str | None) -> RecordingSnapshot | None:
    """The snapshot in ``text``, or None when there is none or it is not a JSON object."""
    if text is None or text == "":
        return None
    value = json_input.json_or_none(text)
    if not isinstance(value, dict):
        return None

    def field(name: str) -> str:
        item = value.get(name)
        return item if isinstance(item, str) else ""

    return RecordingSnapshot(
        type=field("type"),
        title=field("title"),
        app_url=field("app_url"),
        content=field("content"),
        updated_at=field("updated_at") or None,
        author_id=int(author) if (author := field("author_id")).isascii() and author.isdigit() else None,
        author_trusted=field("author_trusted") == "true",
    )


def servable(row: DispatchRow) -> bool:
    """Whether this row's instruction may be handed to the worker (rule 2 of ``core.dispatch_tools``)."""
    state = row.record.state
    if not (state == RecordState.dispatched or (state == RecordState.completed and row.pulled)):
        return False
    if not row.pulled and row.delivery not in (DeliveryState.admitted, DeliveryState.exposed):
        return False
    return read_snapshot(row.record.snapshot) is not None
