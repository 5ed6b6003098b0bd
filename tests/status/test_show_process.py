"""`bin/connect show EVENT_ID` as a real process: on the ledger a real demo left (the stand-in the test
holds is the judge of each message id), beside a running connector, for an id the ledger never saw,
and where no ledger is (it opens none it would create). `status --json`'s events carry the same
ack_id and reply_id."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from shell.basecamp.standin.server import StandIn
from shell.cli.standin import describe
from shell.errors import EXIT_CONFIG, EXIT_NOT_FOUND
from tests.support.child import wait_until
from tests.support.configured import configure_connector, start_run

pytestmark = pytest.mark.slow
REPOSITORY = Path(__file__).resolve().parents[2]
CONNECT = str(REPOSITORY / "bin" / "connect")


def connect(*arguments: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([CONNECT, *arguments], capture_output=True, text=True, timeout=60, check=False)


def agents(standin: StandIn, kind: str, recording_id: int) -> list[int]:
    """The ids of the agent's messages of ``kind`` on a recording (boosts: on a message)."""
    agent = standin.world.agent.id
    who = "booster" if kind == "boost" else "creator"
    return [message["id"] for message in standin.messages(kind, recording_id) if message[who]["id"] == agent]


@dataclass(frozen=True)
class Demo:
    state: Path
    scenes: dict[int, dict[str, Any]]
    boosts: dict[int, list[int]]  # the agent's boosts on each scene's request
    comments: dict[int, list[int]]  # the agent's comments on each scene's card


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Demo]:
    """One `bin/connect demo --keep` against a stand-in this test holds, its directory kept under tmp."""
    directory = tmp_path_factory.mktemp("show-demo")
    with StandIn(world="demo") as standin:
        description = directory / "standin.json"
        description.write_text(json.dumps(describe(standin)) + "\n")
        environment = {key: value for key, value in os.environ.items() if key != "CONNECTOR_PAUSE_AT"}
        played = subprocess.run(
            [CONNECT, "demo", "--standin", str(description), "--keep", "--json"],
            capture_output=True, text=True, env={**environment, "TMPDIR": str(directory)}, timeout=115, check=False,
        )  # fmt: skip
        assert played.returncode == 0, played.stdout[-3000:] + played.stderr[-3000:]
        outcome = json.loads(played.stdout)
        scenes = {scene["number"]: scene for scene in outcome["scenes"]}
        cards = {card: project for project in standin.world.projects for card in project.recording_ids}
        boosts = {number: agents(standin, "boost", scene["request_id"]) for number, scene in scenes.items()}
        comments: dict[int, list[int]] = {}
        for number, scene in scenes.items():
            history = json.loads(connect("show", str(scene["event_id"]), "--state-dir",
                                         f"{outcome['directory']}/state", "--json").stdout)  # fmt: skip
            card = history["tasks"][0]["conversation"].removeprefix("recording:") if history["tasks"] else ""
            comments[number] = agents(standin, "comment", int(card)) if card and int(card) in cards else []
        yield Demo(Path(outcome["directory"]) / "state", scenes, boosts, comments)


def show(demo: Demo, scene: int, *more: str) -> subprocess.CompletedProcess[str]:
    return connect("show", str(demo.scenes[scene]["event_id"]), "--state-dir", str(demo.state), *more)


def test_show_tells_a_demo_events_whole_story_in_text_and_json(demo: Demo) -> None:
    shown, text = show(demo, 1, "--json"), show(demo, 1)
    assert (shown.returncode, shown.stderr, text.returncode, text.stderr) == (0, "", 0, "")
    history = json.loads(shown.stdout)
    assert history["event_id"] == demo.scenes[1]["event_id"]
    assert (history["record"]["lane"], history["record"]["trigger"], history["record"]["state"]) == (
        "live", "mentioned", "completed")  # fmt: skip
    (task,) = history["tasks"]
    (attempt,) = task["attempts"]
    assert (attempt["state"], attempt["stop_reason"], task["outcome"]) == ("ended", "finished", "succeeded")
    assert attempt["pid"] > 0
    kinds = {intent["kind"]: intent for intent in history["intents"]}
    assert set(kinds) == {"guard_ack", "worker_ack", "worker_reply"}
    assert (kinds["guard_ack"]["state"], kinds["guard_ack"]["note"], kinds["guard_ack"]["landed"]) == (
        "canceled", "get_dispatch", None)  # fmt: skip
    assert demo.boosts[1] == [history["ack_id"]] == [kinds["worker_ack"]["receipt_id"]]
    assert demo.comments[1] == [history["reply_id"]] == [kinds["worker_reply"]["receipt_id"]]
    assert kinds["worker_ack"]["landed"] == kinds["worker_reply"]["landed"] == "posted"

    lines = text.stdout.splitlines()
    assert lines[0].endswith(f"ack_id {history['ack_id']}, reply_id {history['reply_id']}")
    assert [line.split("  ", 2)[2] for line in lines[1:]] == [moment["what"] for moment in history["story"]]
    said = [moment["what"] for moment in history["story"]]
    assert said[0].startswith("heard first by the live lane: comment.created")
    assert said.index("verdict: the mentioned trigger matched") < next(
        index for index, what in enumerate(said) if "launched" in what)  # fmt: skip
    assert [moment["at"] for moment in history["story"]] == sorted(moment["at"] for moment in history["story"])


def test_a_failed_events_story_holds_its_attempts_completion_notice(demo: Demo) -> None:
    history = json.loads(show(demo, 4, "--json").stdout)
    (task,) = history["tasks"]
    (attempt,) = task["attempts"]
    (notice,) = [intent for intent in history["intents"] if intent["kind"] == "completion"]
    assert (notice["attempt_id"], notice["landed"], task["outcome"]) == (attempt["attempt_id"], "posted", "failed")
    assert (history["ack_id"], history["reply_id"]) == (demo.boosts[4][0], None)


def test_a_message_reconciliation_adopted_is_told_adopted_not_posted(demo: Demo) -> None:
    history = json.loads(show(demo, 5, "--json").stdout)
    (holding,) = history["intents"]
    assert (holding["kind"], holding["landed"], history["tasks"]) == ("holding_reply", "adopted", [])
    assert "adopted by reconciliation" in show(demo, 5).stdout


def test_an_id_the_ledger_never_saw_is_one_line_and_no_such_event(demo: Demo) -> None:
    unknown = str(max(scene["event_id"] for scene in demo.scenes.values()) + 1000)
    text = connect("show", unknown, "--state-dir", str(demo.state))
    assert (text.returncode, text.stdout, text.stderr) == (
        EXIT_NOT_FOUND, "", f"error: the ledger holds no event {unknown}\n")  # fmt: skip
    machine = connect("show", unknown, "--state-dir", str(demo.state), "--json")
    assert machine.returncode == EXIT_NOT_FOUND
    assert json.loads(machine.stdout)["exit_code"] == EXIT_NOT_FOUND
    assert connect("show", "seven", "--state-dir", str(demo.state)).returncode == 2


def test_show_creates_no_ledger_where_there_is_none(tmp_path: Path) -> None:
    state = tmp_path / "state"
    state.mkdir(mode=0o700)
    missing = connect("show", "7", "--state-dir", str(state))
    assert missing.returncode == EXIT_CONFIG
    assert len(missing.stderr.splitlines()) == 1
    assert list(state.iterdir()) == [], "show opens a ledger read-only: it never makes one"


def test_show_and_status_beside_a_running_connector_carry_the_workers_ids(tmp_path: Path) -> None:
    with StandIn(world="demo") as standin:
        state = configure_connector(standin, tmp_path)
        process = start_run(state)
        try:
            card = standin.world.projects[0].recording_ids[0]
            event_id = standin.mention(standin.world.people[0], card, "please take a look")
            wait_until(lambda: agents(standin, "comment", card) != [])
            wait_until(lambda: json.loads(connect("status", "--state-dir", str(state), "--json").stdout)
                       ["dispatches"][0]["events"][0]["reply_id"] is not None)  # fmt: skip
            found = json.loads(connect("status", "--state-dir", str(state), "--json").stdout)
            (event,) = found["dispatches"][0]["events"]
            assert event["event_id"] == event_id
            shown = connect("show", str(event_id), "--state-dir", str(state), "--json")
            assert process.poll() is None, "the connector ran throughout"
            (reply,) = agents(standin, "comment", card)
            boosts = [boost for message in standin.messages("comment", card)
                      for boost in agents(standin, "boost", message["id"])]  # fmt: skip
        finally:
            process.send_signal(signal.SIGTERM)
            output, errors = process.communicate(timeout=90)
            print(output, errors[-4000:], sep="\n")
    assert process.returncode == 0
    assert (shown.returncode, shown.stderr) == (0, "")
    history = json.loads(shown.stdout)
    assert (event["ack_id"], event["reply_id"]) == (history["ack_id"], history["reply_id"])
    assert history["reply_id"] == reply
    assert [history["ack_id"]] == boosts
