"""SIGKILL a real sender process mid-post, restart it, and count the POSTs that reached Basecamp.

(a) killed after Basecamp created the message but before the receipt was committed: the
    restart adopts exactly that message and posts nothing.
(b) killed after the claim committed but before any request: the restart posts nothing and,
    after the wait, the intent is indeterminate, for a person.
"""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest

from core import notes
from shell.basecamp.standin.faults import Fault, FaultAction
from shell.basecamp.standin.server import StandIn
from shell.ledger.connection import Ledger, open_ledger
from tests.support.child import REPOSITORY, ChildProcess, wait_until
from tests.support.ledger_world import LedgerWorld

pytestmark = pytest.mark.slow


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


def sender(
    ledger: Ledger, standin: StandIn, pause_at: str | None = None, reconcile_after: float = 1
) -> ChildProcess:
    """The outbox in a child process of its own."""
    return ChildProcess(
        "tests.support.sender_process",
        [
            "--ledger",
            str(ledger.path),
            "--base-url",
            standin.base_url,
            "--account",
            str(standin.world.account_id),
            "--agent",
            str(standin.world.agent.id),
            "--reconcile-after",
            str(reconcile_after),
        ],
        standin.world.token,
        pause_at=pause_at,
    )


def due_guard(ledger: Ledger, standin: StandIn) -> int:
    """A mention on the world's card, admitted; its guard due at once."""
    world = LedgerWorld(ledger, guard_delay=timedelta(0))
    project = standin.world.projects[0]
    world.seen(501, recording_id=project.recordings[0].id)
    with ledger.write() as connection:
        connection.execute("UPDATE events SET bucket_id = ? WHERE id = 501", (project.id,))
    world.verdict(501, "admitted")
    return project.recordings[0].id


def intent_state(ledger: Ledger) -> tuple[str, int | None, str]:
    with ledger.read() as connection:
        state, receipt, note = connection.execute("SELECT state, receipt_id, note FROM outbox").fetchone()
    return state, receipt, note


def test_killed_after_basecamp_created_the_message_the_restart_adopts_it_and_posts_nothing(
    ledger: Ledger, standin: StandIn
) -> None:
    recording = due_guard(ledger, standin)
    standin.add_fault(Fault(action=FaultAction.create_then_delay, method="POST", delay=30.0))
    first = sender(ledger, standin)
    wait_until(lambda: len(standin.messages("boost", recording)) == 1)
    first.kill()
    assert intent_state(ledger)[0] == "sending"

    second = sender(ledger, standin)
    wait_until(lambda: intent_state(ledger)[0] != "sending")
    second.stop()
    (message,) = standin.messages("boost", recording)
    assert intent_state(ledger) == ("sent", message["id"], notes.ADOPTED)
    assert standin.post_count() == 1


def test_a_restart_inside_the_reconcile_wait_leaves_the_sending_intent_alone(
    ledger: Ledger, standin: StandIn
) -> None:
    """Invariant 4 across a crash, with no race to hide behind: the restarted sender starts long
    before the intent may be listed, so only its own send passes could post it again -- and none
    may. (With a 1 s wait, a slow restart adopts the intent first and the rule goes untested.)"""
    recording = due_guard(ledger, standin)
    standin.add_fault(Fault(action=FaultAction.create_then_delay, method="POST", delay=30.0))
    first = sender(ledger, standin)
    wait_until(lambda: len(standin.messages("boost", recording)) == 1)
    first.kill()

    second = sender(ledger, standin, reconcile_after=600)
    assert second.first_line() == "started"
    time.sleep(0.5)  # five ticks of 0.1 s: five send passes after the start's own
    posts = standin.post_count()
    second.stop()
    assert intent_state(ledger)[0] == "sending"
    assert posts == 1


def test_killed_after_the_claim_before_any_request_the_restart_posts_nothing(
    ledger: Ledger, standin: StandIn
) -> None:
    due_guard(ledger, standin)
    first = sender(ledger, standin, pause_at="after_claim")
    first.wait_for_stderr("paused at after_claim")
    first.kill()
    assert intent_state(ledger)[0] == "sending"

    second = sender(ledger, standin)
    wait_until(lambda: intent_state(ledger)[0] != "sending")
    second.stop()
    assert intent_state(ledger) == ("indeterminate", None, notes.matching_messages(0))
    assert standin.post_count() == 0
    listed = subprocess.run(
        [str(REPOSITORY / "bin" / "outbox-resolve"), "--ledger", str(ledger.path), "--json", "list"],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    (waiting,) = json.loads(listed.stdout)
    assert (waiting["kind"], waiting["state"], waiting["event_id"]) == ("guard_ack", "indeterminate", 501)
