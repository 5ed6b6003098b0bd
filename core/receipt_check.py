"""Whether a message a person names may be recorded as an indeterminate intent's receipt.

Before ``bin/outbox-resolve sent ID --receipt N`` records message N as the intent's, it is read
alone and ``check_receipt`` decides, by reconciliation's comparisons (``core.adoption`` rule 1):

Rules:
1. A message Basecamp says does not exist is refused.
2. It must stand at the intent's destination (the recording it is on, the Campfire it is in).
3. It must be the agent's: its creator (a boost's booster) is the agent.
4. It must not be a worker's own message, however alike its words (``core.adoption`` rule 3).
5. It must carry the intent's words (``core.text.message_text``); a body with no words proves
   nothing.
6. It must not be older than the intent's request (``core.reconcile_schedule.listing_since``).
7. The first rule that fails is the refusal, one line naming what differed, never carrying a
   message's words (``shell.errors`` rule 2)."""

from __future__ import annotations

from collections.abc import Set
from dataclasses import dataclass
from datetime import datetime

from returns.result import Failure, Result, Success

from core.destinations import Destination
from core.text import message_text
from core.timestamps import format_timestamp


@dataclass(frozen=True, slots=True)
class ReadMessage:
    """One message read alone by its id: where it stands, who wrote it, when, and its content."""

    id: int
    at_recording_id: int  # the recording a comment or boost is on; the Campfire of a line
    creator_id: int
    created_at: datetime
    content: str


@dataclass(frozen=True, slots=True)
class ReceiptAccepted:
    """Message ``receipt_id`` is the intent's: the agent's, at its destination, with its words."""

    receipt_id: int


@dataclass(frozen=True, slots=True)
class ReceiptRefused:
    """Why the message cannot be the intent's receipt, in one line for the person who named it."""

    reason: str

    def __str__(self) -> str:
        return self.reason


def check_receipt(
    *,
    receipt_id: int,
    body: str,
    destination: Destination,
    agent_id: int,
    since: datetime,
    found: ReadMessage | None,
    worker_messages: Set[int],
) -> Result[ReceiptAccepted, ReceiptRefused]:
    """Rules 1-7: accept message ``receipt_id`` (``found``; None when it does not exist) as the
    receipt of the intent with ``body`` at ``destination``, or say what differed."""
    where = destination.describe()
    if found is None:
        return Failure(ReceiptRefused(f"message {receipt_id} was not found at {where}"))
    if found.at_recording_id != destination.recording_id:
        return Failure(ReceiptRefused(
            f"message {receipt_id} is on {found.at_recording_id}, not at the intent's destination ({where})"
        ))
    if found.creator_id != agent_id:
        return Failure(ReceiptRefused(
            f"message {receipt_id} was written by person {found.creator_id}, not by the agent ({agent_id})"
        ))
    if found.id in worker_messages:
        return Failure(ReceiptRefused(
            f"message {receipt_id} is a worker's own (a task's acknowledgement or reply), not the connector's"
        ))
    words = message_text(body)
    if not words:
        return Failure(ReceiptRefused(
            f"the intent's body has no words, so no message can be shown to be its ({where})"
        ))
    if message_text(found.content) != words:
        return Failure(ReceiptRefused(f"message {receipt_id} does not carry the intent's words"))
    if found.created_at < since:
        return Failure(ReceiptRefused(
            f"message {receipt_id} was created at {format_timestamp(found.created_at)}, before the "
            f"intent's request (not before {format_timestamp(since)})"
        ))
    return Success(ReceiptAccepted(receipt_id))
