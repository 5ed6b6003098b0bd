"""The connector's figures as Prometheus metric families. For ``status --prometheus`` and ``run
--metrics-file``, every sample labelled with the pair (``account``, ``agent``), so two connectors'
files sit side by side in one textfile collector.

From the ledger: intents by kind and state and the oldest pending one's age by kind (how long it
has been due: since its first retry began, else since ``not_before``; one not yet due is 0), the
indeterminate and refused ones, records by state, blocked ones by reason, the oldest waiting
record's age by state (since it was heard), live tasks, ended attempts by stop reason, the hold,
and the token's state as status tells it. From the heartbeats: each loop's last turn and whether it
still turns (``core.heartbeats``). From the running process alone: Basecamp's answers by status
and the rate budget's use. Every kind, state and stop reason is a sample, zero included, so an
alert sees 0 rather than nothing. The worker's tokens and cost are not recorded yet."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime

from core.heartbeats import STALL_AFTER, Beats, not_turning
from core.intent_kinds import IntentKind
from core.presentation.prometheus_text import Family, MetricType, Sample
from core.snapshots import StopReason
from core.states import IntentState, RecordState

PREFIX = "basecamp_connector_"
WAITING_STATES = ("seen", "admitted", "queued", "blocked", "held")  # RecordState's not yet running


@dataclass(frozen=True, slots=True)
class LedgerFigures:
    """What one read transaction of the ledger counts (``shell.ledger.metrics``)."""

    intents: tuple[tuple[str, str, int], ...]  # (state, kind, count)
    pending_since: Mapping[str, datetime]  # kind -> the earliest a pending intent of it is due
    refused: int  # canceled with a note a person may resend
    records: tuple[tuple[str, int], ...]  # (state, count)
    blocked: tuple[tuple[str, int], ...]  # (reason, count)
    waiting_since: Mapping[str, datetime]  # a waiting state -> its oldest record's seen_at
    live_tasks: int
    attempts: tuple[tuple[str, int], ...]  # (stop reason, count) of ended attempts
    held: bool
    token_failing_since: datetime | None


@dataclass(frozen=True, slots=True)
class ProcessFigures:
    """What only the running connector knows: its client's answers and its pacer's budget."""

    answers: Mapping[int, int]  # HTTP status -> answers
    sent_in_window: int
    limit: int
    window_seconds: float
    held_seconds: float  # what a Retry-After still holds every request for


Labels = tuple[tuple[str, str], ...]
Samples = list[tuple[Labels, float]]
GAUGE, COUNTER = MetricType.gauge, MetricType.counter


def _family(name: str, kind: MetricType, help_text: str, pair: Labels, samples: Samples) -> Family:
    labelled = tuple(Sample(pair + labels, value) for labels, value in samples)
    return Family(PREFIX + name, help_text, kind, labelled)


def _age(since: datetime | None, now: datetime) -> float:
    return 0.0 if since is None else max(0.0, (now - since).total_seconds())


def _known_first(known: list[str], found: set[str]) -> list[str]:
    return [*known, *sorted(found - set(known))]


def ledger_families(figures: LedgerFigures, pair: Labels, now: datetime) -> tuple[Family, ...]:
    counted = {(state, kind): count for state, kind, count in figures.intents}
    kinds = _known_first(list(IntentKind), {kind for _, kind in counted})
    states = _known_first(list(IntentState), {state for state, _ in counted})
    records, stopped = dict(figures.records), dict(figures.attempts)
    indeterminate = sum(count for (state, _), count in counted.items() if state == IntentState.indeterminate)
    return (
        _family("outbox_intents", GAUGE, "Outbox intents (messages to post) by kind and state.", pair,
                [((("kind", kind), ("state", state)), counted.get((state, kind), 0))
                 for kind in kinds for state in states]),
        _family("outbox_oldest_pending_age_seconds", GAUGE, "How long the oldest pending intent of each "
                "kind has been due and not posted (0: none is due).", pair,
                [((("kind", kind),), _age(figures.pending_since.get(kind), now)) for kind in kinds]),
        _family("outbox_indeterminate_intents", GAUGE, "Intents the connector could not settle: a person "
                "decides with bin/outbox-resolve.", pair, [((), indeterminate)]),
        _family("outbox_refused_intents", GAUGE, "Intents Basecamp refused: a person may resend or abandon "
                "them.", pair, [((), figures.refused)]),
        _family("records", GAUGE, "Records (events heard) by state.", pair,
                [((("state", state),), records.get(state, 0))
                 for state in _known_first(list(RecordState), set(records))]),
        _family("blocked_records", GAUGE, "Blocked records by reason.", pair,
                [((("reason", reason),), count) for reason, count in figures.blocked]),
        _family("oldest_waiting_record_age_seconds", GAUGE, "How long ago the oldest record in each "
                "waiting state was heard (0: none waits).", pair,
                [((("state", state),), _age(figures.waiting_since.get(state), now))
                 for state in WAITING_STATES]),
        _family("live_tasks", GAUGE, "Tasks holding a conversation.", pair, [((), figures.live_tasks)]),
        _family("attempts_total", COUNTER, "Worker attempts ended, by stop reason.", pair,
                [((("stop_reason", reason),), stopped.get(reason, 0))
                 for reason in _known_first(list(StopReason), set(stopped))]),
        _family("hold", GAUGE, "1 while a person's hold stands (nothing launches or posts).", pair,
                [((), 1 if figures.held else 0)]),
        _family("token_failing", GAUGE, "1 while Basecamp refuses the agent's token (after its refresh) "
                "and messages wait for it.", pair, [((), 0 if figures.token_failing_since is None else 1)]),
        _family("token_failing_seconds", GAUGE, "How long messages have waited on a refused token (0: none "
                "waits).", pair, [((), _age(figures.token_failing_since, now))]),
    )


def loop_families(beats: Beats | None, pair: Labels, now: datetime) -> tuple[Family, ...]:
    """Each loop's last turn; no samples without a running connector's heartbeats."""
    loops = {} if beats is None else dict(beats.loops)
    stalled = set() if beats is None else set(not_turning(beats, now))
    return (
        _family("loop_last_turn_timestamp_seconds", GAUGE, "When each loop of the running connector last "
                "began a turn (Unix time).", pair,
                [((("loop", name),), at.timestamp()) for name, at in sorted(loops.items())]),
        _family("loop_turning", GAUGE, f"1 while the loop has turned within the last "
                f"{STALL_AFTER.total_seconds():g} s.", pair,
                [((("loop", name),), 0 if name in stalled else 1) for name in sorted(loops)]),
    )


def running_family(running: bool, pair: Labels) -> Family:
    return _family("running", GAUGE, "1 while a connector runs for this pair (its lock file's pid is "
                   "present).", pair, [((), 1 if running else 0)])


def process_families(figures: ProcessFigures, pair: Labels) -> tuple[Family, ...]:
    used = figures.sent_in_window / figures.limit if figures.limit > 0 else 0.0
    return (
        _family("basecamp_answers_total", COUNTER, "Basecamp's answers to this process, by HTTP status "
                "(429: rate limited).", pair,
                [((("status", str(status)),), count) for status, count in sorted(figures.answers.items())]),
        _family("rate_budget_used_ratio", GAUGE, f"Requests in the last {figures.window_seconds:g} s over "
                f"the budget of {figures.limit}.", pair, [((), used)]),
        _family("rate_limit_held_seconds", GAUGE, "How long Basecamp's Retry-After still holds every "
                "request.", pair, [((), figures.held_seconds)]),
    )
