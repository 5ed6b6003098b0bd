"""A guard retried after its claim: the rows its claim told "acknowledged" are held true.

At 30 s the guard is claimed and its task rows marked fired. Basecamp answers 401 (after the
refresh), or the connection never opens: the guard goes back to pending, the rows stay fired. The
worker pulls, is told ``guard_acknowledged: true``, and its own "on it" is refused as already done.
The guard's claim rule used to see the row delivered and cancel the guard as "no longer called
for": nobody acknowledged, nobody was told. Now the guard is retried until it lands; one Basecamp
refuses marks its rows refused, and a worker pulling then may acknowledge itself.
"""

from __future__ import annotations

from datetime import timedelta

import pytest

from core import notes
from core.destinations import Destination, MessageKind
from core.dispatch_tools.decisions import AckRequest, GetRequest
from core.resolution import Abandon, Resend
from core.states import GuardState
from core.worker_words import GUARD_FIRED
from shell.clock import FakeClock
from shell.ledger import deliveries, tasks
from shell.ledger.connection import Ledger
from shell.ledger.hold import release, set_hold
from shell.ledger.resolution import resolve_intent
from shell.ledger.status import read_snapshot
from shell.outbox import Outbox, SendResult
from tests.dispatch_tools.world import PROJECT, DispatchWorld, Task
from tests.support.fake_basecamp import FakeBasecamp, Listing, Post

EVENT = 7_301  # never a task's id, nor an attempt's


@pytest.fixture
def dispatch(ledger: Ledger) -> DispatchWorld:
    return DispatchWorld(ledger)


def slow_worker(dispatch: DispatchWorld, clock: FakeClock) -> Task:
    """A mention on a live task whose worker has not pulled when the guard falls due."""
    dispatch.request(EVENT)
    task = dispatch.task(EVENT)
    dispatch.launch(task)
    clock.advance(31)
    return task


def boost() -> Destination:
    return Destination(MessageKind.boost, PROJECT, 1_000_000 + EVENT)


@pytest.mark.parametrize("failure", [Post.unauthorized, Post.not_connected])
def test_a_guard_retried_after_its_claim_lands_though_the_worker_pulled_and_acknowledged_meanwhile(
    dispatch: DispatchWorld, outbox: Outbox, basecamp: FakeBasecamp, clock: FakeClock, failure: Post
) -> None:
    task = slow_worker(dispatch, clock)
    basecamp.posts = [failure]
    basecamp.reachable = False  # the outage goes on: no read succeeds either
    assert outbox.flush().results[0] is SendResult.retry
    assert dispatch.guard_intent(EVENT)[0] == "pending"
    assert dispatch.row(task, EVENT)["guard"] == GuardState.fired

    tools = dispatch.tools(task)
    instruction = tools.get_dispatch(GetRequest(EVENT)).unwrap().instruction
    assert instruction is not None
    assert instruction.guard_acknowledged
    acknowledged = tools.ack_dispatch(AckRequest(EVENT, None, "👀 on it")).unwrap()
    assert acknowledged.words is not None
    assert acknowledged.words.note == GUARD_FIRED

    basecamp.reachable = True  # the outage ends
    clock.advance(31 * 60)
    outbox.flush()
    assert dispatch.guard_intent(EVENT) == ("sent", ""), "the guard the worker was told of went out"
    assert len(basecamp.messages_at(boost())) == 1


def test_a_fired_guard_basecamp_refuses_marks_its_rows_refused_and_the_worker_acknowledges_itself(
    dispatch: DispatchWorld, outbox: Outbox, basecamp: FakeBasecamp, clock: FakeClock
) -> None:
    task = slow_worker(dispatch, clock)
    basecamp.posts = [Post.refuse]
    assert outbox.flush().results[0] is SendResult.refused
    assert dispatch.guard_intent(EVENT) == ("canceled", notes.REFUSED_NOTE)
    assert dispatch.row(task, EVENT)["guard"] == GuardState.refused
    (shown,) = read_snapshot(dispatch.ledger).dispatches
    assert [event.guard for event in shown.events] == ["refused"], "status reads it from the row"

    tools = dispatch.tools(task)
    instruction = tools.get_dispatch(GetRequest(EVENT)).unwrap().instruction
    assert instruction is not None
    assert not instruction.guard_acknowledged
    acknowledged = tools.ack_dispatch(AckRequest(EVENT, None, "👀 on it")).unwrap()
    assert acknowledged.words is not None
    assert acknowledged.words.state != "not_posted"


def guard_id(dispatch: DispatchWorld) -> int:
    with dispatch.ledger.read() as connection:
        return int(connection.execute("SELECT id FROM outbox WHERE kind = 'guard_ack'").fetchone()[0])


def test_a_fired_guard_a_person_abandons_marks_its_rows_abandoned(
    dispatch: DispatchWorld, outbox: Outbox, basecamp: FakeBasecamp, clock: FakeClock
) -> None:
    task = slow_worker(dispatch, clock)
    basecamp.posts = [Post.lost_before_landing]
    basecamp.listings = [Listing.unlistable]
    assert outbox.flush().results[0] is SendResult.uncertain
    clock.advance(61)
    outbox.reconcile()
    assert dispatch.guard_intent(EVENT)[0] == "indeterminate"
    assert dispatch.row(task, EVENT)["guard"] == GuardState.fired, "it may be in Basecamp: still told so"
    resolve_intent(dispatch.ledger, guard_id(dispatch), Abandon("local:test"))
    assert dispatch.row(task, EVENT)["guard"] == GuardState.abandoned


def test_a_refused_guard_a_person_resends_is_canceled_its_worker_answering_for_the_acknowledgement(
    dispatch: DispatchWorld, outbox: Outbox, basecamp: FakeBasecamp, clock: FakeClock
) -> None:
    task = slow_worker(dispatch, clock)
    basecamp.posts = [Post.refuse]
    outbox.flush()
    assert dispatch.row(task, EVENT)["guard"] == GuardState.refused
    tools = dispatch.tools(task)
    tools.get_dispatch(GetRequest(EVENT)).unwrap()  # told to acknowledge; not yet done
    resolve_intent(dispatch.ledger, guard_id(dispatch), Resend("local:test"))
    outbox.flush()
    assert dispatch.guard_intent(EVENT) == ("canceled", notes.NO_LONGER_CALLED_FOR)
    assert basecamp.messages_at(boost()) == [], "never the guard beside the worker's own"


def test_a_task_joining_an_event_whose_fired_guard_waits_for_its_retry_is_told_it_fired(
    dispatch: DispatchWorld, outbox: Outbox, basecamp: FakeBasecamp, clock: FakeClock
) -> None:
    dispatch.request(EVENT)
    first = dispatch.task(EVENT)  # never launched
    clock.advance(31)
    basecamp.posts = [Post.unauthorized]
    basecamp.reachable = False
    outbox.flush()
    with dispatch.ledger.write() as connection:  # superseded unexposed: the record waits for a new task
        stamp = dispatch.now()
        connection.execute("UPDATE tasks SET superseded_at = ?, ended_at = ? WHERE id = ?", (stamp, stamp, first.id))
        connection.execute("UPDATE events SET state = 'admitted' WHERE id = ?", (EVENT,))
        second = connection.execute(
            "INSERT INTO tasks (token_sha256, conversation_key, originating_event_id, created_at)"
            " SELECT ?, conversation_key, id, ? FROM events WHERE id = ?", ("ab" * 32, dispatch.now(), EVENT),
        ).lastrowid
        assert second is not None
        deliveries.join(connection, second, EVENT)
        (guard,) = connection.execute(
            "SELECT guard FROM task_events WHERE task_id = ? AND event_id = ?", (second, EVENT)
        ).fetchone()
    assert guard == GuardState.fired, "told acknowledged, as the guard retried will be"
    basecamp.reachable = True
    outbox.flush()
    assert dispatch.guard_intent(EVENT)[0] == "sent"


def test_a_task_made_after_a_person_abandoned_the_guard_leaves_the_acknowledgement_to_its_worker(
    dispatch: DispatchWorld, outbox: Outbox, basecamp: FakeBasecamp, clock: FakeClock
) -> None:
    """The guard went out uncertain before any task carried the event, and a person abandoned it:
    no guard is, or will be, in Basecamp. A task made then was told it fired (the schema's trigger
    marks a new row fired beside a guard that went out); its row now says abandoned, and its
    worker acknowledges."""
    dispatch.request(EVENT)
    clock.advance(31)
    basecamp.posts = [Post.lost_before_landing]
    basecamp.listings = [Listing.unlistable]
    assert outbox.flush().results[0] is SendResult.uncertain
    clock.advance(61)
    outbox.reconcile()
    resolve_intent(dispatch.ledger, guard_id(dispatch), Abandon("local:test"))
    with dispatch.ledger.write() as connection:
        launch = tasks.launch(connection, EVENT, work_dir="/tmp/w", driver="command",
                              deadline_at=clock.now() + timedelta(hours=1), now=clock.now())
        (guard,) = connection.execute(
            "SELECT guard FROM task_events WHERE task_id = ? AND event_id = ?", (launch.task_id, EVENT)
        ).fetchone()
    assert guard == GuardState.abandoned, "the row says what became of the guard, never that it fired"
    (shown,) = read_snapshot(dispatch.ledger).dispatches
    assert [event.guard for event in shown.events] == ["abandoned"], "status reads it from the row"

    tools = dispatch.tools(Task(launch.task_id, launch.token))
    instruction = tools.get_dispatch(GetRequest(EVENT)).unwrap().instruction
    assert instruction is not None
    assert instruction.acknowledge
    assert not instruction.guard_acknowledged
    acknowledged = tools.ack_dispatch(AckRequest(EVENT, None, "👀 on it")).unwrap()
    assert acknowledged.words is not None
    assert acknowledged.words.state != "not_posted"


def test_a_hold_leaves_a_guard_its_claim_fired_rows_for_pending_and_it_lands_after_the_release(
    dispatch: DispatchWorld, outbox: Outbox, basecamp: FakeBasecamp, clock: FakeClock, ledger: Ledger
) -> None:
    """A hold cancels the guards of waiting records before they went out; one whose claim told a
    row "acknowledged" went out as far as that row knows, and is held to it."""
    dispatch.request(EVENT)
    task = dispatch.task(EVENT)  # its launch never exposed the instruction
    clock.advance(31)
    basecamp.posts = [Post.unauthorized]
    basecamp.reachable = False
    assert outbox.flush().results[0] is SendResult.retry
    dispatch.supersede(task)  # the record waits to be dispatched again
    with ledger.write() as connection:
        connection.execute("UPDATE events SET state = 'admitted' WHERE id = ?", (EVENT,))

    held = set_hold(ledger, "local:test", "a look", clock.now())
    assert held.canceled_intents == ()
    assert dispatch.guard_intent(EVENT)[0] == "pending"
    assert dispatch.row(task, EVENT)["guard"] == GuardState.fired

    release(ledger, "local:test", clock.now())
    basecamp.reachable = True
    clock.advance(31 * 60)
    outbox.flush()
    assert dispatch.guard_intent(EVENT) == ("sent", "")
    assert len(basecamp.messages_at(boost())) == 1
