"""The kinds of message the outbox posts, and whose voice each is.

Four are the connector's own lifecycle messages, fixed words from ledger records
(``core.message_kinds``); three are a worker's words, posted for it (``core.worker_words``): its
acknowledgement, its final reply and its notes before completion. Every kind goes through the one
outbox with the same promise. A landed worker message is recorded in its task row's column
``REPORTED_AS`` names, so a worker never has to report an id the connector already knows. This
module imports nothing but the standard library's enum: a worker's MCP server reads it.
"""

from __future__ import annotations

from enum import StrEnum


class IntentKind(StrEnum):
    guard_ack = "guard_ack"
    holding_reply = "holding_reply"
    still_running = "still_running"
    completion = "completion"
    worker_ack = "worker_ack"
    worker_reply = "worker_reply"
    worker_note = "worker_note"


WORKER_KINDS = frozenset({IntentKind.worker_ack, IntentKind.worker_reply, IntentKind.worker_note})

REPORTED_AS: dict[IntentKind, str] = {IntentKind.worker_ack: "ack_id", IntentKind.worker_reply: "reply_id"}
