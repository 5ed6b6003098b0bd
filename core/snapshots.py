"""What the ledger hands the core: plain values read in the transaction that acts on them.

A snapshot is ids, states, reasons and times, never content: everything the connector posts is
rendered from these values alone, so a message can be rendered again and matched. The shell reads a
snapshot and applies the core's decision in the same transaction; a snapshot is never carried
across transactions.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from core.destinations import Destination, MessageKind
from core.states import AttemptState, DeliveryState, EventOutcome, GuardState, RecordState

NO_ROUTE = "no_route"
"""The blocked reason of a mention or assignment in a project the connector does not serve."""

REPLY_KINDS = frozenset({MessageKind.comment, MessageKind.chat_line})


class StopReason(StrEnum):
    finished = "finished"
    failed = "failed"
    deadline = "deadline"
    shutdown = "shutdown"
    lost = "lost"


class Settlement(StrEnum):
    reported = "reported"  # the worker's reported outcome stands
    unknown = "unknown"  # exposed and never reported: the worker may have acted on it
    withdrawn = "withdrawn"  # the first start failed; it goes back for its one automatic retry
    returned = "returned"  # never exposed; it waits for a task of its own
    blocked_again = "blocked_again"  # the worker could not be started, again: blocked(spawn_failed)
    redispatched = "redispatched"  # read back only: a person's redispatch, pending, was applied at the end


@dataclass(frozen=True, slots=True)
class RecordSnapshot:
    """A record (one feed event) as the outbox needs it; its replies go to its reply destination."""
    event_id: int
    state: RecordState
    reason: str
    bucket_id: int
    recording_id: int
    acknowledge: bool
    reply_kind: MessageKind | None
    reply_bucket_id: int
    reply_recording_id: int

    def reply_destination(self) -> Destination | None:
        """Where replies and notices go; None without a reply kind or a positive reply recording."""
        kind = self.reply_kind
        if kind is None or kind not in REPLY_KINDS:
            return None
        if self.reply_recording_id <= 0 or self.reply_bucket_id < 0:
            return None
        return Destination(kind, self.reply_bucket_id, self.reply_recording_id)


@dataclass(frozen=True, slots=True)
class TaskEventSnapshot:
    """One event's row on one task (``task_events``), live or retired."""
    event_id: int
    delivery: DeliveryState
    guard: GuardState
    ack_id: int | None = None
    reply_id: int | None = None
    adopted_reply_id: int | None = None


@dataclass(frozen=True, slots=True)
class AttemptSnapshot:
    """One worker run, live until it has ended; an ended one carries its stop reason."""
    attempt_id: str
    task_id: int
    state: AttemptState
    started_at: datetime
    progress_at: datetime | None  # the worker's last report (shell.ledger.worker_moves.record_progress)
    stop_reason: str

    @property
    def live(self) -> bool:
        return self.state != AttemptState.ended


@dataclass(frozen=True, slots=True)
class SettledEvent:
    """One event as an attempt's settlement left it: what the completion notice reads."""
    event_id: int
    outcome: EventOutcome
    reply_id: int | None
    settlement: Settlement
    adopted_reply_id: int | None = None  # the adopted-reply rule's link next to ``unknown``
    reply_on_its_way: bool = False  # the worker's reply, written for the outbox, not yet landed
    reply_not_posted: bool = False  # the worker's reply, refused by Basecamp or given up: no message


@dataclass(frozen=True, slots=True)
class WorkerResult:
    """Claude Code's ``result``, as the connector keeps it on an attempt: how its turn ended."""
    is_error: bool
    turns: int = 0
    cost_usd: float = 0.0
    duration_ms: int = 0
    denials: tuple[str, ...] = ()  # the tools refused, by name, in order
    error: str = ""  # the result's text when is_error: bounded, no secrets
    terminal_reason: str = ""
