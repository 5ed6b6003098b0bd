"""The kinds of message the outbox posts, and whose voice each is: one table.

Rules:
1. Four are the connector's own lifecycle messages (``core.intents``, fixed words from ledger
   records); three are a worker's words, posted for it (``core.worker_words``): its
   acknowledgement, its final reply and its notes before completion.
2. Every kind goes through the one outbox with the same promise: an intent written in the
   transaction of the move that calls for it, claimed, one request, reconciled by listing after
   doubt, never posted twice.
3. ``WORKER_KINDS`` names the worker's kinds; ``REPORTED_AS`` names the task-row column a
   landed worker message is recorded in (the event's ``ack_id`` or ``reply_id``), so a worker
   never has to report an id the connector already knows.

This module imports nothing but the standard library's enum: a worker's MCP server reads it.
"""

from __future__ import annotations

from enum import StrEnum


class IntentKind(StrEnum):
    """The messages the outbox posts: the connector's four, then the worker's three."""

    guard_ack = "guard_ack"
    holding_reply = "holding_reply"
    still_running = "still_running"
    completion = "completion"
    worker_ack = "worker_ack"
    worker_reply = "worker_reply"
    worker_note = "worker_note"


WORKER_KINDS = frozenset({IntentKind.worker_ack, IntentKind.worker_reply, IntentKind.worker_note})
"""The kinds that are a worker's words, posted for it (rule 1)."""

REPORTED_AS: dict[IntentKind, str] = {
    IntentKind.worker_ack: "ack_id",
    IntentKind.worker_reply: "reply_id",
}
"""Rule 3: the task-row column a landed worker message of this kind is recorded in."""
