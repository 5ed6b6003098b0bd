"""The worker's transitions against a real ledger file: one immediate transaction a call, the
token re-checked in it, the moves the lifecycle tables give a worker and nothing else."""

from __future__ import annotations

import logging
import sqlite3
import threading
import time
from pathlib import Path

import pytest
from returns.result import Failure, Success

from core.dispatch_tools import RefusalKind
from core.dispatch_tools.decisions import AckRequest, CompleteRequest, Completion, GetRequest
from shell.clock import FakeClock
from shell.ledger import tasks
from shell.ledger.connection import Ledger, open_existing_ledger
from shell.ledger.worker_calls import DispatchLedger
from tests.dispatch_tools.world import AGENT, REQUESTER, SOMEONE_ELSE, DispatchWorld, Task, mention


def refusal_of(call: object, *args: object) -> RefusalKind:
    assert callable(call)
    answer = call(*args)
    assert isinstance(answer, Failure), f"expected a refusal, got {answer}"
    return answer.failure().kind


def pulled(world: DispatchWorld, event_id: int = 1, **request: object) -> tuple[Task, DispatchLedger]:
    """A request on a launched task whose worker pulled it."""
    world.request(event_id, **request)  # type: ignore[arg-type]
    task = world.task(event_id)
    world.launch(task)
    tools = world.tools(task)
    assert tools.get_dispatch(GetRequest(event_id)).unwrap().instruction is not None
    return task, tools


def data_version(path: Path) -> int:
    """Changes whenever another connection commits a change to the file."""
    with sqlite3.connect(path) as observer:
        return int(observer.execute("PRAGMA data_version").fetchone()[0])


# -- get_dispatch ------------------------------------------------------------------------------


def test_get_dispatch_exposes_pulls_and_cancels_the_guard_and_its_pending_intent(
    world: DispatchWorld,
) -> None:
    world.request(1)
    task = world.task(1)
    assert world.guard_intent(1) == ("pending", "")
    assert world.row(task, 1)["delivery"] == "admitted"

    instruction = world.tools(task).get_dispatch(GetRequest(1)).unwrap().instruction

    assert instruction is not None
    assert instruction.delivery == "exposed"
    assert instruction.guard_acknowledged is False
    row = world.row(task, 1)
    assert (row["delivery"], row["guard"]) == ("exposed", "canceled")
    assert row["exposed_at"] is not None
    assert row["pulled_at"] is not None
    assert world.guard_intent(1) == ("canceled", "get_dispatch")


def test_the_guard_intent_is_canceled_in_get_dispatchs_own_transaction(
    world: DispatchWorld, ledger: Ledger
) -> None:
    """If the outbox side of the write fails, the exposure, the pull and the guard roll back too."""
    world.request(1)
    task = world.task(1)
    with ledger.write() as connection:
        connection.execute(
            "CREATE TRIGGER test_refuse_guard_cancel BEFORE UPDATE OF state ON outbox"
            " WHEN NEW.state = 'canceled' BEGIN SELECT RAISE(ABORT, 'injected'); END"
        )

    with pytest.raises(sqlite3.IntegrityError, match="injected"):
        world.tools(task).get_dispatch(GetRequest(1)).unwrap()

    row = world.row(task, 1)
    assert (row["delivery"], row["guard"], row["pulled_at"]) == ("admitted", "armed", None)
    assert world.guard_intent(1) == ("pending", "")


def test_a_repeat_returns_the_same_instruction_and_writes_nothing(
    world: DispatchWorld, clock: FakeClock, ledger_path: Path
) -> None:
    task, tools = pulled(world)
    first = tools.get_dispatch(GetRequest(1)).unwrap().instruction
    row = world.row(task, 1)
    version = data_version(ledger_path)
    clock.advance(60)

    again = tools.get_dispatch(GetRequest(1)).unwrap().instruction
    earliest = tools.get_dispatch(GetRequest(None)).unwrap().instruction

    assert again == first == earliest
    assert world.row(task, 1) == row
    assert data_version(ledger_path) == version, "a repeat committed a change"


def test_a_pull_of_an_event_exposed_at_launch_records_the_pull_and_keeps_the_exposure(
    world: DispatchWorld, clock: FakeClock
) -> None:
    world.request(1)
    task = world.task(1)
    world.launch(task)
    exposed_at = world.row(task, 1)["exposed_at"]
    clock.advance(5)

    world.tools(task).get_dispatch(GetRequest(None)).unwrap()

    row = world.row(task, 1)
    assert row["exposed_at"] == exposed_at
    assert row["pulled_at"] is not None
    assert row["pulled_at"] > exposed_at
    assert row["guard"] == "canceled"


def test_without_an_event_the_earliest_not_acknowledged_is_served_then_nothing(world: DispatchWorld) -> None:
    for event_id in (1, 2, 3):
        world.request(event_id, conversation="recording:7")
    task = world.task(1, 2, 3)
    world.launch(task)
    tools = world.tools(task)

    first = tools.get_dispatch(GetRequest(None)).unwrap().instruction
    assert first is not None
    assert first.event_id == 1
    tools.ack_dispatch(AckRequest(1, 501)).unwrap()
    second = tools.get_dispatch(GetRequest(None)).unwrap().instruction
    assert second is not None
    assert second.event_id == 2
    assert world.row(task, 2)["delivery"] == "exposed"
    assert world.row(task, 3)["delivery"] == "admitted", "only the served event is exposed"
    tools.complete_dispatch(CompleteRequest(2, Completion("succeeded"))).unwrap()
    third = tools.get_dispatch(GetRequest(None)).unwrap().instruction
    assert third is not None
    assert third.event_id == 3
    tools.complete_dispatch(CompleteRequest(3, Completion("failed"))).unwrap()

    assert tools.get_dispatch(GetRequest(None)).unwrap().instruction is None


def test_the_earliest_skips_a_record_settled_elsewhere_and_naming_it_is_not_dispatchable(
    world: DispatchWorld,
) -> None:
    """Finished work is never handed out for the first time."""
    world.request(1, conversation="recording:7")
    world.request(2, conversation="recording:7")
    task = world.task(1, 2)
    world.settle_record(1)
    tools = world.tools(task)

    assert refusal_of(tools.get_dispatch, GetRequest(1)) == RefusalKind.not_dispatchable
    served = tools.get_dispatch(GetRequest(None)).unwrap().instruction
    assert served is not None
    assert served.event_id == 2
    assert world.row(task, 1)["pulled_at"] is None


def test_a_completed_record_is_served_again_to_the_worker_that_pulled_it(world: DispatchWorld) -> None:
    _task, tools = pulled(world)
    tools.complete_dispatch(CompleteRequest(1, Completion("succeeded", reply_id=77))).unwrap()
    assert world.record_state(1) == "completed"

    again = tools.get_dispatch(GetRequest(1)).unwrap().instruction

    assert again is not None
    assert again.delivery == "completed"
    assert tools.get_dispatch(GetRequest(None)).unwrap().instruction is None


def test_guard_acknowledged_when_the_guard_fired_before_the_pull(world: DispatchWorld) -> None:
    world.request(1)
    task = world.task(1)
    world.claim_guard(1)
    assert world.row(task, 1)["guard"] == "fired"

    instruction = world.tools(task).get_dispatch(GetRequest(1)).unwrap().instruction

    assert instruction is not None
    assert instruction.guard_acknowledged is True
    assert world.row(task, 1)["guard"] == "fired", "a fired guard is final"
    assert world.guard_intent(1) == ("sending", "")


def test_guard_acknowledged_for_a_task_created_after_the_guard_went_out(world: DispatchWorld) -> None:
    world.request(1)
    world.claim_guard(1)  # no task yet: nothing to mark
    task = world.task(1)  # outbox_guard_fired_before_task marks the new row fired
    assert world.row(task, 1)["guard"] == "fired"

    instruction = world.tools(task).get_dispatch(GetRequest(None)).unwrap().instruction

    assert instruction is not None
    assert instruction.guard_acknowledged is True


def test_a_request_that_asks_for_nothing_has_no_guard_to_cancel(world: DispatchWorld) -> None:
    world.request(1, acknowledge=False)
    task = world.task(1)

    instruction = world.tools(task).get_dispatch(GetRequest(1)).unwrap().instruction

    assert instruction is not None
    assert (instruction.acknowledge, instruction.guard_acknowledged) == (False, False)
    assert world.row(task, 1)["guard"] == ""


def test_under_a_hold_a_first_pull_is_refused_and_nothing_is_written(world: DispatchWorld) -> None:
    world.request(1)
    world.request(2)
    first = world.task(1)
    second = world.task(2)
    first_tools = world.tools(first)
    first_tools.get_dispatch(GetRequest(1)).unwrap()
    world.hold()

    assert refusal_of(world.tools(second).get_dispatch, GetRequest(2)) == RefusalKind.not_dispatchable
    assert world.row(second, 2)["delivery"] == "admitted"
    assert world.guard_intent(2) == ("pending", "")
    assert first_tools.get_dispatch(GetRequest(1)).unwrap().instruction is not None, "a repeat is not a first pull"


def test_the_instruction_is_the_allowlist_with_the_agents_mention_stripped(world: DispatchWorld) -> None:
    content = f"<div>{mention(AGENT, 'Bot')} ask {mention(SOMEONE_ELSE, 'Jerry')} about it</div>"
    world.request(1, content=content)
    task = world.task(1)

    instruction = world.tools(task).get_dispatch(GetRequest(1)).unwrap().instruction

    assert instruction is not None
    body = instruction.to_json()
    assert set(body) == {
        "event_id", "event_type", "trigger", "recording", "reply_to", "requester_id", "acknowledge",
        "guard_acknowledged", "delivery", "content", "content_updated_at", "content_author",
    }
    assert set(body["recording"]) == {"bucket_id", "recording_id", "type", "title", "title_author", "url"}
    assert set(body["content_author"]) == set(body["recording"]["title_author"]) == {"id", "trusted"}
    assert body["recording"]["title_author"] == {"id": None, "trusted": False}, "a snapshot that does not say"
    assert set(body["reply_to"]) == {"kind", "recording_id"}
    assert body["content"] == f"<div>  ask {mention(SOMEONE_ELSE, 'Jerry')} about it</div>"
    assert body["requester_id"] == REQUESTER
    assert body["recording"]["type"] == "Kanban::Card"
    assert body["recording"]["title"] == "Fix the login page"
    assert body["reply_to"] == {"kind": "comment", "recording_id": 1_000_001}
    assert body["content_updated_at"] == "2026-11-29T11:59:00.000Z"
    assert (body["trigger"], body["acknowledge"]) == ("mentioned", True)
    assert task.token not in str(body)


# -- the token ---------------------------------------------------------------------------------


def test_a_superseded_token_is_refused_by_every_call_from_then_on(world: DispatchWorld) -> None:
    task, tools = pulled(world)
    world.supersede(task)

    assert refusal_of(tools.get_dispatch, GetRequest(1)) == RefusalKind.task_token_refused
    assert refusal_of(tools.get_dispatch, GetRequest(None)) == RefusalKind.task_token_refused
    assert refusal_of(tools.ack_dispatch, AckRequest(1, 5)) == RefusalKind.task_token_refused
    assert (
        refusal_of(tools.complete_dispatch, CompleteRequest(1, Completion("succeeded")))
        == RefusalKind.task_token_refused
    )
    assert refusal_of(tools.check_token) == RefusalKind.task_token_refused
    assert world.row(task, 1)["delivery"] == "exposed"


def test_the_token_is_checked_inside_the_calls_own_transaction(world: DispatchWorld, ledger_path: Path) -> None:
    """A supersession committed while the call waits for the write lock is seen by the call: the
    token is checked in the transaction that acts, never by a read made before it."""
    task, _ = pulled(world)
    worker_ledger = open_existing_ledger(ledger_path)
    tools = DispatchLedger(worker_ledger, task.token, AGENT)
    answers: list[object] = []

    def acknowledge() -> None:
        answer = tools.ack_dispatch(AckRequest(1, 5))
        answers.append(answer.unwrap() if isinstance(answer, Success) else answer.failure().kind)

    rival = sqlite3.connect(ledger_path, isolation_level=None, timeout=5)
    try:
        rival.execute("BEGIN IMMEDIATE")
        rival.execute("UPDATE tasks SET superseded_at = ? WHERE id = ?", (world.now(), task.id))
        call = threading.Thread(target=acknowledge)
        call.start()
        time.sleep(0.2)
        assert call.is_alive(), "the call must wait for the write lock"
        rival.execute("COMMIT")
        call.join(timeout=10)
    finally:
        rival.close()
        worker_ledger.close()

    assert answers == [RefusalKind.task_token_refused]
    assert (world.row(task, 1)["delivery"], world.row(task, 1)["ack_id"]) == ("exposed", None)


def test_an_unknown_token_is_refused(world: DispatchWorld) -> None:
    world.request(1)
    world.task(1)
    stranger = world.tools(Task(0, "not-a-token-of-any-task"))
    assert refusal_of(stranger.get_dispatch, GetRequest(None)) == RefusalKind.task_token_refused


def test_the_token_is_never_stored_nor_logged(
    world: DispatchWorld, ledger_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    task, tools = pulled(world)
    tools.ack_dispatch(AckRequest(1, 9)).unwrap()
    tools.complete_dispatch(CompleteRequest(1, Completion("succeeded", 10, ("https://example.com/pr/1",)))).unwrap()
    world.ledger.close()

    stored = b"".join(
        path.read_bytes() for path in ledger_path.parent.iterdir() if path.name.startswith(ledger_path.name)
    )
    assert task.token.encode() not in stored
    assert all(task.token not in record.getMessage() for record in caplog.records)
    assert any("get_dispatch task" in record.getMessage() for record in caplog.records)
    assert task.token not in repr(tools)


# -- a worker acts only on its own task's rows, and reports only what it pulled ----------------


def test_another_tasks_event_is_not_on_this_task(world: DispatchWorld) -> None:
    world.request(1)
    world.request(2)
    mine = world.task(1)
    theirs = world.task(2)
    world.tools(theirs).get_dispatch(GetRequest(2)).unwrap()
    tools = world.tools(mine)

    assert refusal_of(tools.get_dispatch, GetRequest(2)) == RefusalKind.not_on_task
    assert refusal_of(tools.ack_dispatch, AckRequest(2, 5)) == RefusalKind.not_on_task
    assert (
        refusal_of(tools.complete_dispatch, CompleteRequest(2, Completion("succeeded")))
        == RefusalKind.not_on_task
    )
    assert refusal_of(tools.get_dispatch, GetRequest(99)) == RefusalKind.not_on_task
    assert world.row(theirs, 2)["delivery"] == "exposed"


def test_an_event_never_pulled_is_not_exposed_to_this_worker_even_if_exposed_at_launch(
    world: DispatchWorld,
) -> None:
    world.request(1, conversation="recording:7")
    world.request(2, conversation="recording:7")
    task = world.task(1, 2)
    world.launch(task)  # event 1 exposed by the dispatcher; no worker pulled it
    tools = world.tools(task)

    for event_id in (1, 2):
        assert refusal_of(tools.ack_dispatch, AckRequest(event_id, 5)) == RefusalKind.not_exposed
        assert (
            refusal_of(tools.complete_dispatch, CompleteRequest(event_id, Completion("succeeded")))
            == RefusalKind.not_exposed
        )
    assert (world.row(task, 1)["delivery"], world.row(task, 2)["delivery"]) == ("exposed", "admitted")
    assert world.record_state(1) == "dispatched"


# -- ack_dispatch ------------------------------------------------------------------------------


def test_ack_moves_exposed_to_delivered_with_the_ack_id_and_a_repeat_answers_the_same_receipt(
    world: DispatchWorld, ledger_path: Path
) -> None:
    task, tools = pulled(world)

    receipt = tools.ack_dispatch(AckRequest(1, 501)).unwrap()
    row = world.row(task, 1)
    version = data_version(ledger_path)
    again = tools.ack_dispatch(AckRequest(1, 501)).unwrap()
    without_id = tools.ack_dispatch(AckRequest(1, None)).unwrap()

    assert receipt.to_json() == {"event_id": 1, "delivery": "delivered", "ack_id": 501}
    assert again == without_id == receipt
    assert (row["delivery"], row["ack_id"]) == ("delivered", 501)
    assert world.row(task, 1) == row
    assert data_version(ledger_path) == version
    assert world.record_state(1) == "dispatched"


def test_a_different_ack_id_after_the_acknowledgement_is_refused(world: DispatchWorld) -> None:
    task, tools = pulled(world)
    tools.ack_dispatch(AckRequest(1, 501)).unwrap()

    assert refusal_of(tools.ack_dispatch, AckRequest(1, 502)) == RefusalKind.report_conflict
    assert world.row(task, 1)["ack_id"] == 501


def test_an_ack_id_arriving_after_an_acknowledgement_without_one_is_refused(world: DispatchWorld) -> None:
    task, tools = pulled(world)
    assert tools.ack_dispatch(AckRequest(1, None)).unwrap().to_json() == {"event_id": 1, "delivery": "delivered"}

    assert refusal_of(tools.ack_dispatch, AckRequest(1, 501)) == RefusalKind.report_conflict
    assert world.row(task, 1)["ack_id"] is None


def test_an_ack_after_the_completion_answers_the_completed_receipt(world: DispatchWorld) -> None:
    _, tools = pulled(world)
    tools.ack_dispatch(AckRequest(1, 501)).unwrap()
    completed = tools.complete_dispatch(CompleteRequest(1, Completion("succeeded", 77))).unwrap()

    assert tools.ack_dispatch(AckRequest(1, 501)).unwrap() == completed
    assert completed.to_json() == {
        "event_id": 1, "delivery": "completed", "ack_id": 501, "outcome": "succeeded", "reply_id": 77,
    }


# -- complete_dispatch -------------------------------------------------------------------------


def test_complete_records_the_report_acknowledges_and_completes_the_record(
    world: DispatchWorld, ledger_path: Path
) -> None:
    task, tools = pulled(world)
    links = ("https://github.com/acme/app/pull/12", "http://example.com/card")

    receipt = tools.complete_dispatch(CompleteRequest(1, Completion("succeeded", 77, links))).unwrap()

    assert receipt.to_json() == {
        "event_id": 1, "delivery": "completed", "outcome": "succeeded", "reply_id": 77, "links": list(links),
    }
    row = world.row(task, 1)
    assert (row["delivery"], row["outcome"], row["reply_id"]) == ("completed", "succeeded", 77)
    assert row["delivered_at"] is not None
    assert row["completed_at"] is not None
    assert row["ack_id"] is None
    assert world.record_state(1) == "completed"
    version = data_version(ledger_path)
    assert tools.complete_dispatch(CompleteRequest(1, Completion("succeeded", 77, links))).unwrap() == receipt
    assert data_version(ledger_path) == version


@pytest.mark.parametrize(
    "different",
    [
        Completion("failed", 77, ("https://example.com/1",)),
        Completion("succeeded", 78, ("https://example.com/1",)),
        Completion("succeeded", None, ("https://example.com/1",)),
        Completion("succeeded", 77, ()),
        Completion("succeeded", 77, ("https://example.com/1", "https://example.com/2")),
    ],
)
def test_a_reported_outcome_stands_against_a_later_report(world: DispatchWorld, different: Completion) -> None:
    task, tools = pulled(world)
    tools.complete_dispatch(CompleteRequest(1, Completion("succeeded", 77, ("https://example.com/1",)))).unwrap()
    row = world.row(task, 1)

    assert refusal_of(tools.complete_dispatch, CompleteRequest(1, different)) == RefusalKind.report_conflict
    assert world.row(task, 1) == row


@pytest.mark.parametrize(
    "completion",
    [
        Completion("done"),
        Completion("unknown"),
        Completion("succeeded", links=("ftp://example.com/file",)),
        Completion("succeeded", links=("not a url",)),
        Completion("succeeded", links=("https://example.com/" + "a" * 2048,)),
        Completion("succeeded", links=tuple(f"https://example.com/{n}" for n in range(21))),
    ],
)
def test_an_invalid_report_is_refused_and_writes_nothing(world: DispatchWorld, completion: Completion) -> None:
    task, tools = pulled(world)

    assert refusal_of(tools.complete_dispatch, CompleteRequest(1, completion)) == RefusalKind.invalid_report
    assert world.row(task, 1)["delivery"] == "exposed"
    assert world.record_state(1) == "dispatched"


def test_complete_after_ack_keeps_the_ack_id(world: DispatchWorld) -> None:
    task, tools = pulled(world)
    tools.ack_dispatch(AckRequest(1, 501)).unwrap()
    delivered_at = world.row(task, 1)["delivered_at"]

    tools.complete_dispatch(CompleteRequest(1, Completion("failed"))).unwrap()

    row = world.row(task, 1)
    assert (row["delivery"], row["ack_id"], row["outcome"]) == ("completed", 501, "failed")
    assert row["delivered_at"] == delivered_at


# -- progress ----------------------------------------------------------------------------------


def _progress_at(ledger: Ledger, attempt_id: str) -> str | None:
    with ledger.read() as connection:
        found = connection.execute("SELECT progress_at FROM attempts WHERE id = ?", (attempt_id,)).fetchone()
    return None if found[0] is None else str(found[0])


def test_a_workers_reports_stamp_its_attempts_progress_at_most_every_thirty_seconds(
    world: DispatchWorld, ledger: Ledger, clock: FakeClock
) -> None:
    world.request(1)
    world.request(2)
    task = world.task(1, 2)
    attempt_id = world.launch(task)
    tools = world.tools(task)
    assert tools.get_dispatch(GetRequest(1)).unwrap().instruction is not None
    assert _progress_at(ledger, attempt_id) is None, "a pull is not a report"
    clock.advance(5)
    tools.ack_dispatch(AckRequest(1, 7001)).unwrap()
    first = _progress_at(ledger, attempt_id)
    assert first == world.now()
    clock.advance(10)
    tools.complete_dispatch(CompleteRequest(1, Completion("succeeded"))).unwrap()
    assert _progress_at(ledger, attempt_id) == first, "stamped at most every 30 s"
    clock.advance(30)
    assert tools.get_dispatch(GetRequest(2)).unwrap().instruction is not None
    tools.complete_dispatch(CompleteRequest(2, Completion("failed"))).unwrap()
    assert _progress_at(ledger, attempt_id) == world.now()


def test_a_still_running_notice_after_a_report_says_when_the_worker_last_progressed(
    world: DispatchWorld, ledger: Ledger, clock: FakeClock
) -> None:
    world.request(1)
    task = world.task(1)
    attempt_id = world.launch(task)
    tools = world.tools(task)
    assert tools.get_dispatch(GetRequest(1)).unwrap().instruction is not None
    tools.ack_dispatch(AckRequest(1, 7001)).unwrap()
    clock.advance(600)
    with ledger.write() as connection:
        intent = tasks.still_running(connection, attempt_id, clock.now())
    assert intent is not None
    assert "Last progress at" in intent.body
