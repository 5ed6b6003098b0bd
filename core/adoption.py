"""Whether a message Basecamp holds is an intent's: reconciliation's adoption from a listing, and
the check of a receipt a person names.

A ``sending`` intent's request may or may not have created its message. Reconciliation lists the
destination (never posts) and adopts a message only when the listing proves it is the intent's;
short of proof the intent is left indeterminate for a person: a missing message costs less than a
doubled one, and a wrong adoption would hide one. A candidate is a listed message by the agent,
created at or after ``since`` (sending time less the slack), whose words (``core.text.message_text``)
equal the intent body's, that is not already another intent's receipt of the same kind and is not
a worker's own message however alike the words (the guard's fixed form is short enough to
collide). Exactly one candidate is adopted -- unless another unfinished intent at the destination
(``RIVAL_STATES``: abandoning did not prove its message absent) has the same words; a body with no
words adopts nothing.

Before ``bin/outbox-resolve sent ID --receipt N`` records message N as an intent's, N is read alone
and held to the same comparisons (``check_receipt``); the first that fails is the refusal, one
line naming what differed, never the message's words.
"""

from __future__ import annotations

from collections.abc import Iterable, Set
from dataclasses import dataclass
from datetime import datetime

from returns.result import Failure, Result, Success

from core import notes
from core.destinations import Destination, ListedMessage, MessageKind
from core.snapshots import TaskEventSnapshot
from core.text import message_text
from core.timestamps import format_timestamp

RIVAL_STATES = ("pending", "sending", "indeterminate", "abandoned")
"""The states of an intent that has, or may yet have, a message at its destination."""


@dataclass(frozen=True, slots=True)
class Neighbour:

    intent_id: int
    state: str
    body: str


def rivals(intent_id: int, neighbours: Iterable[Neighbour]) -> list[Rival]:
    return [
        Rival(neighbour.intent_id, neighbour.body)
        for neighbour in neighbours
        if neighbour.intent_id != intent_id and neighbour.state in RIVAL_STATES
    ]


@dataclass(frozen=True, slots=True)
class Rival:
    """Another intent at the same (message kind, recording) that has or may yet have a message
    there without a receipt."""

    intent_id: int
    body: str


@dataclass(frozen=True, slots=True)
class Adopt:
    """The listing proves ``receipt_id`` is this intent's message: ``sending -> sent``."""

    receipt_id: int


@dataclass(frozen=True, slots=True)
class Indeterminate:
    """The listing proves nothing: ``sending -> indeterminate`` with ``note``, for a person."""

    note: str


Adoption = Adopt | Indeterminate


def worker_message_ids(kind: MessageKind, task_events: Iterable[TaskEventSnapshot]) -> frozenset[int]:
    """The ids of workers' own messages that could stand at a destination of ``kind``."""
    ids: set[int] = set()
    for row in task_events:
        reported = (row.ack_id,) if kind == MessageKind.boost else (
            row.ack_id, row.reply_id, row.adopted_reply_id,
        )
        ids.update(identifier for identifier in reported if identifier is not None)
    return frozenset(ids)


def decide_adoption(
    *,
    intent_id: int,
    body: str,
    listed: Iterable[ListedMessage],
    since: datetime,
    agent_id: int,
    owned_receipts: Set[int],
    worker_messages: Set[int],
    rivals: Iterable[Rival],
) -> Adoption:
    words = message_text(body)
    if not words:
        return Indeterminate(notes.NO_WORDS)
    candidates = {
        message.id
        for message in listed
        if message.text == words
        and message.creator_id == agent_id
        and message.created_at >= since
        and message.id not in owned_receipts
        and message.id not in worker_messages
    }
    if len(candidates) != 1:
        return Indeterminate(notes.matching_messages(len(candidates)))
    for rival in rivals:
        if rival.intent_id != intent_id and message_text(rival.body) == words:
            return Indeterminate(notes.rival_could_claim(rival.intent_id))
    (receipt_id,) = candidates
    return Adopt(receipt_id)


# -- a receipt a person names ------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ReadMessage:

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
    """Accept message ``receipt_id`` (``found``; None when it does not exist) as the receipt of the
    intent with ``body`` at ``destination``, or say what differed."""
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
