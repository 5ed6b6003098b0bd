"""shell.ledger.history on a real ledger file: one event's rows, its tasks' attempts' notices with it,
another event's own rows never."""

from __future__ import annotations

from shell.ledger.history import read_history
from tests.support.ledger_world import LedgerWorld


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
