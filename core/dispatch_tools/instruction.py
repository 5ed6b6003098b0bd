"""The instruction a worker pulls and the receipt its reports leave.

Rule 1 of ``core.dispatch_tools``: ``Instruction`` is an allowlist, every field a worker is
handed named here; the content is admission's snapshot with the agent's own mention
stripped (``core.mentions``; rule 7 of ``core.dispatch_tools``), and ``content_author`` says
whose words it is and whether the connector trusts them (``core.admission`` rule 2): ``{"id", "trusted"}``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from core.dispatch_tools.rows import DispatchRow, read_snapshot
from core.mentions import strip_mentions_of
from core.states import DeliveryState, EventOutcome, GuardState
from core.worker_words import WordsAnswer


@dataclass(frozen=True, slots=True)
class Instruction:
    """What ``get_dispatch`` hands a worker: every field it may see is named here
    (rule 1 of core.dispatch_tools)."""

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

    def to_json(self) -> dict[str, Any]:
        return {
            "event_id": self.event_id,
            "event_type": self.event_type,
            "trigger": self.trigger,
            "recording": {
                "bucket_id": self.bucket_id,
                "recording_id": self.recording_id,
                "type": self.recording_type,
                "title": self.recording_title,
                "url": self.recording_url,
            },
            "reply_to": {"kind": self.reply_kind, "recording_id": self.reply_recording_id},
            "requester_id": self.requester_id,
            "acknowledge": self.acknowledge,
            "guard_acknowledged": self.guard_acknowledged,
            "delivery": str(self.delivery),
            "content": self.content,
            "content_updated_at": self.content_updated_at,
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
        event_id=record.event_id,
        event_type=record.event_type,
        trigger=record.trigger,
        bucket_id=record.bucket_id,
        recording_id=record.recording_id,
        recording_type=record.recording_type or snapshot.type,
        recording_title=snapshot.title,
        recording_url=record.recording_url or snapshot.app_url,
        reply_kind=record.reply_kind,
        reply_recording_id=record.reply_recording_id,
        requester_id=record.requester_id,
        acknowledge=record.acknowledge,
        guard_acknowledged=row.guard == GuardState.fired,
        delivery=row.delivery,
        content=snapshot.content if agent_id is None else strip_mentions_of(snapshot.content, agent_id),
        content_updated_at=snapshot.updated_at,
        content_author_id=snapshot.author_id,
        content_author_trusted=snapshot.author_trusted,
    )


@dataclass(frozen=True, slots=True)
class DeliveryReceipt:
    """The delivery an acknowledgement, a completion or a note left: ``{event_id, delivery,
    ack_id?, outcome?, reply_id?, links?, message?}`` (absent fields left out); ``message`` is
    what became of the words the call gave the connector to post (``core.worker_words``)."""

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
