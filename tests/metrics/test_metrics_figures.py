"""``core.metrics``: the connector's figures as Prometheus families, from plain values, read back
by the official parser."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from prometheus_client.parser import text_string_to_metric_families

from core.heartbeats import STALL_AFTER, Beats
from core.intent_kinds import IntentKind
from core.metrics import LedgerFigures, ProcessFigures, ledger_families, loop_families, process_families
from core.presentation.prometheus_text import Family, exposition
from core.snapshots import StopReason
from core.states import IntentState, RecordState

NOW = datetime(2026, 12, 7, 12, 0, tzinfo=UTC)
PAIR = (("account", "999"), ("agent", "42"))


def figures(**changes: object) -> LedgerFigures:
    values: dict[str, object] = {
        "intents": (), "pending_since": {}, "refused": 0, "records": (), "blocked": (), "waiting_since": {},
        "live_tasks": 0, "attempts": (), "held": False, "token_failing_since": None,
    }  # fmt: skip
    values.update(changes)
    return LedgerFigures(**values)  # type: ignore[arg-type]


def samples(families: tuple[Family, ...]) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample as the official parser reads it, by name and labels (the pair's left out)."""
    found = {}
    for family in text_string_to_metric_families(exposition(families)):
        for sample in family.samples:
            assert (sample.labels["account"], sample.labels["agent"]) == ("999", "42")
            rest = tuple(sorted((k, v) for k, v in sample.labels.items() if k not in ("account", "agent")))
            found[sample.name.removeprefix("basecamp_connector_"), rest] = sample.value
    return found


def test_every_kind_and_state_is_a_sample_zero_included_and_the_indeterminate_are_counted_apart() -> None:
    held = figures(intents=(("indeterminate", "completion", 2), ("sent", "guard_ack", 5),
                            ("indeterminate", "worker_reply", 1)))  # fmt: skip
    found = samples(ledger_families(held, PAIR, NOW))
    intents = {labels: value for (name, labels), value in found.items() if name == "outbox_intents"}
    assert len(intents) == len(IntentKind) * len(IntentState)
    assert intents[(("kind", "guard_ack"), ("state", "sent"))] == 5
    assert intents[(("kind", "holding_reply"), ("state", "pending"))] == 0
    assert found["outbox_indeterminate_intents", ()] == 3


def test_the_oldest_pending_age_is_how_long_it_has_been_due_and_none_due_is_zero() -> None:
    due = figures(pending_since={"guard_ack": NOW - timedelta(minutes=11), "completion": NOW + timedelta(seconds=5)})
    found = samples(ledger_families(due, PAIR, NOW))
    assert found["outbox_oldest_pending_age_seconds", (("kind", "guard_ack"),)] == 660
    assert found["outbox_oldest_pending_age_seconds", (("kind", "completion"),)] == 0
    assert found["outbox_oldest_pending_age_seconds", (("kind", "worker_note"),)] == 0


def test_records_by_state_the_oldest_waiting_attempts_by_stop_reason_the_hold_and_the_token() -> None:
    found = samples(ledger_families(figures(
        records=(("blocked", 3), ("completed", 9)), blocked=(("no_route", 3),),
        waiting_since={"blocked": NOW - timedelta(hours=1)}, live_tasks=2, attempts=(("failed", 4),),
        held=True, token_failing_since=NOW - timedelta(minutes=2),
    ), PAIR, NOW))  # fmt: skip
    assert {labels[0][1] for (name, labels) in found if name == "records"} == {str(s) for s in RecordState}
    assert found["records", (("state", "blocked"),)] == 3
    assert found["blocked_records", (("reason", "no_route"),)] == 3
    assert found["oldest_waiting_record_age_seconds", (("state", "blocked"),)] == 3600
    assert found["oldest_waiting_record_age_seconds", (("state", "admitted"),)] == 0
    assert found["live_tasks", ()] == 2
    assert {labels[0][1] for (name, labels) in found if name == "attempts_total"} == {str(s) for s in StopReason}
    assert found["attempts_total", (("stop_reason", "failed"),)] == 4
    assert (found["hold", ()], found["token_failing", ()], found["token_failing_seconds", ()]) == (1, 1, 120)
    quiet = samples(ledger_families(figures(), PAIR, NOW))
    assert (quiet["hold", ()], quiet["token_failing", ()], quiet["token_failing_seconds", ()]) == (0, 0, 0)


def test_a_loop_past_its_stall_bound_is_not_turning_and_without_heartbeats_no_loop_is_shown() -> None:
    beats = Beats(NOW, {"intake": NOW - timedelta(seconds=2), "live": NOW - STALL_AFTER - timedelta(seconds=1)})
    found = samples(loop_families(beats, PAIR, NOW))
    assert found["loop_turning", (("loop", "intake"),)] == 1
    assert found["loop_turning", (("loop", "live"),)] == 0
    assert found["loop_last_turn_timestamp_seconds", (("loop", "intake"),)] == (NOW - timedelta(seconds=2)).timestamp()
    assert samples(loop_families(None, PAIR, NOW)) == {}


def test_basecamps_answers_by_status_429s_included_and_the_budgets_use() -> None:
    found = samples(process_families(ProcessFigures({200: 40, 429: 2}, 47, 47, 10.0, 3.5), PAIR))
    assert found["basecamp_answers_total", (("status", "429"),)] == 2
    assert found["basecamp_answers_total", (("status", "200"),)] == 40
    assert found["rate_budget_used_ratio", ()] == 1.0
    assert found["rate_limit_held_seconds", ()] == 3.5
