"""`bin/connect settle-launch`: a person settles an attempt a stopped connector left mid-launch
, in-process on a real ledger: only an attempt recovery marked left, --ran ends
it unknown with its completion notice, --did-not-run is refused once a worker pulled, and the
command's text, --json and exit codes."""

from __future__ import annotations

import json

import pytest
from returns.result import Failure

from core.settlement import LaunchFinding
from shell.cli.main import main as connect
from shell.errors import EXIT_REFUSED, EXIT_USAGE
from shell.ledger import tasks
from shell.ledger.connection import Ledger
from shell.ledger.decisions import settle_launch
from tests.support.ledger_world import LedgerWorld

EVENT = 801


def left_mid_launch(world: LedgerWorld, event: int = EVENT) -> tasks.Launch:
    world.request(event)
    launched = world.launch(event)
    with world.ledger.write() as connection:
        tasks.mark_left(connection, launched.attempt_id, world.ledger.clock.now())
    return launched


def settle(capsys: pytest.CaptureFixture[str], ledger: Ledger, *words: str) -> tuple[int, str, str]:
    code = connect(["settle-launch", *words, "--state-dir", str(ledger.path.parent), "--by", "local:ada"])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_a_launch_in_progress_is_never_settled_by_a_person(world: LedgerWorld, ledger: Ledger) -> None:
    world.request(EVENT)
    world.launch(EVENT)  # launching, but recovery never found it left: its connector may be spawning it
    refused = settle_launch(ledger, EVENT, LaunchFinding.did_not_run, "local:ada", ledger.clock.now())
    assert isinstance(refused, Failure)
    assert "has no attempt left mid-launch" in refused.failure()
    with ledger.read() as connection:
        assert connection.execute("SELECT state FROM attempts").fetchone() == ("launching",)
    nothing = settle_launch(ledger, 999, LaunchFinding.ran, "local:ada", ledger.clock.now())
    assert isinstance(nothing, Failure)
    assert nothing.failure() == "Event 999 is on no live task: there is no launch to settle"


def test_ran_ends_it_unknown_and_writes_its_completion_notice(
    world: LedgerWorld, ledger: Ledger, capsys: pytest.CaptureFixture[str]
) -> None:
    launched = left_mid_launch(world)
    code, out, err = settle(capsys, ledger, str(EVENT), "--ran", "--json")
    assert (code, err) == (0, "")
    result = json.loads(out)
    assert (result["settled"], result["claim"], result["stop_reason"], result["attempt_id"]) == (
        True, "ran", "lost", launched.attempt_id
    )
    with ledger.read() as connection:
        assert connection.execute("SELECT state, settled_by, settled_as FROM attempts").fetchone() == (
            "ended", "local:ada", "ran"
        )
        assert connection.execute("SELECT state FROM events WHERE id = ?", (EVENT,)).fetchone() == ("completed",)
        assert connection.execute("SELECT outcome FROM task_events").fetchone() == ("unknown",)
        assert connection.execute("SELECT COUNT(*) FROM outbox WHERE kind = 'completion'").fetchone() == (1,)
    code, _, err = settle(capsys, ledger, str(EVENT), "--ran")
    assert code == EXIT_REFUSED
    assert err.startswith(f"error: Event {EVENT} is on no live task")


def test_did_not_run_is_refused_once_a_worker_pulled(
    world: LedgerWorld, ledger: Ledger, capsys: pytest.CaptureFixture[str]
) -> None:
    launched = left_mid_launch(world)
    with ledger.write() as connection:  # a worker got as far as its first pull
        connection.execute("UPDATE task_events SET pulled_at = ? WHERE task_id = ?", (world.now(), launched.task_id))
    code, out, err = settle(capsys, ledger, str(EVENT), "--did-not-run")
    assert (code, out) == (EXIT_REFUSED, "")
    assert err.strip() == (f"error: Event {EVENT}'s task {launched.task_id}: the ledger shows a worker pulled its"
                           " instruction, so a worker did run; settle it with --ran")


def test_one_of_ran_or_did_not_run_is_required(ledger: Ledger, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        settle(capsys, ledger, str(EVENT))
    assert exited.value.code == EXIT_USAGE


def test_each_finding_says_what_it_settled_in_words(
    world: LedgerWorld, ledger: Ledger, capsys: pytest.CaptureFixture[str]
) -> None:
    first = left_mid_launch(world)
    code, out, _ = settle(capsys, ledger, str(EVENT), "--did-not-run")
    assert code == 0
    assert out.strip() == (f"Attempt {first.attempt_id} settled as never run: task {first.task_id} ended, its"
                           " records wait to run again, and the project moves on")
    again = left_mid_launch(world, EVENT + 1)
    code, out, _ = settle(capsys, ledger, str(EVENT + 1), "--ran")
    assert code == 0
    assert out.strip() == (f"Attempt {again.attempt_id} settled as run: task {again.task_id} ended, its records'"
                           " outcome is unknown (redispatch or discard each), and the project moves on")
