"""What ``bin/connect status`` reads: the values the shell fills and ``status_report`` renders.

The shell reads the lock file's metadata and one read transaction of the ledger
(``shell.ledger.status``) into these values. None can hold a feed position (a checkpoint is only
``has_position``), a token, a task's token hash or a message body. The ledger read is bounded:
the newest ``LAST_DISPATCHES`` attempts, the oldest ``LAST_WAITING_RECORDS`` records not yet running.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from core.posting import TokenOutage
from core.snapshots import WorkerResult
from core.states import AttemptState, IntentState

LAST_DISPATCHES = 20
LAST_WAITING_RECORDS = 20


class PidStatus(StrEnum):
    """Whether the pid the lock file names is a live process (``kill(pid, 0)``)."""

    present = "present"
    absent = "absent"
    unknown = "unknown"  # someone else's process: present, but not provably the connector


def pid_status(present: bool | None) -> PidStatus:
    """``present`` as the lock file's reader found it: True, False, or None when it cannot tell."""
    if present is None:
        return PidStatus.unknown
    return PidStatus.present if present else PidStatus.absent


@dataclass(frozen=True, slots=True)
class LockFile:
    pid: int
    started_at: str
    pid_status: PidStatus
    configuration_problem: str = ""  # why its re-read configuration authorizes nothing


@dataclass(frozen=True, slots=True)
class Hold:
    held_by: str
    held_at: str
    cause: str = ""
    generation: int = 0


@dataclass(frozen=True, slots=True)
class FeedCheckpoint:
    """Where one filter set's feed reading stands: whether a position is kept, never which."""

    has_position: bool
    last_served_id: int
    updated_at: str


@dataclass(frozen=True, slots=True)
class LiveAttempt:
    attempt_id: str
    state: AttemptState
    pid: int | None
    launched_at: str
    left_at: str | None = None  # a start's recovery found it launching, its process unrecorded


@dataclass(frozen=True, slots=True)
class LiveTask:
    """A task not yet ended: it holds its conversation."""

    task_id: int
    superseded: bool
    conversation: str
    created_at: str
    deadline_at: str | None
    attempt: LiveAttempt | None
    event_ids: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class WaitingIntent:
    """An outbox intent only a person's decision moves on: indeterminate, or refused."""

    intent_id: int
    kind: str
    state: IntentState
    refused: bool
    event_id: int | None
    attempt_id: str | None
    message_kind: str
    bucket_id: int
    recording_id: int
    note: str


@dataclass(frozen=True, slots=True)
class DispatchedEvent:
    """One event's row on a dispatch's task. ``outcome`` is '' until reported or settled; ``guard``
    the row's guard (refused or abandoned: the worker was told of a guard that never went out);
    ``ack_id`` and ``reply_id`` the worker's messages, once landed or reported."""

    event_id: int
    delivery: str
    outcome: str
    withdrawn: bool
    record_state: str
    guard: str = ""
    ack_id: int | None = None
    reply_id: int | None = None


@dataclass(frozen=True, slots=True)
class Dispatch:
    """One attempt (a worker run) and the events of its task. ``stop_reason`` is '' while live."""

    attempt_id: str
    task_id: int
    seq: int
    state: AttemptState
    stop_reason: str
    spawn_failed: bool
    launched_at: str
    ended_at: str | None
    events: tuple[DispatchedEvent, ...]
    not_started: str = ""  # why a worker that existed never began its work (its own output says)
    words_refused: str = ""  # the last of its worker's words refused for holding a credential, and why
    ended_because: str = ""  # why the connector ended a worker that had begun (its output passed the cap)
    result: WorkerResult | None = None  # what the worker's own result said (Claude Code's)


@dataclass(frozen=True, slots=True)
class HeldRecord:
    event_id: int
    event_type: str
    trigger: str
    recording_url: str


@dataclass(frozen=True, slots=True)
class WaitingRecord:
    """A record not yet running: blocked (with its reason and next retry), admitted or queued."""

    event_id: int
    state: str
    reason: str
    event_type: str
    next_retry_at: str | None


@dataclass(frozen=True, slots=True)
class LedgerSnapshot:
    hold: Hold | None
    feed: tuple[FeedCheckpoint, ...]
    state_counts: tuple[tuple[str, int], ...]
    blocked: tuple[tuple[str, int], ...]
    live_tasks: tuple[LiveTask, ...]
    waiting: tuple[WaitingIntent, ...]
    dispatches: tuple[Dispatch, ...]
    held: tuple[HeldRecord, ...]
    not_running: tuple[WaitingRecord, ...] = ()
    outbox: tuple[tuple[str, str, int], ...] = ()  # (state, kind, count) of every intent
    token_outage: TokenOutage | None = None


# Below this much free space where the ledger lives, status says the disk is nearly full: a write
# the connector cannot make shows only in its log otherwise.
LOW_DISK_BYTES = 64 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class Disk:
    free_bytes: int
    total_bytes: int

    @property
    def low(self) -> bool:
        return self.free_bytes < LOW_DISK_BYTES


@dataclass(frozen=True, slots=True)
class WriteFailure:
    """The running connector's last failed ledger write (``shell.ledger.connection.WriteFailures``): when
    (the ledger's time text, ``core.timestamps``), why in SQLite's or the system's words, and
    which process. Cleared by its next good write."""

    at: str
    why: str
    pid: int


@dataclass(frozen=True, slots=True)
class Status:
    """Status's inputs: where it looked, the lock file (None when there is none), the ledger."""

    account_id: int
    agent_id: int
    state_dir: str
    ledger_path: str
    lock_file: LockFile | None
    ledger: LedgerSnapshot
    unsafe_test_timings: bool = False  # core.configuration: the timing floors are lifted
    worker_allowed: tuple[str, ...] = ()  # what setup allowed the default worker, by name
    disk: Disk | None = None  # None when it could not be measured
    write_failure: WriteFailure | None = None  # None when the connector's last write succeeded
