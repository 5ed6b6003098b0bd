"""shell.ledger.history and `bin/connect show` on a real ledger file: one event's rows, its tasks'
attempts' notices with it, another event's own rows never, a person's decision; an unknown id."""

from __future__ import annotations

import json

import pytest
from returns.result import Success

from core.decisions import Action
from core.presentation.event_history import lines
from shell.cli.main import main as connect
from shell.errors import EXIT_NOT_FOUND, EXIT_OK
from shell.ledger.decisions import decide
from shell.ledger.history import read_history
from tests.support.ledger_world import PROJECT, LedgerWorld


def test_an_events_history_holds_its_attempts_notice_and_none_of_another_events_rows(world: LedgerWorld) -> None:
    world.request(1)
    world.request(2)
    task_id = world.task(1, 2)
    attempt_id = world.attempt(task_id)
    world.get_dispatch(task_id, 1)
    world.get_dispatch(task_id, 2)
    world.report(task_id, 1, "succeeded", reply_id=555, ack_id=554)
    world.report(task_id, 2, "failed")
    world.end_attempt(attempt_id, "failed")

    history = read_history(world.ledger, 1)
    assert history is not None
    assert [(intent.kind, intent.attempt_id) for intent in history.intents] == [
        ("guard_ack", None), ("completion", attempt_id)]  # fmt: skip
    assert {intent.kind for intent in history.intents if intent.attempt_id is None} == {"guard_ack"}
    (task,) = history.tasks
    assert (task.task_id, task.ack_id, task.reply_id, task.outcome) == (task_id, 554, 555, "succeeded")
    assert [attempt.attempt_id for attempt in task.attempts] == [attempt_id]
    other = read_history(world.ledger, 2)
    assert other is not None
    assert [intent.kind for intent in other.intents] == ["guard_ack", "completion"]
    assert history.intents[0].intent_id != other.intents[0].intent_id
    assert read_history(world.ledger, 3) is None


def test_a_persons_decision_is_read_with_the_record_as_it_was(world: LedgerWorld) -> None:
    world.request(1)
    task_id = world.task(1)
    attempt_id = world.attempt(task_id)
    world.get_dispatch(task_id, 1)
    world.report(task_id, 1, "failed")
    world.end_attempt(attempt_id, "failed")
    decided = decide(world.ledger, 1, Action.redispatch, "local:ada", world.ledger.clock.now(),
                     served=frozenset({PROJECT}))  # fmt: skip
    assert isinstance(decided, Success)

    history = read_history(world.ledger, 1)
    assert history is not None
    (decision,) = history.decisions
    assert (decision.action, decision.decided_by, decision.from_state, decision.from_outcome) == (
        "redispatch", "local:ada", "completed", "failed")  # fmt: skip
    assert any("local:ada decided redispatch" in line for line in lines(history))


def test_show_on_a_ledger_tells_it_and_an_unknown_id_is_one_line(
    world: LedgerWorld, capsys: pytest.CaptureFixture[str]
) -> None:
    world.request(1)
    state = str(world.ledger.path.parent)
    assert connect(["show", "1", "--state-dir", state]) == EXIT_OK
    shown = capsys.readouterr()
    assert (shown.out.splitlines()[0], shown.err) == (
        "event 1: admitted; comment.created on recording 1000001 in project 2085958504; ack_id -, reply_id -", "")
    assert connect(["show", "1", "--state-dir", state, "--json"]) == EXIT_OK
    assert json.loads(capsys.readouterr().out)["event_id"] == 1
    assert connect(["show", "2", "--state-dir", state]) == EXIT_NOT_FOUND
    unknown = capsys.readouterr()
    assert (unknown.out, unknown.err) == ("", "error: the ledger holds no event 2\n")
