"""Reconciliation's decision: from one listing of the destination, adopt exactly one message or none.

A ``sending`` intent's request may or may not have created its message. Reconciliation lists the
destination (never posts) and asks ``decide_adoption`` whether the listing proves which message
is the intent's. Short of proof the intent is left indeterminate for a person: a missing message
costs less than a doubled one, and a wrong adoption would hide one.

Rule 1: a candidate is a listed message by the agent, created at or after ``since`` (sending time
less the slack), whose words (``core.text.message_text``) equal the intent body's; counted by id.

Rule 2: a message already another intent's receipt of the same kind is not a candidate (the
shell passes the receipt ids of the intent's kind).

Rule 3: a worker's own message is never a candidate, however alike the words
(``worker_message_ids``): the guard's fixed form is short enough to collide.

Rule 4: not exactly one candidate: indeterminate, "<n> matching messages at the destination".

Rule 5: one candidate, but another unfinished intent at the destination (pending, sending,
indeterminate, or abandoned: abandoning did not prove it absent) has the same words:
indeterminate, "intent <id> could claim the same message".

Rule 6: otherwise adopt the one candidate. A body with no words never adopts anything.

Rule 7: rule 5's rivals are chosen by ``rivals`` (``RIVAL_STATES``) from one read of the intents
at the destination holding no receipt."""

from __future__ import annotations

from collections.abc import Iterable, Set
from dataclasses import dataclass
from datetime import datetime

from core import notes
from core.destinations import ListedMessage, MessageKind
from core.snapshots import TaskEventSnapshot
from core.text import message_text

RIVAL_STATES = ("pending", "sending", "indeterminate", "abandoned")
"""The states of an intent that has, or may yet have, a message at its destination (rule 5)."""


@dataclass(frozen=True, slots=True)
class Neighbour:
    """An intent at the same (message kind, recording) holding no receipt, as the ledger reads it."""

    intent_id: int
    state: str
    body: str


def rivals(intent_id: int, neighbours: Iterable[Neighbour]) -> list[Rival]:
    """Rule 7: the neighbours of intent ``intent_id`` that could claim the same message."""
    return [
        Rival(neighbour.intent_id, neighbour.body)
        for neighbour in neighbours
        if neighbour.intent_id != intent_id and neighbour.state in RIVAL_STATES
    ]


@dataclass(frozen=True, slots=True)
class Rival:
    """Another intent at the same (message kind, recording) that is pending, sending,
    indeterminate or abandoned: one that has or may yet have a message there without a receipt."""

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
    """Adopt the one listed message that is this intent's, or say why the listing cannot tell."""
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
