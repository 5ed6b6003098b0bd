"""SIGKILL a real connector (outbox + dispatcher + a real stand-in worker) at each point of a
worker's life, restart it, and check the promises: no instruction a worker may have seen runs
twice, no lifecycle message is posted twice, no worker of a settled attempt still runs.
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from shell.basecamp.standin.server import StandIn
from shell.ledger.connection import Ledger, open_ledger
from shell.processes import group_members
from tests.support.child import ChildProcess, wait_until
from tests.support.ledger_world import PROJECT, LedgerWorld
from tests.worker.support import group_alive

pytestmark = pytest.mark.slow
CONNECT = str(Path(__file__).resolve().parents[2] / "bin" / "connect")


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


def connector_process(
    ledger: Ledger, standin: StandIn, work: Path, behaviour: str, pause_at: str | None = None
) -> ChildProcess:
    """The whole connector (outbox, dispatcher, stand-in worker) in a child process of its own."""
    return ChildProcess(
        "tests.support.connector_process",
        [
            "--ledger",
            str(ledger.path),
            "--base-url",
            standin.base_url,
            "--work-dir",
            str(work),
            "--sessions",
            str(work.parent / "sessions"),
            "--account",
            str(standin.world.account_id),
            "--agent",
            str(standin.world.agent.id),
            "--project",
            str(PROJECT),
        ],
        standin.world.token,
        pause_at=pause_at,
        environment={"WORKER_BEHAVIOUR": behaviour},
    )


def one(ledger: Ledger, sql: str) -> tuple[object, ...]:
    with ledger.read() as connection:
        found = connection.execute(sql).fetchone()
    return () if found is None else tuple(found)


class Scene:
    def __init__(self, ledger: Ledger, standin: StandIn, tmp_path: Path) -> None:
        self.ledger, self.standin = ledger, standin
        self.work = tmp_path / "work"
        self.work.mkdir()
        self.card = standin.world.projects[0].recording_ids[0]
        LedgerWorld(ledger).request(501, recording_id=self.card)

    def connector(self, behaviour: str, pause_at: str | None = None) -> ChildProcess:
        return connector_process(self.ledger, self.standin, self.work, behaviour, pause_at)

    def messages(self, kind: str) -> list[str]:
        return [message["content"] for message in self.standin.messages(kind, self.card)]

    def assert_the_promises_hold(self) -> None:
        assert one(self.ledger, "SELECT COUNT(*) FROM tasks") == (1,), "the instruction was never run again"
        with self.ledger.read() as connection:
            groups = [
                row[0]
                for row in connection.execute(
                    "SELECT pgid FROM attempts WHERE state = 'ended' AND pgid IS NOT NULL"
                )
            ]
        # A zombie runs nothing (its parent, the killed connector, is gone and init reaps it
        # when it will): "still runs" means a live member of the group.
        assert not [group for group in groups if group_members(group)], (
            "a settled attempt's worker still runs"
        )
        for kind in ("boost", "comment"):
            words = self.messages(kind)
            assert len(words) == len(set(words)), f"a {kind} was posted twice: {words}"


@pytest.fixture
def scene(ledger: Ledger, standin: StandIn, tmp_path: Path) -> Scene:
    return Scene(ledger, standin, tmp_path)


def test_killed_at_launching_the_restart_holds_the_attempt_and_runs_nothing(scene: Scene) -> None:
    first = scene.connector("answer", pause_at="after_launch")
    first.wait_for_stderr("paused at after_launch")
    first.kill()
    second = scene.connector("answer")
    assert second.first_line().startswith("started held=att_"), "left mid-launch: held for a person"
    time.sleep(2)
    second.stop()
    assert one(scene.ledger, "SELECT state FROM attempts") == ("launching",)
    assert one(scene.ledger, "SELECT state FROM events") == ("dispatched",)
    assert one(scene.ledger, "SELECT COUNT(*) FROM task_events WHERE pulled_at IS NOT NULL") == (0,)
    assert scene.messages("comment") == []
    scene.assert_the_promises_hold()


def test_killed_at_launching_a_persons_settlement_lets_the_running_connector_answer_once(
    scene: Scene, tmp_path: Path
) -> None:
    first = scene.connector("answer", pause_at="after_launch")
    first.wait_for_stderr("paused at after_launch")
    first.kill()
    second = scene.connector("answer")
    assert second.first_line().startswith("started held=att_")
    assert one(scene.ledger, "SELECT left_at IS NOT NULL FROM attempts") == (1,)
    settled = subprocess.run(
        [CONNECT, "settle-launch", "501", "--did-not-run", "--state-dir", str(tmp_path / "state"), "--by", "local:ada"],
        capture_output=True, text=True, timeout=60, check=False,
    )
    assert settled.returncode == 0, settled.stderr
    assert settled.stdout.startswith("Attempt att_")
    wait_until(lambda: len(scene.messages("comment")) == 1, timeout=60)
    time.sleep(1.5)  # a doubled message would be posted by now
    second.stop()
    assert scene.messages("comment") == ["<div>Done with event 501.</div>"]
    assert scene.messages("boost") == ["on it"]
    assert one(scene.ledger, "SELECT group_concat(stop_reason || ':' || settled_as, ' ') FROM attempts") == (
        "failed:did_not_run finished:",
    )
    assert one(scene.ledger, "SELECT state FROM events") == ("completed",)


@pytest.mark.parametrize(
    ("behaviour", "reached"),
    [
        ("slow:60", "SELECT 1 FROM attempts WHERE state = 'running'"),
        ("hang", "SELECT 1 FROM task_events WHERE pulled_at IS NOT NULL"),
        # acknowledged, and its words posted by the connector: killed after the boost landed
        ("hang_after_ack", "SELECT 1 FROM outbox WHERE kind = 'worker_ack' AND state = 'sent'"),
    ],
    ids=["running", "after-get-dispatch", "after-ack-dispatch"],
)
def test_killed_while_a_worker_runs_the_restart_ends_it_and_settles_it_unknown(
    scene: Scene, behaviour: str, reached: str
) -> None:
    first = scene.connector(behaviour)
    wait_until(lambda: one(scene.ledger, reached) == (1,))
    first.kill()
    (pgid,) = one(scene.ledger, "SELECT pgid FROM attempts")
    assert group_alive(int(str(pgid))), "the worker outlived its connector"
    second = scene.connector("answer")
    second.first_line()
    wait_until(lambda: len(scene.messages("comment")) == 1)
    second.stop()
    assert one(scene.ledger, "SELECT state, stop_reason FROM attempts") == ("ended", "lost")
    assert one(scene.ledger, "SELECT state FROM events") == ("completed",)
    assert one(scene.ledger, "SELECT outcome FROM task_events") == ("unknown",)
    (notice,) = scene.messages("comment")
    assert "the worker was lost" in notice
    assert "bin/connect redispatch 501" in notice
    expected_boosts = ["on it"] if behaviour == "hang_after_ack" else []
    assert scene.messages("boost") == expected_boosts
    scene.assert_the_promises_hold()


def test_killed_inside_the_settlement_the_restart_keeps_the_reported_outcome(scene: Scene) -> None:
    first = scene.connector("answer", pause_at="in_settlement")
    first.wait_for_stderr("paused at in_settlement", timeout=60)
    first.kill()
    assert one(scene.ledger, "SELECT state FROM attempts") == ("running",), "the settlement rolled back whole"
    second = scene.connector("answer")
    second.first_line()
    wait_until(lambda: one(scene.ledger, "SELECT state FROM attempts") == ("ended",))
    time.sleep(1.5)  # the running outbox would post a notice now if one were called for
    second.stop()
    assert one(scene.ledger, "SELECT outcome, reply_id IS NOT NULL FROM task_events") == ("succeeded", 1)
    assert scene.messages("comment") == ["<div>Done with event 501.</div>"], (
        "no notice: it succeeded with a reply"
    )
    assert scene.messages("boost") == ["on it"]
    scene.assert_the_promises_hold()
