"""`bin/connect redispatch` and `bin/connect discard` against a running `bin/connect run`: the
command a completion notice names works as written, the redispatched record runs again on the
running connector, and refusals and unknown ids are one line and a non-zero exit."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from shell.basecamp.standin.server import StandIn
from shell.errors import EXIT_NOT_FOUND, EXIT_REFUSED
from shell.ledger.connection import open_ledger_read_only
from tests.support.child import wait_until
from tests.support.configured import POLL_SECONDS, configure_connector

pytestmark = pytest.mark.slow
REPOSITORY = Path(__file__).resolve().parents[2]
CONNECT = str(REPOSITORY / "bin" / "connect")


@pytest.fixture
def standin() -> Iterator[StandIn]:
    with StandIn(world="demo") as server:
        yield server


def configure(standin: StandIn, tmp_path: Path, scenes: Path) -> Path:
    """A connector whose worker plays the part ``scenes`` names for each event."""
    return configure_connector(standin, tmp_path, "--reconcile-after", "1s", scenes=scenes)


def decide(*words: str, state: Path) -> subprocess.CompletedProcess[str]:
    """A decision command as a person types it, beside the running connector."""
    return subprocess.run(
        [CONNECT, *words, "--state-dir", str(state), "--json", "--by", "local:ada"],
        capture_output=True, text=True, timeout=60, check=False,
    )


def test_the_redispatch_a_completion_notice_names_runs_the_record_again_beside_the_connector(
    standin: StandIn, tmp_path: Path
) -> None:
    scenes = tmp_path / "scenes.json"
    state = configure(standin, tmp_path, scenes)
    environment = {key: value for key, value in os.environ.items() if key != "CONNECTOR_PAUSE_AT"}
    process = subprocess.Popen(
        [CONNECT, "run", "--state-dir", str(state), "--poll-seconds", str(POLL_SECONDS)],
        env=environment, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    agent = standin.world.agent.id
    first_card, second_card = standin.world.projects[0].recording_ids[:2]
    person = standin.world.people[0]

    def by_agent(card: int) -> list[str]:
        return [m["content"] for m in standin.messages("comment", card) if m["creator"]["id"] == agent]

    try:
        assert process.stdout is not None
        assert process.stdout.readline().startswith("running account=")
        failing = standin.mention(person, first_card, "please fix the build")
        unknown = standin.mention(person, second_card, "please look at this too")
        scenes.write_text(json.dumps({str(failing): "fail", str(unknown): "fail"}))
        wait_until(lambda: len(by_agent(first_card)) == 1 and len(by_agent(second_card)) == 1, timeout=60)
        (notice,) = by_agent(first_card)
        named = re.search(r"bin/connect redispatch (\d+)", notice)
        assert named is not None, f"the completion notice names the command: {notice}"
        assert int(named.group(1)) == failing

        scenes.write_text(json.dumps({str(failing): "answer", str(unknown): "fail"}))
        redispatched = decide("redispatch", named.group(1), state=state)
        assert redispatched.returncode == 0, redispatched.stderr
        result = json.loads(redispatched.stdout)
        assert (result["decided"], result["from"]["outcome"], result["to"]["state"]) == (True, "unknown", "admitted")
        assert result["decided_by"] == "local:ada"
        wait_until(lambda: len(by_agent(first_card)) == 2, timeout=60)
        assert by_agent(first_card)[1].startswith(f"<div>Done with event {failing}")

        discarded = decide("discard", str(unknown), state=state)
        assert discarded.returncode == 0, discarded.stderr
        assert json.loads(discarded.stdout)["to"] == {"state": "discarded", "reason": "by_operator"}

        again = decide("redispatch", str(unknown), state=state)
        assert again.returncode == EXIT_REFUSED
        assert again.stderr.strip().splitlines() == [
            f"error: Event {unknown} discarded (by_operator); a discarded record is never run"
        ]
        wait_until(lambda: _state_of(state, failing) == "completed", timeout=30)
        success = decide("redispatch", str(failing), state=state)
        assert success.returncode == EXIT_REFUSED
        assert "a success is never run again" in success.stderr
        nothing = decide("discard", "999999999", state=state)
        assert nothing.returncode == EXIT_NOT_FOUND
        assert nothing.stderr.strip().splitlines() == ["error: the ledger holds no event 999999999"]
    finally:
        process.send_signal(signal.SIGTERM)
        output, errors = process.communicate(timeout=90)
        print(output, errors[-4000:], sep="\n")
    assert process.returncode == 0
    assert len(by_agent(first_card)) == 2, "one completion notice, then the worker's reply: nothing doubled"
    assert len(by_agent(second_card)) == 1
    with open_ledger_read_only(state / "ledger.sqlite3") as ledger, ledger.read() as connection:
        assert connection.execute("SELECT action, event_id, decided_by FROM decisions ORDER BY id").fetchall() == [
            ("redispatch", failing, "local:ada"), ("discard", unknown, "local:ada"),
        ]
        assert connection.execute("SELECT COUNT(*) FROM tasks WHERE originating_event_id = ?", (failing,)).fetchone() == (2,)


def _state_of(state: Path, event_id: int) -> str:
    with open_ledger_read_only(state / "ledger.sqlite3") as ledger, ledger.read() as connection:
        return str(connection.execute("SELECT state FROM events WHERE id = ?", (event_id,)).fetchone()[0])


def test_a_redispatch_of_a_live_task_stops_its_worker_and_runs_the_record_again_once(
    standin: StandIn, tmp_path: Path
) -> None:
    scenes = tmp_path / "scenes.json"
    state = configure(standin, tmp_path, scenes)
    environment = {key: value for key, value in os.environ.items() if key != "CONNECTOR_PAUSE_AT"}
    process = subprocess.Popen(
        [CONNECT, "run", "--state-dir", str(state), "--poll-seconds", str(POLL_SECONDS)],
        env=environment, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    agent = standin.world.agent.id
    card = standin.world.projects[0].recording_ids[0]

    def by_agent() -> list[str]:
        return [m["content"] for m in standin.messages("comment", card) if m["creator"]["id"] == agent]

    def pulled() -> bool:
        with open_ledger_read_only(state / "ledger.sqlite3") as ledger, ledger.read() as connection:
            return connection.execute("SELECT COUNT(*) FROM task_events WHERE pulled_at IS NOT NULL").fetchone() == (1,)

    try:
        assert process.stdout is not None
        assert process.stdout.readline().startswith("running account=")
        event = standin.mention(standin.world.people[0], card, "please look")
        scenes.write_text(json.dumps({str(event): "hang"}))  # pulls its instruction, then hangs
        wait_until(pulled, timeout=60)
        scenes.write_text(json.dumps({str(event): "answer"}))
        redispatched = decide("redispatch", str(event), state=state)
        assert redispatched.returncode == 0, redispatched.stderr
        result = json.loads(redispatched.stdout)
        assert (result["decided"], result["pending"], result["worker_state"], result["worker_signaled"]) == (
            True, True, "stopped", True
        )
        assert result["summary"].startswith(f"Event {event} authorized; admitted when its task 1 ends")
        wait_until(lambda: any(words.startswith(f"<div>Done with event {event}") for words in by_agent()), timeout=60)
        time.sleep(2)  # a doubled message would be posted by now
    finally:
        process.send_signal(signal.SIGTERM)
        output, errors = process.communicate(timeout=90)
        print(output, errors[-4000:], sep="\n")
    assert process.returncode == 0
    replies = [words for words in by_agent() if words.startswith("<div>Done with event")]
    assert replies == [f"<div>Done with event {event}.</div>"], by_agent()
    assert by_agent() == replies, "no notice asks a person for the redispatch a person made"
    with open_ledger_read_only(state / "ledger.sqlite3") as ledger, ledger.read() as connection:
        assert connection.execute("SELECT COUNT(*) FROM tasks WHERE originating_event_id = ?", (event,)).fetchone() == (2,)
        assert connection.execute("SELECT state FROM events WHERE id = ?", (event,)).fetchone() == ("completed",)
        assert connection.execute("SELECT outcome FROM task_events ORDER BY task_id").fetchall() == [
            ("unknown",), ("succeeded",)
        ]
