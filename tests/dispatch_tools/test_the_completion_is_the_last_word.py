"""A worker's words around its attempt's end, on a real ledger, through the real client and outbox
against the stand-in over real HTTP.

A note whose POST was answered 408 waits its 30 s retry while the attempt ends: the completion
notice, due at once, used to go first and the note ("Which branch should I use?") land after it.
A reply still waiting when the attempt ended calls for no completion line; when Basecamp then
refused it (422), no notice ever named the event, though it succeeded without a reply.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from core import notes
from core.dispatch_tools.decisions import AckRequest, CompleteRequest, Completion, GetRequest, ReplyRequest
from core.edges import IntentState
from core.resolution import Abandon, Resend
from core.snapshots import StopReason
from core.text import message_text
from core.timestamps import parse_timestamp
from shell.basecamp.client import BasecampClient
from shell.basecamp.standin.faults import Fault, FaultAction, RateLimit
from shell.basecamp.standin.server import StandIn
from shell.cli.run import USER_AGENT
from shell.clock import FakeClock
from shell.ledger import outbox as ledger_outbox
from shell.ledger import tasks
from shell.ledger.resolution import resolve_intent
from shell.outbox import Outbox, SendResult
from tests.dispatch_tools.world import DispatchWorld, Task

EVENT = 7_351  # never a task's id
OTHER_EVENT = 7_352
ELSEWHERE = 7_353  # an event of another task, on another card


@pytest.fixture
def standin() -> Iterator[StandIn]:
    with StandIn(world="demo", rate_limit=RateLimit(0)) as server:  # its own 429s are not the matter here
        yield server


@pytest.fixture
def outbox(world: DispatchWorld, standin: StandIn, clock: FakeClock) -> Outbox:
    client = BasecampClient(standin.base_url, standin.world.account_id, standin.world.token, USER_AGENT, clock=clock)
    return Outbox(world.ledger, client, standin.world.agent.id)


def on_the_card(world: DispatchWorld, standin: StandIn, *event_ids: int, card_index: int = 0) -> tuple[Task, int]:
    """Mentions on a card of the stand-in's, one live task carrying them; replies go to the same card."""
    project = standin.world.projects[0]
    card = project.recordings[card_index].id
    for event_id in event_ids:
        world.request(event_id, conversation=f"recording:{card}")
        with world.ledger.write() as connection:
            connection.execute(
                "UPDATE events SET bucket_id = ?, recording_id = ?, reply_bucket_id = ?, reply_recording_id = ?"
                " WHERE id = ?",
                (project.id, card, project.id, card, event_id),
            )
            connection.execute("UPDATE outbox SET bucket_id = ?, recording_id = ? WHERE event_id = ?",
                               (project.id, card, event_id))
    task = world.task(*event_ids)
    world.launch(task)
    return task, card


def end(world: DispatchWorld, task: Task, clock: FakeClock) -> None:
    with world.ledger.write() as connection:
        (attempt_id,) = connection.execute("SELECT id FROM attempts WHERE task_id = ?", (task.id,)).fetchone()
        tasks.end_attempt(connection, attempt_id, StopReason.finished, spawn_failed=False, now=clock.now())


def comments(standin: StandIn, card: int) -> list[str]:
    shown: list[dict[str, Any]] = standin.messages("comment", card)
    return [message_text(str(message["content"])) for message in sorted(shown, key=lambda m: int(m["id"]))]


def intent_states(world: DispatchWorld) -> dict[str, tuple[str, str]]:
    with world.ledger.read() as connection:
        return {str(kind): (str(state), str(note))
                for kind, state, note in connection.execute("SELECT kind, state, note FROM outbox ORDER BY id")}


def test_a_note_waiting_its_retry_as_the_attempt_ends_lands_before_the_completion_notice(
    world: DispatchWorld, standin: StandIn, outbox: Outbox, clock: FakeClock
) -> None:
    task, card = on_the_card(world, standin, EVENT)
    tools = world.tools(task)
    tools.get_dispatch(GetRequest(EVENT)).unwrap()
    tools.reply_dispatch(ReplyRequest(EVENT, "Which branch should I use?")).unwrap()
    standin.add_fault(Fault(FaultAction.refuse, method="POST", status=408))
    assert outbox.flush().results[0] is SendResult.retry
    assert intent_states(world)["worker_note"] == ("pending", notes.REQUEST_TIMEOUT)

    tools.complete_dispatch(CompleteRequest(EVENT, Completion("failed"))).unwrap()
    end(world, task, clock)
    outbox.flush()
    assert intent_states(world)["completion"][0] == "pending", "held back behind the note"
    clock.advance(31)
    for _ in range(3):
        outbox.flush()
    said = comments(standin, card)
    assert said[0] == "Which branch should I use?"
    assert said[-1].startswith(f"Task {task.id} ended"), f"the completion notice is the last word: {said}"
    assert len(said) == 2


def test_an_acknowledgement_waiting_its_retry_lands_before_the_reply(
    world: DispatchWorld, standin: StandIn, outbox: Outbox, clock: FakeClock
) -> None:
    task, card = on_the_card(world, standin, EVENT)
    tools = world.tools(task)
    tools.get_dispatch(GetRequest(EVENT)).unwrap()
    tools.ack_dispatch(AckRequest(EVENT, None, "Looking into the login page now, one moment.")).unwrap()
    standin.add_fault(Fault(FaultAction.refuse, method="POST", status=408))
    outbox.flush()
    tools.complete_dispatch(CompleteRequest(EVENT, Completion("succeeded", reply="Done: the login page works."))).unwrap()
    outbox.flush()
    assert intent_states(world)["worker_reply"][0] == "pending", "held back behind the acknowledgement"
    clock.advance(31)
    for _ in range(3):
        outbox.flush()
    assert comments(standin, card) == ["Looking into the login page now, one moment.", "Done: the login page works."]


def test_a_reply_basecamp_refuses_after_the_attempt_ended_is_named_by_a_completion_notice(
    world: DispatchWorld, standin: StandIn, outbox: Outbox, clock: FakeClock
) -> None:
    task, card = on_the_card(world, standin, EVENT)
    tools = world.tools(task)
    tools.get_dispatch(GetRequest(EVENT)).unwrap()
    tools.complete_dispatch(CompleteRequest(EVENT, Completion("succeeded", reply="Done: the login page works."))).unwrap()
    end(world, task, clock)
    assert "completion" not in intent_states(world), "the reply on its way is the event's answer"
    standin.add_fault(Fault(FaultAction.refuse, method="POST", status=422))
    for _ in range(2):
        outbox.flush()
    assert intent_states(world)["worker_reply"] == ("canceled", notes.REFUSED_NOTE)
    assert intent_states(world)["completion"] == ("sent", "")
    (notice,) = comments(standin, card)
    assert f"Event {EVENT}: succeeded, but its reply could not be posted." in notice


def test_a_reply_given_up_after_the_attempt_ended_is_named_by_a_completion_notice(
    world: DispatchWorld, standin: StandIn, outbox: Outbox, clock: FakeClock
) -> None:
    task, card = on_the_card(world, standin, EVENT)
    tools = world.tools(task)
    tools.get_dispatch(GetRequest(EVENT)).unwrap()
    tools.complete_dispatch(CompleteRequest(EVENT, Completion("succeeded", reply="Done: the login page works."))).unwrap()
    end(world, task, clock)
    standin.add_fault(Fault(FaultAction.refuse, method="POST", status=408, times=None))
    for _ in range(80):  # each try as it falls due, Basecamp answering 408 for over 24 h
        outbox.flush()
        if intent_states(world)["worker_reply"][0] != "pending":
            break
        with world.ledger.read() as connection:
            (due,) = connection.execute("SELECT not_before FROM outbox WHERE kind = 'worker_reply'").fetchone()
        clock.advance(max(0.0, (parse_timestamp(due) - clock.now()).total_seconds()))
    assert intent_states(world)["worker_reply"] == ("canceled", notes.given_up(notes.REQUEST_TIMEOUT))
    assert intent_states(world)["completion"][0] == "pending", "written, and met the 408s too"
    standin.clear_faults()
    clock.advance(31)
    outbox.flush()
    (notice,) = comments(standin, card)
    assert f"Event {EVENT}: succeeded, but its reply could not be posted." in notice


def test_a_reply_refused_while_the_completion_waits_is_named_in_it(
    world: DispatchWorld, standin: StandIn, outbox: Outbox, clock: FakeClock
) -> None:
    """The completion, written at the end for another event, is re-rendered while still pending."""
    task, card = on_the_card(world, standin, EVENT, OTHER_EVENT)
    tools = world.tools(task)
    for event_id in (EVENT, OTHER_EVENT):
        tools.get_dispatch(GetRequest(event_id)).unwrap()
    tools.complete_dispatch(CompleteRequest(EVENT, Completion("succeeded", reply="Done: the login page works."))).unwrap()
    tools.complete_dispatch(CompleteRequest(OTHER_EVENT, Completion("failed"))).unwrap()
    end(world, task, clock)
    assert intent_states(world)["completion"][0] == "pending"
    standin.add_fault(Fault(FaultAction.refuse, method="POST", status=422))
    for _ in range(2):
        outbox.flush()
    (notice,) = comments(standin, card)
    assert f"Event {EVENT}: succeeded, but its reply could not be posted." in notice
    assert f"Event {OTHER_EVENT}: failed." in notice


def intent_ids(world: DispatchWorld) -> dict[tuple[int, str], int]:
    with world.ledger.read() as connection:
        return {(int(task_id), str(kind)): int(identifier) for identifier, task_id, kind
                in connection.execute("SELECT id, task_id, kind FROM outbox WHERE task_id IS NOT NULL")}


def waiting(world: DispatchWorld, intent_id: int) -> bool:
    with world.ledger.read() as connection:
        row = ledger_outbox.intent(connection, intent_id)
        assert row is not None
        return ledger_outbox.claim_snapshot(connection, row).earlier_words_waiting


def moved(world: DispatchWorld, intent_id: int, state: str) -> None:
    """The intent walked to ``state`` along its edges, as the outbox and a person move it."""
    now = world.ledger.clock.now()
    with world.ledger.write() as connection:
        if state == "canceled":
            ledger_outbox.cancel(connection, intent_id, IntentState.pending, notes.REFUSED_NOTE, now)
        if state in ("sending", "sent", "indeterminate", "abandoned"):
            ledger_outbox.claim(connection, intent_id, now)
        if state == "sent":
            ledger_outbox.record_receipt(connection, intent_id, 9_901, "", now)
        if state in ("indeterminate", "abandoned"):
            ledger_outbox.make_indeterminate(connection, intent_id, notes.UNLISTABLE, now)
    if state == "abandoned":
        resolve_intent(world.ledger, intent_id, Abandon("local:test"))


@pytest.mark.parametrize(("state", "held"), [("pending", True), ("sending", True), ("sent", False),
                                             ("canceled", False), ("indeterminate", False), ("abandoned", False)])
def test_the_claim_reads_whether_an_earlier_word_of_the_same_task_has_not_landed(
    world: DispatchWorld, standin: StandIn, state: str, held: bool
) -> None:
    task, _ = on_the_card(world, standin, EVENT)
    other, _ = on_the_card(world, standin, ELSEWHERE, card_index=1)
    tools, others = world.tools(task), world.tools(other)
    tools.get_dispatch(GetRequest(EVENT)).unwrap()
    others.get_dispatch(GetRequest(ELSEWHERE)).unwrap()
    tools.reply_dispatch(ReplyRequest(EVENT, "Which branch should I use?")).unwrap()
    others.reply_dispatch(ReplyRequest(ELSEWHERE, "A note elsewhere.")).unwrap()
    tools.complete_dispatch(CompleteRequest(EVENT, Completion("succeeded", reply="Done."))).unwrap()
    ids = intent_ids(world)
    note, reply = ids[(task.id, "worker_note")], ids[(task.id, "worker_reply")]
    assert not waiting(world, note), "nothing of its task before it"
    assert not waiting(world, ids[(other.id, "worker_note")]), "another task's words hold nothing back"
    moved(world, note, state)
    assert waiting(world, reply) is held


def test_a_word_held_back_counts_toward_no_flush_limit(
    world: DispatchWorld, standin: StandIn, outbox: Outbox, clock: FakeClock
) -> None:
    task, card = on_the_card(world, standin, EVENT)
    other, elsewhere = on_the_card(world, standin, ELSEWHERE, card_index=1)
    tools, others = world.tools(task), world.tools(other)
    tools.get_dispatch(GetRequest(EVENT)).unwrap()
    others.get_dispatch(GetRequest(ELSEWHERE)).unwrap()
    tools.reply_dispatch(ReplyRequest(EVENT, "Which branch should I use?")).unwrap()
    standin.add_fault(Fault(FaultAction.refuse, method="POST", status=408))
    outbox.flush()  # the note waits its retry
    tools.complete_dispatch(CompleteRequest(EVENT, Completion("succeeded", reply="Done."))).unwrap()
    others.reply_dispatch(ReplyRequest(ELSEWHERE, "A note elsewhere.")).unwrap()
    assert outbox.flush(limit=1).results == [SendResult.held_back, SendResult.sent]
    assert comments(standin, elsewhere) == ["A note elsewhere."]
    assert comments(standin, card) == []


def test_a_completion_notice_already_sent_is_never_rewritten(
    world: DispatchWorld, standin: StandIn, outbox: Outbox, clock: FakeClock
) -> None:
    """A reply left indeterminate lets the completion go; a person resends the reply, Basecamp
    refuses it: the notice in Basecamp keeps its words, and so does its intent."""
    task, card = on_the_card(world, standin, EVENT, OTHER_EVENT)
    tools = world.tools(task)
    for event_id in (EVENT, OTHER_EVENT):
        tools.get_dispatch(GetRequest(event_id)).unwrap()
    tools.complete_dispatch(CompleteRequest(EVENT, Completion("succeeded", reply="Done: the login page works."))).unwrap()
    tools.complete_dispatch(CompleteRequest(OTHER_EVENT, Completion("failed"))).unwrap()
    end(world, task, clock)
    standin.add_fault(Fault(FaultAction.drop_without_create, method="POST"))
    outbox.flush()
    clock.advance(61)
    outbox.reconcile()
    assert intent_states(world)["worker_reply"][0] == "indeterminate"
    outbox.flush()
    (notice,) = comments(standin, card)
    reply = intent_ids(world)[(task.id, "worker_reply")]
    resolve_intent(world.ledger, reply, Resend("local:test"))
    standin.add_fault(Fault(FaultAction.refuse, method="POST", status=422))
    outbox.flush()
    assert intent_states(world)["worker_reply"] == ("canceled", notes.REFUSED_NOTE)
    with world.ledger.read() as connection:
        (body,) = connection.execute("SELECT body FROM outbox WHERE kind = 'completion'").fetchone()
    assert message_text(str(body)) == notice == comments(standin, card)[0]
    assert "could not be posted" not in notice


def test_a_refused_reply_a_person_resends_is_taken_out_of_the_completion_notice_still_waiting(
    world: DispatchWorld, standin: StandIn, outbox: Outbox, clock: FakeClock
) -> None:
    """The notice that named the refused reply waits its own retry; a person resends the reply: the
    notice, read again, no longer says it could not be posted, and goes after the reply."""
    task, card = on_the_card(world, standin, EVENT)
    tools = world.tools(task)
    tools.get_dispatch(GetRequest(EVENT)).unwrap()
    tools.complete_dispatch(CompleteRequest(EVENT, Completion("succeeded", reply="Done: the login page works."))).unwrap()
    end(world, task, clock)
    standin.add_fault(Fault(FaultAction.refuse, method="POST", status=422))
    standin.add_fault(Fault(FaultAction.refuse, method="POST", status=408))
    outbox.flush()
    assert intent_states(world)["completion"] == ("pending", notes.REQUEST_TIMEOUT)
    resolve_intent(world.ledger, intent_ids(world)[(task.id, "worker_reply")], Resend("local:test"))
    clock.advance(31)
    for _ in range(2):
        outbox.flush()
    reply, notice = comments(standin, card)
    assert reply == "Done: the login page works."
    assert notice.startswith(f"Task {task.id} ended: the worker finished.")
    assert "could not be posted" not in notice


def test_a_completion_held_back_goes_in_the_same_flush_once_the_word_before_it_lands(
    world: DispatchWorld, standin: StandIn, outbox: Outbox, clock: FakeClock
) -> None:
    """A shutdown's one flush posts what its bound allows: a notice passed over while the word
    before it waited is looked at again once that word has gone."""
    task, card = on_the_card(world, standin, EVENT)
    tools = world.tools(task)
    tools.get_dispatch(GetRequest(EVENT)).unwrap()
    tools.reply_dispatch(ReplyRequest(EVENT, "Which branch should I use?")).unwrap()
    standin.add_fault(Fault(FaultAction.refuse, method="POST", status=408))
    assert outbox.flush().results[0] is SendResult.retry  # the note waits its retry
    tools.complete_dispatch(CompleteRequest(EVENT, Completion("failed"))).unwrap()
    end(world, task, clock)  # the completion is due before the note's retry
    clock.advance(3600)  # both long due: the older due, the completion, is looked at first
    results = outbox.flush(deadline=clock.monotonic() + 60).results
    assert results.count(SendResult.sent) == 2, results
    said = comments(standin, card)
    assert said[0] == "Which branch should I use?"
    assert said[-1].startswith(f"Task {task.id} ended")
