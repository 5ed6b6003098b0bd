"""Still-running notices stand down when their work was reported, and a restart leaves them to
recovery; found in review, each a test that failed before its fix."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from core.destinations import Destination, MessageKind
from shell.connector import StartParts, settle_previous
from shell.dispatcher import Dispatcher
from shell.ledger import tasks
from shell.ledger.connection import Ledger
from shell.outbox import Outbox, OutboxOptions
from tests.support.fake_basecamp import AGENT_ID, FakeBasecamp
from tests.support.ledger_world import PROJECT, LedgerWorld
from tests.support.pretend_workers import AlwaysGone, RecordingDriver


def _still_running_posts(basecamp: FakeBasecamp, destination: Destination) -> list[str]:
    return [m.text for m in basecamp.messages_at(destination) if "Working on this as of" in m.text]


def _finished_work_with_a_live_attempt(world: LedgerWorld, ledger: Ledger) -> str:
    """Event 101 launched, pulled and reported succeeded with a reply; its attempt still live,
    with one still-running notice written and due."""
    world.request(101)
    with ledger.write() as connection:
        launch = tasks.launch(
            connection,
            101,
            work_dir="/srv/project",
            driver="test",
            deadline_at=ledger.clock.now() + timedelta(hours=1),
            now=ledger.clock.now(),
        )
        tasks.mark_running(
            connection, launch.attempt_id, pid=4242, pgid=4242, process_started="77", now=ledger.clock.now()
        )
    world.get_dispatch(launch.task_id, 101)  # cancels the guard
    world.tick(launch.attempt_id)  # still-running notice, due now
    world.report(launch.task_id, 101, "succeeded", reply_id=9_001, ack_id=9_000)
    return launch.attempt_id


REPLY_DESTINATION = Destination(MessageKind.comment, PROJECT, 1_000_101)

# Fixed: a still-running notice is claimed only while some instruction of its task is not yet
# reported (core.message_kinds' claim rule). What stays open is narrower and cannot be closed by any check:
# work reported *while the request is on the wire* (tests/sim, the claim-to-request window).


def test_a_still_running_notice_stands_down_when_its_work_was_reported_before_the_claim(
    world: LedgerWorld, ledger: Ledger, basecamp: FakeBasecamp, outbox: Outbox
) -> None:
    _finished_work_with_a_live_attempt(world, ledger)
    outbox.flush()
    with ledger.read() as connection:
        assert connection.execute("SELECT state, note FROM outbox WHERE kind = 'still_running'").fetchall() == [
            ("canceled", "every instruction was reported before the notice went out")
        ]
    # The connector's last word on finished work is not "still working on this".
    assert _still_running_posts(basecamp, REPLY_DESTINATION) == []


# Fixed: a start without recovery passes over still-running notices (shell.connector.settle_previous).


def test_a_restart_does_not_post_still_running_for_an_attempt_recovery_is_about_to_end(
    world: LedgerWorld, ledger: Ledger, basecamp: FakeBasecamp
) -> None:
    world.request(101)
    launch = world.launch(101, work_dir="/srv/project", running_pid=4242)
    world.get_dispatch(launch.task_id, 101)
    world.tick(launch.attempt_id)  # still-running notice, due now; the work is not reported
    # The connector was SIGKILLed here; a new one's outbox starts alone (reconcile, send),
    # then dispatcher.recover, then the running flushes.
    outbox = Outbox(ledger, basecamp, AGENT_ID, OutboxOptions())
    dispatcher = Dispatcher(ledger, {PROJECT: Path("/srv/project")}, RecordingDriver(), AlwaysGone())
    settle_previous(StartParts(outbox), ledger.clock.monotonic() + 30)
    with ledger.read() as connection:
        assert connection.execute("SELECT state FROM outbox WHERE kind = 'still_running'").fetchall() == [
            ("pending",)
        ], "passed over at start, untouched"
    assert dispatcher.recover() == []
    outbox.flush()
    with ledger.read() as connection:
        assert connection.execute(
            "SELECT stop_reason FROM attempts WHERE id = ?", (launch.attempt_id,)
        ).fetchone() == ("lost",)
        assert connection.execute("SELECT state FROM outbox WHERE kind = 'still_running'").fetchall() == [
            ("canceled",)
        ]
    assert _still_running_posts(basecamp, REPLY_DESTINATION) == []



def test_a_start_with_recovery_recovers_first_so_its_send_cancels_the_notice_of_an_ended_attempt(
    world: LedgerWorld, ledger: Ledger, basecamp: FakeBasecamp
) -> None:
    world.request(101)
    launch = world.launch(101, work_dir="/srv/project", running_pid=4242)
    world.get_dispatch(launch.task_id, 101)
    world.tick(launch.attempt_id)  # still-running notice, due now; the work is not reported
    # The connector was SIGKILLed here; the production start (recovery among its parts) follows.
    outbox = Outbox(ledger, basecamp, AGENT_ID, OutboxOptions())
    dispatcher = Dispatcher(ledger, {PROJECT: Path("/srv/project")}, RecordingDriver(), AlwaysGone())
    started = settle_previous(StartParts(outbox, recovery=dispatcher), ledger.clock.monotonic() + 30)
    assert started.held == []
    with ledger.read() as connection:
        assert connection.execute("SELECT state FROM outbox WHERE kind = 'still_running'").fetchall() == [
            ("canceled",)
        ], "the start's own send read it, after recovery ended its attempt"
    assert _still_running_posts(basecamp, REPLY_DESTINATION) == []
