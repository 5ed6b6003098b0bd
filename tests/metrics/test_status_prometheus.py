"""``bin/connect status --prometheus`` on real ledger files: what a person would alert on, parsed by
the official parser; read-only, like status."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from core.heartbeats import STALL_AFTER, beats_text
from core.notes import NOT_CONNECTED
from shell.clock import FakeClock
from shell.errors import EXIT_CONFIG
from shell.heartbeats import path_beside
from shell.ledger import outbox as rows
from shell.ledger.hold import set_hold
from shell.private_files import write_atomically
from shell.state.lock import acquire
from tests.status.test_status_ledger import ACCOUNT, AGENT, TOKEN, indeterminate, intent_of, state, status
from tests.support.ledger_world import LedgerWorld

__all__ = ["state"]  # the fixture, shared

LONG_AGO = timedelta(minutes=20)


@pytest.fixture
def clock() -> FakeClock:
    """The ledger's writes twenty minutes ago: status reads the time it runs at."""
    return FakeClock(datetime.now(UTC) - LONG_AGO)


def metrics(capsys: pytest.CaptureFixture[str], state: Path) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    code, out, err = status(capsys, "--state-dir", str(state), "--prometheus")
    assert (code, err) == (0, "")
    assert TOKEN not in out
    found = {}
    for family in text_string_to_metric_families(out):
        for sample in family.samples:
            assert (sample.labels.pop("account"), sample.labels.pop("agent")) == (str(ACCOUNT), str(AGENT))
            found[sample.name.removeprefix("basecamp_connector_"), tuple(sorted(sample.labels.items()))] = sample.value
    return found


def test_an_indeterminate_intent_and_the_oldest_pending_ones_age_are_shown(
    world: LedgerWorld, state: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    world.request(1)  # its guard pending, due 30 s after it was heard, twenty minutes ago
    world.request(2)
    indeterminate(world, intent_of(world, 2, "guard_ack"))
    world.seen(3)
    world.verdict(3, "blocked", "no_route")
    found = metrics(capsys, state)
    assert found["outbox_indeterminate_intents", ()] == 1
    assert found["outbox_intents", (("kind", "guard_ack"), ("state", "indeterminate"))] == 1
    assert found["outbox_intents", (("kind", "guard_ack"), ("state", "pending"))] == 1
    pending_age = found["outbox_oldest_pending_age_seconds", (("kind", "guard_ack"),)]
    assert (LONG_AGO - timedelta(seconds=30)).total_seconds() <= pending_age < (LONG_AGO + timedelta(minutes=5)).total_seconds()
    assert found["outbox_oldest_pending_age_seconds", (("kind", "completion"),)] == 0
    assert found["records", (("state", "admitted"),)] == 2
    assert found["blocked_records", (("reason", "no_route"),)] == 1
    assert found["oldest_waiting_record_age_seconds", (("state", "blocked"),)] >= LONG_AGO.total_seconds()
    assert (found["running", ()], found["hold", ()], found["token_failing", ()]) == (0, 0, 0)


def test_a_message_retried_after_a_refused_connection_has_been_due_since_its_first_retry(
    world: LedgerWorld, state: Path, clock: FakeClock, capsys: pytest.CaptureFixture[str]
) -> None:
    world.request(1)
    guard = intent_of(world, 1, "guard_ack")
    clock.advance(30)
    with world.ledger.write() as connection:  # its backoff moves its due time past now
        rows.claim(connection, guard, clock.now())
        rows.retry(connection, guard, NOT_CONNECTED, datetime.now(UTC) + timedelta(minutes=5), clock.now())
    age = metrics(capsys, state)["outbox_oldest_pending_age_seconds", (("kind", "guard_ack"),)]
    assert age >= (LONG_AGO - timedelta(seconds=30)).total_seconds()


def test_a_stale_loop_of_the_running_connector_is_shown_not_turning(
    state: Path, clock: FakeClock, capsys: pytest.CaptureFixture[str]
) -> None:
    now = datetime.now(UTC)
    loops = {"intake": now - timedelta(seconds=2), "live": now - STALL_AFTER - timedelta(seconds=30)}
    write_atomically(path_beside(state / "ledger.sqlite3"), beats_text(loops, now).encode())
    assert not any(name.startswith("loop_") for name, _ in metrics(capsys, state))  # no connector: history
    with acquire(state, ACCOUNT, AGENT, clock.now()):
        found = metrics(capsys, state)
    assert found["running", ()] == 1
    assert found["loop_turning", (("loop", "intake"),)] == 1
    assert found["loop_turning", (("loop", "live"),)] == 0
    assert found["loop_last_turn_timestamp_seconds", (("loop", "live"),)] == pytest.approx(loops["live"].timestamp())


def test_a_hold_is_shown_and_a_missing_ledger_is_exit_3_and_never_created(
    world: LedgerWorld, state: Path, clock: FakeClock, capsys: pytest.CaptureFixture[str]
) -> None:
    set_hold(world.ledger, "local:ada", "upgrade", clock.now())
    assert metrics(capsys, state)["hold", ()] == 1
    world.ledger.close()
    (state / "ledger.sqlite3").unlink()
    code, out, err = status(capsys, "--state-dir", str(state), "--prometheus")
    assert (code, out) == (EXIT_CONFIG, "")
    assert err.startswith("error: ")
    assert not (state / "ledger.sqlite3").exists()
