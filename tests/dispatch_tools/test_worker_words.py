"""A worker's words through the connector: the tools' transactions on a real
SQLite file, then the real outbox (``shell.outbox``) against a Basecamp with behaviour."""

from __future__ import annotations

import sqlite3
from datetime import timedelta
from typing import Any

import pytest

from core.destinations import Destination, MessageKind
from core.dispatch_tools import MAX_MESSAGE_CHARACTERS, MAX_NOTES
from core.dispatch_tools.decisions import AckRequest, CompleteRequest, Completion, GetRequest, ReplyRequest
from core.dispatch_tools.instruction import DeliveryReceipt
from core.intent_kinds import IntentKind
from core.resolution import Sent
from core.snapshots import StopReason
from core.worker_words import WAITING_NOTE
from shell.clock import FakeClock
from shell.ledger import outbox as ledger_outbox
from shell.ledger import tasks, worker_moves
from shell.ledger.resolution import resolve_intent
from shell.ledger.worker_calls import DispatchLedger
from shell.outbox import Outbox
from tests.dispatch_tools.world import PROJECT, DispatchWorld, Task
from tests.support.fake_basecamp import AGENT_ID, FakeBasecamp, Post

CARD = 1_000_001  # the recording DispatchWorld.request(1) asks on; its reply destination too


def pulled(world: DispatchWorld, **request: Any) -> tuple[Task, DispatchLedger]:
    world.request(1, **request)
    task = world.task(1)
    world.launch(task)
    tools = DispatchLedger(world.ledger, task.token, None, words_wait=0)
    tools.get_dispatch(GetRequest(1)).unwrap()
    return task, tools


def words(world: DispatchWorld) -> list[tuple[str, str, str, str, int, str]]:
    with world.ledger.read() as connection:
        return [
            (str(kind), str(state), str(message_kind), str(body), int(recording), str(key))
            for kind, state, message_kind, body, recording, key in connection.execute(
                "SELECT kind, state, message_kind, body, recording_id, intent_key FROM outbox"
                " WHERE kind LIKE 'worker_%' ORDER BY id"
            )
        ]


def outbox(world: DispatchWorld, basecamp: FakeBasecamp) -> Outbox:
    return Outbox(world.ledger, basecamp, AGENT_ID)


def test_an_acknowledgement_in_a_few_words_is_a_boost_written_with_the_move_to_delivered(
    world: DispatchWorld,
) -> None:
    task, tools = pulled(world)
    receipt = tools.ack_dispatch(AckRequest(1, None, "👀 on it")).unwrap()
    assert receipt.delivery == "delivered"
    assert receipt.to_json()["message"] == {"state": "waiting", "kind": "boost", "note": WAITING_NOTE}
    assert words(world) == [("worker_ack", "pending", "boost", "👀 on it", CARD, f"worker_ack:task:{task.id}:event:1")]


def test_a_longer_acknowledgement_is_a_comment_in_basecamps_rich_text(world: DispatchWorld) -> None:
    _, tools = pulled(world)
    tools.ack_dispatch(AckRequest(1, None, "Looking at the **login** page now")).unwrap()
    ((kind, _, message_kind, body, recording, _),) = words(world)
    assert (kind, message_kind, recording) == ("worker_ack", "comment", CARD)
    assert body == "<div>Looking at the <strong>login</strong> page now</div>"


def test_a_repeated_call_is_one_message_and_other_words_are_a_second_acknowledgement(world: DispatchWorld) -> None:
    _, tools = pulled(world)
    first = tools.ack_dispatch(AckRequest(1, None, "on it")).unwrap()
    assert tools.ack_dispatch(AckRequest(1, None, "on it")).unwrap() == first
    refused = tools.ack_dispatch(AckRequest(1, None, "working on it")).failure()
    assert refused.kind == "report_conflict"
    assert tools.ack_dispatch(AckRequest(1, 555, None)).failure().kind == "report_conflict"
    assert len(words(world)) == 1


def test_the_words_are_written_in_the_calls_own_transaction(
    world: DispatchWorld, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Invariant 1 for the worker's words: the intent and the move it reports commit together."""
    task, tools = pulled(world)

    def fails(*_: object) -> None:
        raise sqlite3.OperationalError("disk I/O error")

    monkeypatch.setattr(worker_moves, "record_progress", fails)
    with pytest.raises(sqlite3.OperationalError):
        tools.ack_dispatch(AckRequest(1, None, "on it"))
    assert words(world) == []
    assert world.row(task, 1)["delivery"] == "exposed"


def test_a_guard_that_already_fired_leaves_the_workers_acknowledgement_unposted(world: DispatchWorld) -> None:
    world.request(1)
    task = world.task(1)
    world.claim_guard(1)
    tools = DispatchLedger(world.ledger, task.token, None, words_wait=0)
    tools.get_dispatch(GetRequest(1)).unwrap()
    receipt = tools.ack_dispatch(AckRequest(1, None, "on it")).unwrap()
    assert receipt.delivery == "delivered"
    assert receipt.to_json()["message"]["state"] == "not_posted"
    assert words(world) == []


def test_a_request_that_asked_for_no_acknowledgement_gets_none(world: DispatchWorld) -> None:
    _, tools = pulled(world, acknowledge=False)
    assert tools.ack_dispatch(AckRequest(1, None, "on it")).unwrap().to_json()["message"]["state"] == "not_posted"
    assert words(world) == []


def test_too_long_or_empty_words_are_refused_with_the_bound_and_nothing_is_written(world: DispatchWorld) -> None:
    task, tools = pulled(world)
    too_long = tools.complete_dispatch(
        CompleteRequest(1, Completion("succeeded", reply="x" * (MAX_MESSAGE_CHARACTERS + 1)))
    ).failure()
    assert too_long.kind == "invalid_message"
    assert str(MAX_MESSAGE_CHARACTERS) in too_long.message
    assert tools.reply_dispatch(ReplyRequest(1, "   ")).failure().kind == "invalid_message"
    assert words(world) == []
    assert world.row(task, 1)["delivery"] == "exposed"


def test_notes_are_one_message_per_text_bounded_per_event_and_end_at_completion(world: DispatchWorld) -> None:
    _, tools = pulled(world)
    for number in range(MAX_NOTES):
        tools.reply_dispatch(ReplyRequest(1, f"note {number}")).unwrap()
    tools.reply_dispatch(ReplyRequest(1, "note 0")).unwrap()  # a repeat: the same message
    assert len(words(world)) == MAX_NOTES
    assert tools.reply_dispatch(ReplyRequest(1, "one more")).failure().kind == "invalid_message"
    tools.complete_dispatch(CompleteRequest(1, Completion("succeeded"))).unwrap()
    assert tools.reply_dispatch(ReplyRequest(1, "after")).failure().kind == "report_conflict"


def test_the_outbox_posts_each_once_and_records_its_id_as_the_events_ack_and_reply(world: DispatchWorld) -> None:
    task, tools = pulled(world)
    tools.ack_dispatch(AckRequest(1, None, "on it")).unwrap()
    tools.reply_dispatch(ReplyRequest(1, "Which branch?")).unwrap()
    tools.complete_dispatch(CompleteRequest(1, Completion("succeeded", reply="Done: [PR](https://x.y/1)"))).unwrap()
    basecamp = FakeBasecamp(world.ledger.clock)
    assert outbox(world, basecamp).flush().count("sent") == 3  # type: ignore[arg-type]
    assert outbox(world, basecamp).flush().count("sent") == 0  # type: ignore[arg-type]
    assert basecamp.post_count() == 3
    (boost,) = basecamp.messages_at(Destination(MessageKind.boost, PROJECT, CARD))
    note, answer = basecamp.messages_at(Destination(MessageKind.comment, PROJECT, CARD))
    assert (boost.text, note.text, answer.text) == ("on it", "Which branch?", "Done: PR")
    row = world.row(task, 1)
    assert (row["ack_id"], row["reply_id"]) == (boost.id, answer.id)
    again = tools.complete_dispatch(CompleteRequest(1, Completion("succeeded", reply="Done: [PR](https://x.y/1)")))
    assert again.unwrap().reply_id == answer.id, "the same report again answers the same receipt"


def test_the_call_answers_the_messages_id_when_the_outbox_posts_it_within_the_wait(
    world: DispatchWorld, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    task, _ = pulled(world)
    tools = DispatchLedger(world.ledger, task.token, None, words_wait=5)
    basecamp = FakeBasecamp(clock)
    sender = outbox(world, basecamp)
    waited = clock.sleep

    def connector_runs(seconds: float) -> None:  # the connector's outbox ticks while the call waits
        waited(seconds)
        sender.flush()

    monkeypatch.setattr(clock, "sleep", connector_runs)
    receipt: DeliveryReceipt = tools.ack_dispatch(AckRequest(1, None, "on it")).unwrap()
    (boost,) = basecamp.messages_at(Destination(MessageKind.boost, PROJECT, CARD))
    assert receipt.to_json()["message"] == {"state": "posted", "kind": "boost", "id": boost.id}
    assert receipt.ack_id == boost.id


def test_reconciliation_adopting_a_workers_reply_records_it_as_the_reply(world: DispatchWorld, clock: FakeClock) -> None:
    task, tools = pulled(world)
    tools.complete_dispatch(CompleteRequest(1, Completion("succeeded", reply="Done"))).unwrap()
    basecamp = FakeBasecamp(clock, posts=[Post.lost_after_landing])
    sender = outbox(world, basecamp)
    assert sender.flush().count("uncertain") == 1  # type: ignore[arg-type]
    clock.advance(120)
    sender.reconcile()
    (answer,) = basecamp.messages_at(Destination(MessageKind.comment, PROJECT, CARD))
    assert world.row(task, 1)["reply_id"] == answer.id
    assert basecamp.post_count() == 1


def test_a_person_marking_a_workers_reply_sent_records_it_as_the_reply(world: DispatchWorld, clock: FakeClock) -> None:
    task, tools = pulled(world)
    tools.complete_dispatch(CompleteRequest(1, Completion("succeeded", reply="Done"))).unwrap()
    basecamp = FakeBasecamp(clock, posts=[Post.lost_before_landing])
    sender = outbox(world, basecamp)
    sender.flush()
    clock.advance(120)
    sender.reconcile()
    ((_, state, *_),) = words(world)
    assert state == "indeterminate"
    with world.ledger.read() as connection:
        (intent_id,) = connection.execute("SELECT id FROM outbox WHERE kind = 'worker_reply'").fetchone()
    resolve_intent(world.ledger, intent_id, Sent(receipt_id=777, by="local:test"))
    assert world.row(task, 1)["reply_id"] == 777


def test_a_reply_on_its_way_is_a_reply_to_the_completion_notice(world: DispatchWorld, clock: FakeClock) -> None:
    """A worker's reply is never "with no reply reported" for want of its id: the attempt ending
    before the outbox posted it calls for no notice."""
    task, tools = pulled(world)
    tools.complete_dispatch(CompleteRequest(1, Completion("succeeded", reply="Done"))).unwrap()
    with world.ledger.write() as connection:
        (attempt_id,) = connection.execute("SELECT id FROM attempts WHERE task_id = ?", (task.id,)).fetchone()
        tasks.end_attempt(connection, attempt_id, StopReason.finished, spawn_failed=False, now=clock.now())
    with world.ledger.read() as connection:
        kinds = [str(kind) for (kind,) in connection.execute("SELECT kind FROM outbox ORDER BY id")]
    assert IntentKind.completion not in kinds


def test_an_ack_id_is_recorded_only_as_its_own_worker_intents_receipt(world: DispatchWorld) -> None:
    """Migration 15's trigger: an ack id no worker reported and no worker intent received is refused."""
    task, tools = pulled(world)
    tools.ack_dispatch(AckRequest(1, None, "on it")).unwrap()
    with world.ledger.write() as connection, pytest.raises(sqlite3.IntegrityError, match="acknowledgement id"):
        connection.execute("UPDATE task_events SET ack_id = 999 WHERE task_id = ?", (task.id,))


def test_the_adopted_reply_rule_leaves_the_workers_posted_words_out(world: DispatchWorld, clock: FakeClock) -> None:
    """The adopted-reply rule's lifecycle filter reads the destination's intents: a worker's words
    posted through the outbox are among them, as the connector's own notices are."""
    _, tools = pulled(world)
    tools.reply_dispatch(ReplyRequest(1, "Which branch?")).unwrap()
    outbox(world, FakeBasecamp(clock)).flush()
    with world.ledger.read() as connection:
        receipts, bodies = ledger_outbox.lifecycle_at(connection, Destination(MessageKind.comment, PROJECT, CARD))
    assert len(receipts) == 1
    assert bodies == ["<div>Which branch?</div>"]


def test_a_workers_words_go_after_the_guard_and_before_the_connectors_notices() -> None:
    """What a person waits for first: the acknowledgement beside the guard; the reply and notes,
    one tier oldest first, before the completion and still-running notices."""
    from core.message_kinds import KINDS

    def rank(kind: IntentKind) -> int:
        return KINDS[kind].urgency

    assert rank(IntentKind.worker_ack) == rank(IntentKind.guard_ack) < rank(IntentKind.holding_reply)
    assert rank(IntentKind.holding_reply) < rank(IntentKind.worker_reply) == rank(IntentKind.worker_note)
    assert rank(IntentKind.worker_note) < rank(IntentKind.completion) < rank(IntentKind.still_running)


def test_reconciliation_counts_a_workers_words_among_the_rivals(world: DispatchWorld, clock: FakeClock) -> None:
    """A note and a reply in the same words at one destination, one created, one not: the listing
    cannot tell whose the message is, so neither is adopted (invariant 5's rivals). The reply waits
    behind the note in doubt, a rival of it all the same, and is claimed once the note is settled."""
    task, tools = pulled(world)
    tools.reply_dispatch(ReplyRequest(1, "Done")).unwrap()
    tools.complete_dispatch(CompleteRequest(1, Completion("succeeded", reply="Done"))).unwrap()
    basecamp = FakeBasecamp(clock, posts=[Post.lost_after_landing, Post.lost_before_landing])
    sender = outbox(world, basecamp)
    for _ in range(2):
        assert sender.flush().count("uncertain") == 1  # type: ignore[arg-type]
        clock.advance(120)
        sender.reconcile()
    assert [state for _, state, *_ in words(world)] == ["indeterminate", "indeterminate"]
    assert world.row(task, 1)["reply_id"] is None
    assert basecamp.post_count() == 2


def _settled_after_a_note(world: DispatchWorld, clock: FakeClock, *, own_reply: bool) -> dict[str, Any]:
    """A worker that acknowledged, said a note through the connector (and, with ``own_reply``,
    replied with a tool of its own), then ended without reporting; its attempt settled with the
    reply destination listed, as the dispatcher lists it."""
    from core.settlement import ListedReplies

    task, tools = pulled(world)
    tools.ack_dispatch(AckRequest(1, None, "on it")).unwrap()
    clock.advance(1)
    tools.reply_dispatch(ReplyRequest(1, "Which branch?")).unwrap()
    basecamp = FakeBasecamp(clock)
    outbox(world, basecamp).flush()
    comments = Destination(MessageKind.comment, PROJECT, CARD)
    if own_reply:
        basecamp.seed(comments, "Done, on main.")
    clock.advance(1)
    listed = tuple(basecamp.list(comments, clock.now() - timedelta(hours=1), AGENT_ID, 0.0))
    with world.ledger.write() as connection:
        (attempt_id,) = connection.execute("SELECT id FROM attempts WHERE task_id = ?", (task.id,)).fetchone()
        tasks.end_attempt(
            connection, attempt_id, StopReason.finished, spawn_failed=False, now=clock.now(),
            replies=ListedReplies(AGENT_ID, {1: listed}),
        )  # fmt: skip
    return world.row(task, 1)


def test_the_adopted_reply_rule_never_adopts_a_workers_words_the_connector_posted(
    world: DispatchWorld, clock: FakeClock
) -> None:
    """A note posted through the outbox is treated as the connector's own notices are: never the
    worker's unreported reply; a message the worker posted by other means still is."""
    assert _settled_after_a_note(world, clock, own_reply=False)["adopted_reply_id"] is None


def test_a_reply_the_worker_posted_itself_is_still_adopted_beside_its_note(
    world: DispatchWorld, clock: FakeClock
) -> None:
    assert _settled_after_a_note(world, clock, own_reply=True)["adopted_reply_id"] is not None


EVENT_APART = 70_001  # an event id no task id of this ledger reaches: a read with the two swapped finds nothing


def test_a_call_reads_back_the_words_of_its_own_event_and_task_not_the_ids_swapped(world: DispatchWorld) -> None:
    """The words a call already wrote are found by (event, task): with ids from distinct ranges, a
    read with the two swapped sees none, so the notes' bound and a repeated reply would not hold."""
    world.request(EVENT_APART)
    task = world.task(EVENT_APART)
    world.launch(task)
    assert task.id != EVENT_APART
    tools = DispatchLedger(world.ledger, task.token, None, words_wait=0)
    tools.get_dispatch(GetRequest(EVENT_APART)).unwrap()
    for number in range(MAX_NOTES):
        tools.reply_dispatch(ReplyRequest(EVENT_APART, f"note {number}")).unwrap()
    assert tools.reply_dispatch(ReplyRequest(EVENT_APART, "one more")).failure().kind == "invalid_message"
    reply = CompleteRequest(EVENT_APART, Completion("succeeded", reply="Done"))
    first = tools.complete_dispatch(reply).unwrap()
    assert tools.complete_dispatch(reply).unwrap() == first, "the same report again is the same message"
    assert len(words(world)) == MAX_NOTES + 1
