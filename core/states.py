"""The states of the ledger's rows, as values: a record's, an intent's, a task's, an event's delivery,
guard and outcome on a task, an attempt's.

Rules:
1. These are the names the ledger stores; which moves between them are edges is
   ``core.edges``' (which re-exports them, so its callers import one module).
2. Apart from ``core.edges`` so that what only reads and shows states (``bin/connect status``)
   imports no edge tables and no ``returns``.
3. An event's outcome on its task (``EventOutcome``, which has no edges) is a stored value too and
   lives here, not among ``core.snapshots``' values: the worker's MCP server reads and writes it
   and imports none of those.
"""

from __future__ import annotations

from enum import StrEnum


class IntentState(StrEnum):
    """An outbox intent's state."""

    pending = "pending"  # written and not yet asked for
    sending = "sending"  # claimed for a request; the request may or may not have reached Basecamp
    sent = "sent"  # has its receipt
    indeterminate = "indeterminate"  # could not be reconciled unambiguously; a person decides
    canceled = "canceled"  # never sent: no longer called for, or Basecamp refused the request
    abandoned = "abandoned"  # an indeterminate intent a person decided not to send


class RecordState(StrEnum):
    """A record's state (``events.state``)."""

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
    """An event's guard on a task (``task_events.guard``): armed for a request, then settled once."""

    unarmed = ""
    armed = "armed"
    canceled = "canceled"
    fired = "fired"


class AttemptState(StrEnum):
    """A worker run's state (``attempts.state``), forward only."""

    launching = "launching"
    running = "running"
    ended = "ended"


class EventOutcome(StrEnum):
    """An event's outcome on its task: reported by the worker, or settled ``unknown``."""

    none = ""
    succeeded = "succeeded"
    failed = "failed"
    unknown = "unknown"
