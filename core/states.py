"""The states the ledger stores for its rows, as values: a record's, an intent's, a task's, an
event's delivery, guard and outcome on a task, an attempt's.

Which moves between them are edges is ``core.edges``' (which re-exports them). They live apart from
the edge tables so that what only reads and shows states (``bin/connect status``, the worker's MCP
server) imports neither the tables nor ``returns``.
"""

from __future__ import annotations

from enum import StrEnum


class IntentState(StrEnum):
    pending = "pending"  # written and not yet asked for
    sending = "sending"  # claimed for a request; the request may or may not have reached Basecamp
    sent = "sent"  # has its receipt
    indeterminate = "indeterminate"  # could not be reconciled unambiguously; a person decides
    canceled = "canceled"  # never sent: no longer called for, or Basecamp refused the request
    abandoned = "abandoned"  # an indeterminate intent a person decided not to send


class RecordState(StrEnum):
    seen = "seen"
    admitted = "admitted"
    queued = "queued"
    blocked = "blocked"
    dispatched = "dispatched"
    completed = "completed"
    discarded = "discarded"
    held = "held"


class TaskState(StrEnum):
    """A task's state: live while ``tasks.superseded_at`` is NULL, then superseded for good."""
    live = "live"
    superseded = "superseded"


class DeliveryState(StrEnum):
    """An event's delivery on a task (``task_events.delivery``), forward only."""
    admitted = "admitted"
    exposed = "exposed"
    delivered = "delivered"
    completed = "completed"


class GuardState(StrEnum):
    """An event's guard on a task (``task_events.guard``): armed for a request, then settled once;
    a fired guard that never went out says so (``refused``, ``abandoned``)."""
    unarmed = ""
    armed = "armed"
    canceled = "canceled"
    fired = "fired"
    refused = "refused"  # Basecamp refused the guard, or a day of never reaching it
    abandoned = "abandoned"  # a person abandoned the guard, indeterminate


class AttemptState(StrEnum):
    launching = "launching"
    running = "running"
    ended = "ended"


class EventOutcome(StrEnum):
    """An event's outcome on its task: reported by the worker, or settled ``unknown``."""
    none = ""
    succeeded = "succeeded"
    failed = "failed"
    unknown = "unknown"
