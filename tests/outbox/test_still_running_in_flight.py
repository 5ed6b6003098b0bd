"""The still-running notice in flight when its attempt ends: settlement and the notice meet in the
ledger: settlement enqueues a terminal notice whenever one is already sending.

The claim checks the attempt is live; the POST comes after the claim committed; the worker --
another process -- can finish in between. When every event succeeded with a reply no completion
notice used to follow, so the connector's last word on ended work was "still working". Now the
attempt's end reads the notice ``sending`` and writes the short completion notice
(``core.message_kinds``), which the outbox claims after the notice's one request.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from core import templates
from core.destinations import Destination, MessageKind
from core.edges import AttemptState
from core.intent_kinds import IntentKind
from core.message_kinds import completion_intent
from core.snapshots import AttemptSnapshot, RecordSnapshot, SettledEvent, Settlement
from core.states import EventOutcome, RecordState
from shell.basecamp.standin.server import StandIn
from shell.crashpoints import RESUME_VARIABLE
from shell.ledger.connection import Ledger, open_ledger
from tests.support.child import ChildProcess, wait_until
from tests.support.ledger_world import LedgerWorld

NOW = datetime(2026, 12, 2, 12, 0, tzinfo=UTC)
ENDED = AttemptSnapshot("att_0123456789abcdef01234567", 4, AttemptState.ended, NOW, None, "finished")
ANSWERED = (SettledEvent(101, EventOutcome.succeeded, 900, Settlement.reported),)


def test_an_attempt_whose_events_all_succeeded_with_a_reply_gets_no_notice_unless_one_was_in_flight() -> None:
    assert templates.completion(ENDED, ANSWERED) is None
    assert templates.completion(ENDED, ANSWERED, notice_in_flight=True) == (
        "Task 4 ended: the worker finished.",
        "",
        f"Attempt {ENDED.attempt_id} · {templates.SIGNATURE}",
    )


def test_the_end_with_a_notice_in_flight_writes_the_completion_intent_at_the_reply_destination() -> None:
    origin = RecordSnapshot(
        event_id=101, state=RecordState.completed, reason="", bucket_id=7, recording_id=555, acknowledge=True,
        reply_kind=MessageKind.comment, reply_bucket_id=7, reply_recording_id=555,
    )  # fmt: skip
    assert completion_intent(ENDED, ANSWERED, origin, NOW) is None
    intent = completion_intent(ENDED, ANSWERED, origin, NOW, notice_in_flight=True)
    assert intent is not None
    assert (intent.kind, intent.key, intent.destination) == (
        IntentKind.completion, f"completion:attempt:{ENDED.attempt_id}", Destination(MessageKind.comment, 7, 555)
    )  # fmt: skip
    assert intent.body.startswith("<div>Task 4 ended: the worker finished.")


# -- a real second process, paused between its claim's commit and its POST ---------------------


@pytest.fixture
def standin() -> Iterator[StandIn]:
    with StandIn(world="empty") as server:
        yield server


@pytest.fixture
def ledger(tmp_path: Path) -> Iterator[Ledger]:
    directory = tmp_path / "state"
    directory.mkdir(mode=0o700)
    with open_ledger(directory / "ledger.sqlite3") as opened:
        yield opened


def notices(ledger: Ledger) -> list[tuple[str, str]]:
    """The attempt's notices (the canceled guard aside), oldest first: (kind, state)."""
    with ledger.read() as connection:
        return [
            (str(kind), str(state))
            for kind, state in connection.execute("SELECT kind, state FROM outbox WHERE kind <> 'guard_ack' ORDER BY id")
        ]


@pytest.mark.slow
def test_a_worker_that_finishes_while_the_notice_is_between_claim_and_post_leaves_the_end_the_last_word(
    ledger: Ledger, standin: StandIn, tmp_path: Path
) -> None:
    project = standin.world.projects[0]
    card = project.recordings[0].id
    world = LedgerWorld(ledger, guard_delay=timedelta(hours=1))  # no guard gets in the way
    world.seen(501, recording_id=card)
    with ledger.write() as connection:
        connection.execute("UPDATE events SET bucket_id = ?, reply_bucket_id = ? WHERE id = 501", (project.id, project.id))
    world.verdict(501, "admitted")
    task_id = world.task(501)
    attempt_id = world.attempt(task_id)
    world.get_dispatch(task_id, 501)
    world.tick(attempt_id)  # the still-running notice, due now, its work outstanding

    resume = tmp_path / "resume"
    sender = ChildProcess(
        "tests.support.sender_process",
        ["--ledger", str(ledger.path), "--base-url", standin.base_url, "--account", str(standin.world.account_id),
         "--agent", str(standin.world.agent.id)],
        standin.world.token, pause_at="after_claim", environment={RESUME_VARIABLE: str(resume)},
    )  # fmt: skip
    try:
        sender.wait_for_stderr("paused at after_claim")
        assert ("still_running", "sending") in notices(ledger), "claimed and committed; no request yet"
        assert standin.post_count() == 0
        world.report(task_id, 501, "succeeded", reply_id=9_001)  # the worker, meanwhile: done, replied
        world.end_attempt(attempt_id, "finished")
        assert ("completion", "pending") in notices(ledger), "the end saw the notice in flight"
        resume.touch()
        wait_until(lambda: notices(ledger) == [("still_running", "sent"), ("completion", "sent")])
    finally:
        sender.kill()  # the test's own child; what it had to do is done, or the test failed
    said = [message["content"] for message in standin.messages("comment", card)]
    assert len(said) == 2, "each once"
    assert standin.post_count() == 2
    assert "Working on this as of" in said[0]
    assert said[-1].startswith(f"<div>Task {task_id} ended: the worker finished."), "the end has the last word"
