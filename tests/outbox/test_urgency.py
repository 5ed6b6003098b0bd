"""Urgency: the claim takes a due guard before a holding reply before a completion notice before a
still-running notice, oldest first within a kind, and no kind waits past the bound -- asked of the
ledger's one ordered claim query, on a real file."""

from __future__ import annotations

from datetime import datetime, timedelta

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.destinations import Destination, MessageKind
from core.edges import IntentState
from core.intent_kinds import WORKER_KINDS, IntentKind
from core.message_kinds import KINDS, STARVING_AFTER, Intent
from shell.clock import FakeClock
from shell.ledger import outbox as rows
from shell.ledger.connection import Ledger
from shell.ledger.rules import CLAIM_ORDER

Candidate = tuple[IntentKind, int]  # a kind, and how many seconds ago it fell due

CONNECTORS = [kind for kind in IntentKind if kind not in WORKER_KINDS]  # a worker's words need a task row
candidates = st.lists(st.tuples(st.sampled_from(CONNECTORS), st.integers(0, 600)), max_size=12)
on_one_ledger = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def write(ledger: Ledger, clock: FakeClock, kind: IntentKind, key: str, due_seconds_ago: float) -> int:
    intent = Intent(
        key=key,
        kind=kind,
        event_id=None,
        task_id=None,
        attempt_id=None,
        occurrence=0,
        destination=Destination(MessageKind.comment, 1, 10 + len(key)),
        body=f"<div>{key}</div>",
        not_before=clock.now() - timedelta(seconds=due_seconds_ago),
    )
    with ledger.write() as connection:
        rows.write_intents(connection, [intent], clock.now())
        return int(connection.execute("SELECT id FROM outbox WHERE intent_key = ?", (key,)).fetchone()[0])


def written(ledger: Ledger, clock: FakeClock, chosen: list[Candidate]) -> list[rows.IntentRow]:
    """``chosen`` as the only pending intents (an intent is never deleted: the last example's are canceled)."""
    with ledger.write() as connection:
        for row in rows.intents_in(connection, [IntentState.pending]):
            rows.cancel(connection, row.id, IntentState.pending, "", clock.now())
        first = connection.execute("SELECT count(*) FROM outbox").fetchone()[0]
    for number, (kind, ago) in enumerate(chosen, first):
        write(ledger, clock, kind, f"intent-{number}", ago)
    with ledger.read() as connection:
        return rows.intents_in(connection, [IntentState.pending])


def next_due(ledger: Ledger, now: datetime) -> rows.IntentRow | None:
    with ledger.read() as connection:
        return rows.next_due(connection, now)


def age(row: rows.IntentRow, now: datetime) -> timedelta:
    return now - row.not_before


@on_one_ledger
@given(candidates)
def test_the_choice_is_a_candidate_and_none_only_of_none(ledger: Ledger, clock: FakeClock, chosen: list[Candidate]) -> None:
    pending = written(ledger, clock, chosen)
    found = next_due(ledger, clock.now())
    assert (found is None) == (not pending)
    assert found is None or found in pending


@on_one_ledger
@given(candidates.map(lambda chosen: [(kind, ago % 119) for kind, ago in chosen]))
def test_without_a_starving_intent_the_most_urgent_kind_goes_oldest_first(
    ledger: Ledger, clock: FakeClock, chosen: list[Candidate]
) -> None:
    pending = written(ledger, clock, chosen)
    found = next_due(ledger, clock.now())
    if not pending:
        return
    assert found is not None
    most_urgent = min(KINDS[row.kind].urgency for row in pending)
    assert KINDS[found.kind].urgency == most_urgent
    same_tier = [row for row in pending if KINDS[row.kind].urgency == most_urgent]
    assert (found.not_before, found.id) == min((row.not_before, row.id) for row in same_tier)


@on_one_ledger
@given(candidates)
def test_a_starving_intent_of_any_kind_goes_before_the_rest_oldest_first(
    ledger: Ledger, clock: FakeClock, chosen: list[Candidate]
) -> None:
    pending = written(ledger, clock, chosen)
    starving = [row for row in pending if age(row, clock.now()) >= STARVING_AFTER]
    found = next_due(ledger, clock.now())
    if starving:
        assert found is not None
        assert (found.not_before, found.id) == min((row.not_before, row.id) for row in starving)


def test_a_still_running_notice_waits_behind_a_stream_of_guards_no_longer_than_the_bound(
    ledger: Ledger, clock: FakeClock
) -> None:
    notice = write(ledger, clock, IntentKind.still_running, "running", 0)
    start, waited = clock.now(), timedelta(0)
    while True:  # a fresh guard falls due every second, for ever
        write(ledger, clock, IntentKind.guard_ack, f"guard-{waited.total_seconds():.0f}", -waited.total_seconds())
        with ledger.write() as connection:
            found = rows.next_due(connection, start + waited)
            assert found is not None
            if found.id == notice:
                break
            rows.claim(connection, found.id, start + waited)
        waited += timedelta(seconds=1)
    assert waited == STARVING_AFTER


def test_the_outbox_takes_a_due_guard_before_older_holding_replies_and_notices(
    ledger: Ledger, clock: FakeClock
) -> None:
    write(ledger, clock, IntentKind.still_running, "running", 90)
    write(ledger, clock, IntentKind.completion, "done", 80)
    write(ledger, clock, IntentKind.holding_reply, "holding-old", 70)
    write(ledger, clock, IntentKind.holding_reply, "holding-new", 60)
    guard = write(ledger, clock, IntentKind.guard_ack, "guard", 1)
    write(ledger, clock, IntentKind.guard_ack, "guard-later", -5)  # not due yet
    order = []
    claimed: set[int] = set()
    with ledger.read() as connection:
        while (row := rows.next_due(connection, clock.now(), claimed)) is not None:
            order.append(row.key)
            claimed.add(row.id)
    assert order == ["guard", "holding-old", "holding-new", "done", "running"]
    with ledger.read() as connection:
        found = rows.next_due(connection, clock.now(), set(), frozenset({IntentKind.guard_ack}))
    assert found is not None
    assert found.key == "holding-old", "a kind the flush leaves is never chosen"
    assert guard in claimed


def test_the_outbox_takes_a_starving_notice_before_a_fresh_guard(ledger: Ledger, clock: FakeClock) -> None:
    write(ledger, clock, IntentKind.guard_ack, "guard", 0)
    write(ledger, clock, IntentKind.still_running, "running", STARVING_AFTER.total_seconds())
    found = next_due(ledger, clock.now())
    assert found is not None
    assert found.key == "running"


def test_the_claim_reads_its_order_from_the_index_the_kind_table_generates(ledger: Ledger, clock: FakeClock) -> None:
    with ledger.read() as connection:
        (sql,) = connection.execute("SELECT sql FROM sqlite_master WHERE name = ?", (CLAIM_ORDER,)).fetchone()
    for kind, spec in KINDS.items():
        assert f"WHEN '{kind}' THEN {spec.urgency}" in sql
