"""What a review of "redispatch and discard" (core/decisions.py, shell/ledger/decisions.py,
shell/cli/decisions.py, migration 0006) found: each finding a test that failed before its fix
(all fixed; each was seen red with --runxfail before, and by bin/prove after).

Real ledger files throughout (the root conftest's ``ledger``, ``world`` and ``clock``); the
command is run through ``shell.cli.main`` against a state directory configured the way
``setup`` leaves it.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from core.admission import BlockedReason, Verdict
from core.configuration import Configuration, Route
from core.decisions import Action
from core.edges import RecordState
from core.snapshots import StopReason
from shell.cli.main import main as connect
from shell.clock import FakeClock
from shell.ledger import records as ledger_admission
from shell.ledger import tasks
from shell.ledger.connection import Ledger
from shell.ledger.decisions import decide
from shell.state.config import save_config
from tests.support.ledger_world import PROJECT, LedgerWorld

EVENT = 601
BY = "local:reviewer"
OTHER_PROJECT = 4_040_404
SERVED = frozenset({PROJECT})


def settled_unknown(world: LedgerWorld, event_id: int = EVENT) -> None:
    """A request admitted, launched, and its worker lost before reporting: completed(unknown)."""
    world.request(event_id)
    launched = world.launch(event_id)
    with world.ledger.write() as connection:
        tasks.end_attempt(
            connection,
            launched.attempt_id,
            StopReason.lost,
            spawn_failed=False,
            now=world.ledger.clock.now(),
        )


def configured(ledger: Ledger, tmp_path: Path, routes: tuple[Route, ...]) -> Path:
    """The ledger's state directory with a configuration as `setup` writes it."""
    token_file = tmp_path / "token"
    token_file.write_text("token-never-shown\n")
    token_file.chmod(0o600)
    directory = ledger.path.parent
    save_config(
        directory / "config.json",
        Configuration(
            account_id=999,
            base_url="https://3.basecampapi.com",
            agent_id=42,
            token_file=str(token_file),
            routes=routes,
        ),
    )
    return directory


def state_of(ledger: Ledger, event_id: int = EVENT) -> tuple[str, str]:
    with ledger.read() as connection:
        state, reason = connection.execute(
            "SELECT state, reason FROM events WHERE id = ?", (event_id,)
        ).fetchone()
    return str(state), str(reason)


def test_a_redispatch_never_admits_a_record_no_connector_with_this_configuration_will_start(
    world: LedgerWorld, ledger: Ledger, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    settled_unknown(world)  # in PROJECT, routed when it ran
    # Since then a person removed the project's route (setup --remove-route) and restarted.
    routes = (Route(OTHER_PROJECT, str(tmp_path)),)
    state_dir = configured(ledger, tmp_path, routes)

    code = connect(["redispatch", "--state-dir", str(state_dir), "--by", BY, str(EVENT)])
    said = capsys.readouterr().out

    with ledger.read() as connection:
        startable = tasks.startable_records(connection, frozenset(r.project_id for r in routes), 10)
    assert startable == [], "the connector this configuration runs never starts it"
    assert state_of(ledger) != ("admitted", ""), (
        f"exit {code}, told {said.strip()!r}: the record now waits as admitted for a start that "
        "cannot come, and nothing (no holding reply, no sweep) will ever say so"
    )


def test_a_persons_redispatch_of_a_blocked_record_outlives_one_transient_failure(
    world: LedgerWorld, ledger: Ledger, clock: FakeClock
) -> None:
    read_failed = Verdict(RecordState.blocked, BlockedReason.read_failed)
    world.seen(EVENT)
    with ledger.write() as connection:  # admission blocks it: its summary read failed
        assert ledger_admission.commit_verdict(connection, EVENT, 0, read_failed, clock.now(), world.guard_delay)
    clock.advance(timedelta(hours=25).total_seconds())
    with ledger.write() as connection:  # the sweep's last retry, past the window: no timer left
        assert ledger_admission.commit_verdict(connection, EVENT, 1, read_failed, clock.now(), world.guard_delay)
    with ledger.read() as connection:
        assert connection.execute("SELECT next_retry_at FROM events WHERE id = ?", (EVENT,)).fetchone() == (
            None,
        )

    decide(ledger, EVENT, Action.redispatch, BY, clock.now(), served=SERVED).unwrap()  # a person authorizes it
    with ledger.read() as connection:
        (revision,) = connection.execute("SELECT revision FROM events WHERE id = ?", (EVENT,)).fetchone()
    with ledger.write() as connection:  # admission re-runs the read; Basecamp blips once more
        assert ledger_admission.commit_verdict(
            connection, EVENT, revision, read_failed, clock.now(), world.guard_delay
        )

    with ledger.read() as connection:
        state, due = connection.execute(
            "SELECT state, next_retry_at FROM events WHERE id = ?", (EVENT,)
        ).fetchone()
    assert state == "blocked"
    assert due is not None, (
        "the authorized record is never offered to admission again without a second redispatch"
    )


def test_a_person_can_stop_a_follow_up_no_worker_has_pulled_from_running(
    world: LedgerWorld, ledger: Ledger
) -> None:
    follow_up = EVENT + 1
    world.request(EVENT)
    first = world.launch(EVENT)
    world.get_dispatch(first.task_id, EVENT)  # the worker is on the first request
    world.seen(follow_up, recording_id=1_000_000 + EVENT)  # a second mention on the same card
    world.verdict(follow_up, "queued")
    with ledger.write() as connection:  # the dispatcher's next tick joins it to the live task
        assert tasks.join_follow_ups(connection, first.task_id, ledger.clock.now()) == (follow_up,)

    decided = decide(ledger, follow_up, Action.discard, BY, ledger.clock.now(), served=SERVED)  # not that one
    assert decided.unwrap().plan.to_state is RecordState.discarded

    world.report(first.task_id, EVENT, "succeeded", reply_id=77)
    with ledger.write() as connection:  # the worker exits without pulling the follow-up
        tasks.end_attempt(
            connection,
            first.attempt_id,
            StopReason.finished,
            spawn_failed=False,
            now=ledger.clock.now(),
        )
    with ledger.read() as connection:
        startable = tasks.startable_records(connection, frozenset({PROJECT}), 10)
    assert (follow_up, PROJECT) not in startable, (
        f"the discard was answered {decided}; the record it named now starts on its own task"
    )
    with ledger.read() as connection:
        assert connection.execute("SELECT state, snapshot FROM events WHERE id = ?", (follow_up,)).fetchone() == (
            "discarded", None,
        ), "discarded, its content gone, and not returned to admitted by the settlement"
