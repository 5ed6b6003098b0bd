"""A worker's words through the real parts: the worker speaks MCP to a real ``bin/connect mcp``
process, the connector's outbox runs in a real child process posting to the stand-in over real
HTTP, and crash tests SIGKILL either while a worker's post is in flight. Every count is the
stand-in's own record of the POSTs it took: exactly once or indeterminate, never twice."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from core import notes
from shell.basecamp.standin.faults import Fault, FaultAction
from shell.basecamp.standin.server import StandIn
from shell.cli.mcp import TOKEN_ENV
from shell.ledger.connection import Ledger, open_ledger
from tests.dispatch_tools.test_mcp_process import Server, environment, start
from tests.dispatch_tools.world import AGENT, DispatchWorld, Task
from tests.outbox.test_outbox_kill import sender
from tests.support.child import wait_until

pytestmark = pytest.mark.slow


@pytest.fixture
def standin() -> Iterator[StandIn]:
    with StandIn(world="empty") as server:
        yield server


@pytest.fixture
def ledger(ledger_path: Path) -> Iterator[Ledger]:
    """The ledger on the system clock: the sender in its child process reads the same time."""
    with open_ledger(ledger_path) as opened:
        yield opened


def on_the_card(world: DispatchWorld, standin: StandIn) -> tuple[Task, int]:
    """A mention on the stand-in's card, on a live task; replies go to the same card."""
    project = standin.world.projects[0]
    card = project.recordings[0].id
    world.request(1)
    with world.ledger.write() as connection:
        connection.execute(
            "UPDATE events SET bucket_id = ?, recording_id = ?, reply_bucket_id = ?, reply_recording_id = ?"
            " WHERE id = 1",
            (project.id, card, project.id, card),
        )
    task = world.task(1)
    world.launch(task)
    return task, card


def server_for(task: Task, ledger_path: Path) -> Server:
    server = start(["--ledger", str(ledger_path), "--agent-id", str(AGENT)], environment(**{TOKEN_ENV: task.token}))
    server.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {}})
    return server


def worker_intents(ledger: Ledger) -> list[tuple[str, str, int | None, str]]:
    with ledger.read() as connection:
        return [
            (str(kind), str(state), receipt, str(note))
            for kind, state, receipt, note in connection.execute(
                "SELECT kind, state, receipt_id, note FROM outbox WHERE kind LIKE 'worker_%' ORDER BY id"
            )
        ]


def test_the_workers_words_are_posted_once_each_and_answered_with_their_ids(
    world: DispatchWorld, standin: StandIn, ledger_path: Path
) -> None:
    task, card = on_the_card(world, standin)
    outbox = sender(world.ledger, standin)
    assert outbox.first_line() == "started"
    server = server_for(task, ledger_path)
    try:
        assert not server.call("get_dispatch", event_id=1)[0]
        failed, acked = server.call("ack_dispatch", event_id=1, text="👀 on it")
        assert not failed, acked
        failed, noted = server.call("reply_dispatch", event_id=1, text="Which **branch**?")
        assert not failed, noted
        assert server.call("reply_dispatch", event_id=1, text="Which **branch**?")[1] == noted, "a repeat is one"
        failed, done = server.call(
            "complete_dispatch", event_id=1, outcome="succeeded", reply="Done: [the PR](https://github.com/a/b/pull/1)"
        )
        assert not failed, done
    finally:
        code, errors = server.close()
        outbox.stop()
    assert code == 0, errors
    (boost,) = standin.messages("boost", card)
    note, reply = standin.messages("comment", card)
    assert acked["message"] == {"state": "posted", "kind": "boost", "id": boost["id"]}
    assert noted["message"] == {"state": "posted", "kind": "comment", "id": note["id"]}
    assert done["message"] == {"state": "posted", "kind": "comment", "id": reply["id"]}
    assert "<strong>branch</strong>" in note["content"]
    assert '<a href="https://github.com/a/b/pull/1">the PR</a>' in reply["content"]
    assert (done["ack_id"], done["reply_id"]) == (boost["id"], reply["id"])
    assert (world.row(task, 1)["ack_id"], world.row(task, 1)["reply_id"]) == (boost["id"], reply["id"])
    assert standin.post_count() == 3


def test_the_connector_killed_after_basecamp_created_the_reply_adopts_it_and_posts_nothing(
    world: DispatchWorld, standin: StandIn, ledger_path: Path
) -> None:
    task, card = on_the_card(world, standin)
    standin.add_fault(Fault(action=FaultAction.create_then_delay, method="POST", delay=30.0))
    first = sender(world.ledger, standin)
    server = server_for(task, ledger_path)
    try:
        server.call("get_dispatch", event_id=1)
        failed, done = server.call("complete_dispatch", event_id=1, outcome="succeeded", reply="Done")
    finally:
        server.close()
    assert not failed
    assert done["message"]["state"] == "waiting", "the post outlasted the call's wait"
    wait_until(lambda: len(standin.messages("comment", card)) == 1)
    first.kill()
    assert worker_intents(world.ledger)[0][1] == "sending"

    second = sender(world.ledger, standin)
    wait_until(lambda: worker_intents(world.ledger)[0][1] != "sending")
    second.stop()
    (reply,) = standin.messages("comment", card)
    assert worker_intents(world.ledger) == [("worker_reply", "sent", reply["id"], notes.ADOPTED)]
    assert world.row(task, 1)["reply_id"] == reply["id"]
    assert standin.post_count() == 1


def test_the_connector_killed_after_the_claim_before_the_request_leaves_the_words_indeterminate(
    world: DispatchWorld, standin: StandIn, ledger_path: Path
) -> None:
    task, _ = on_the_card(world, standin)
    first = sender(world.ledger, standin, pause_at="after_claim")
    server = server_for(task, ledger_path)
    try:
        server.call("get_dispatch", event_id=1)
        server.call("ack_dispatch", event_id=1, text="on it")
    finally:
        server.close()
    first.wait_for_stderr("paused at after_claim")
    first.kill()

    second = sender(world.ledger, standin)
    wait_until(lambda: worker_intents(world.ledger)[0][1] != "sending")
    second.stop()
    assert worker_intents(world.ledger) == [("worker_ack", "indeterminate", None, notes.matching_messages(0))]
    assert world.row(task, 1)["ack_id"] is None
    assert standin.post_count() == 0


def test_the_mcp_server_killed_while_a_worker_waits_on_its_post_leaves_one_message(
    world: DispatchWorld, standin: StandIn, ledger_path: Path
) -> None:
    """The call committed, then its server died before answering: the worker asks again through a
    new server, with the same words, and they are still one message."""
    task, card = on_the_card(world, standin)
    server = server_for(task, ledger_path)
    server.call("get_dispatch", event_id=1)
    server.send({
        "jsonrpc": "2.0", "id": 50, "method": "tools/call",
        "params": {"name": "complete_dispatch", "arguments": {"event_id": 1, "outcome": "succeeded", "reply": "Done"}},
    })  # fmt: skip
    wait_until(lambda: len(worker_intents(world.ledger)) == 1)  # committed; the server waits on the post
    server.process.kill()
    server.process.wait(timeout=30)

    outbox = sender(world.ledger, standin)
    again = server_for(task, ledger_path)
    try:
        failed, done = again.call("complete_dispatch", event_id=1, outcome="succeeded", reply="Done")
    finally:
        again.close()
        outbox.stop()
    assert not failed
    (reply,) = standin.messages("comment", card)
    assert done["message"] == {"state": "posted", "kind": "comment", "id": reply["id"]}
    assert standin.post_count() == 1
