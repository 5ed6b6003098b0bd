"""`bin/connect run --hold` as a real process against the stand-in: a mention made while held is
admitted, but nothing launches and nothing is posted -- not even its guard once due; `status`
shows the hold; `bin/connect release` lets it run, and the mention is answered once."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from shell.basecamp.standin.server import StandIn
from shell.ledger.connection import open_ledger_read_only
from tests.support.child import wait_until
from tests.support.configured import POLL_SECONDS, configure_connector

pytestmark = [pytest.mark.slow, pytest.mark.timeout(180)]
REPOSITORY = Path(__file__).resolve().parents[2]
CONNECT = str(REPOSITORY / "bin" / "connect")
GUARD_DELAY_SECONDS = 2


@pytest.fixture
def standin() -> Iterator[StandIn]:
    with StandIn(world="demo") as server:
        yield server


def command(*words: str, state: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [CONNECT, *words, "--state-dir", str(state)], capture_output=True, text=True, timeout=60, check=False
    )


def messages_posted(standin: StandIn) -> int:
    """POSTs that would create a message (a comment, a boost or a Campfire line): other POSTs, such as
    the live lane's ticket, are not posts of the connector's voice."""
    return sum(standin.post_count(path) for path in ("/comments", "/boosts", "/lines"))


def ledger_rows(state: Path, sql: str, *values: object) -> list[tuple[object, ...]]:
    with open_ledger_read_only(state / "ledger.sqlite3") as ledger, ledger.read() as connection:
        return list(connection.execute(sql, values).fetchall())


def test_a_mention_made_under_the_hold_waits_and_is_answered_once_after_release(
    standin: StandIn, tmp_path: Path
) -> None:
    scenes = tmp_path / "scenes.json"
    state = configure_connector(
        standin, tmp_path, "--guard-delay", f"{GUARD_DELAY_SECONDS}s", "--reconcile-after", "1s", scenes=scenes
    )
    environment = {key: value for key, value in os.environ.items() if key != "CONNECTOR_PAUSE_AT"}
    process = subprocess.Popen(
        [CONNECT, "run", "--state-dir", str(state), "--poll-seconds", str(POLL_SECONDS), "--hold", "--reason", "cutover",
         "--by", "local:ana"],
        env=environment, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    agent = standin.world.agent.id
    card = standin.world.projects[0].recording_ids[0]

    def replies() -> list[str]:
        return [m["content"] for m in standin.messages("comment", card) if m["creator"]["id"] == agent]

    try:
        assert process.stdout is not None
        assert process.stdout.readline().startswith("Held (generation 1): nothing launches or posts")
        assert process.stdout.readline().startswith("running account=")
        event = standin.mention(standin.world.people[0], card, "please look")
        scenes.write_text(json.dumps({str(event): "answer"}))
        wait_until(lambda: ledger_rows(state, "SELECT state FROM events WHERE id = ?", event) == [("admitted",)])
        time.sleep(GUARD_DELAY_SECONDS + 3)  # its guard is due, dispatch has ticked: still nothing
        assert ledger_rows(state, "SELECT COUNT(*) FROM attempts") == [(0,)]
        assert messages_posted(standin) == 0
        status = command("status", "--json", state=state)
        assert status.returncode == 0, status.stderr
        hold = json.loads(status.stdout)["hold"]
        assert (hold["held_by"], hold["cause"], hold["generation"]) == ("local:ana", "cutover", 1)

        released = command("release", "--by", "local:bob", state=state)
        assert (released.returncode, released.stdout.strip()) == (0, "Released; 0 held records stay held")
        wait_until(lambda: len(replies()) == 1, timeout=60)
        wait_until(lambda: ledger_rows(state, "SELECT state FROM events WHERE id = ?", event) == [("completed",)])
        time.sleep(2)  # anything doubled would be posted by now
    finally:
        process.send_signal(signal.SIGTERM)
        output, errors = process.communicate(timeout=60)
        print(output, errors[-4000:], sep="\n")
    assert process.returncode == 0
    assert len(replies()) == 1
    assert replies()[0].startswith(f"<div>Done with event {event}")
    assert messages_posted(standin) == 2, "one acknowledgement (the guard's or the worker's) and one reply"
    assert ledger_rows(state, "SELECT COUNT(*) FROM attempts") == [(1,)]
