"""Urgency: a due guard before a holding reply before a completion notice before a
still-running notice, oldest first within a kind, and no kind waits past the bound."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hypothesis import given
from hypothesis import strategies as st

from core.destinations import Destination, MessageKind
from core.intents import Intent, IntentKind
from core.urgency import STARVING_AFTER, Due, next_to_send, rank
from shell.clock import FakeClock
from shell.ledger import outbox as rows
from shell.ledger import outbox_due as heads
from shell.ledger.connection import Ledger

NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)

dues = st.lists(
    st.builds(
        Due,
        id=st.integers(1, 10_000),
        kind=st.sampled_from(list(IntentKind)),
        not_before=st.integers(0, 600).map(lambda seconds: NOW - timedelta(seconds=seconds)),
    ),
    max_size=12,
    unique_by=lambda due: due.id,
)


@given(dues)
def test_the_choice_is_a_candidate_and_none_only_of_none(candidates: list[Due]) -> None:
    chosen = next_to_send(candidates, NOW)
    assert (chosen is None) == (not candidates)
    assert chosen is None or chosen in candidates


@given(dues)
def test_without_a_starving_intent_the_most_urgent_kind_goes_oldest_first(candidates: list[Due]) -> None:
    fresh = [due for due in candidates if NOW - due.not_before < STARVING_AFTER]
    chosen = next_to_send(fresh, NOW)
    if chosen is None:
        return
    most_urgent = min(rank(due.kind) for due in fresh)
    assert rank(chosen.kind) == most_urgent
    same_kind = [due for due in fresh if rank(due.kind) == most_urgent]
    assert (chosen.not_before, chosen.id) == min((due.not_before, due.id) for due in same_kind)


@given(dues)
def test_a_starving_intent_of_any_kind_goes_before_the_rest_oldest_first(candidates: list[Due]) -> None:
    starving = [due for due in candidates if NOW - due.not_before >= STARVING_AFTER]
    chosen = next_to_send(candidates, NOW)
    if starving:
        assert chosen is not None
        assert (chosen.not_before, chosen.id) == min((due.not_before, due.id) for due in starving)


def test_a_still_running_notice_waits_behind_a_stream_of_guards_no_longer_than_the_bound() -> None:
    notice = Due(1, IntentKind.still_running, NOW)
    moment, next_id, waited = NOW, 2, timedelta(0)
    while True:  # a fresh guard falls due every second, for ever
        guard = Due(next_id, IntentKind.guard_ack, moment)
        if next_to_send([notice, guard], moment) == notice:
            break
        next_id, moment, waited = next_id + 1, moment + timedelta(seconds=1), waited + timedelta(seconds=1)
    assert waited == STARVING_AFTER


# -- the ledger's fetch honours the order ----------------------------------------------------


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
        while (row := heads.due_now(connection, clock.now(), claimed).row) is not None:
            order.append(row.key)
            claimed.add(row.id)
    assert order == ["guard", "holding-old", "holding-new", "done", "running"]
    with ledger.read() as connection:
        found = heads.due_now(connection, clock.now(), set(), frozenset({IntentKind.guard_ack})).row
    assert found is not None
    assert found.key == "holding-old", "a kind the flush leaves is never chosen"
    assert guard in claimed


def test_the_outbox_takes_a_starving_notice_before_a_fresh_guard(ledger: Ledger, clock: FakeClock) -> None:
    write(ledger, clock, IntentKind.guard_ack, "guard", 0)
    write(ledger, clock, IntentKind.still_running, "running", STARVING_AFTER.total_seconds())
    with ledger.read() as connection:
        found = heads.due_now(connection, clock.now(), set()).row
    assert found is not None
    assert found.key == "running"
