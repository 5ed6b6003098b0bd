"""`bin/connect run` as a real process against the stand-in's inbox: what was addressed to the
agent while the feed could not bring it is answered once -- mentions made while the connector was
stopped and the feed's position went stale (410), and a mention Basecamp braked (absent from the
feed and the live lane) -- and a principal without an inbox runs as before and says so."""

from __future__ import annotations

import re
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from shell.basecamp.standin.server import StandIn
from shell.cli.main import main as connect
from shell.ledger.connection import open_ledger_read_only
from tests.support.child import wait_until
from tests.support.configured import POLL_SECONDS, REPOSITORY, configure_connector

pytestmark = [pytest.mark.slow, pytest.mark.timeout(180)]


@pytest.fixture
def standin() -> Iterator[StandIn]:
    with StandIn(world="demo") as server:
        yield server


def replies(standin: StandIn, card: int) -> list[int]:
    """The event ids the worker's replies on ``card`` name, in order."""
    agent = standin.world.agent.id
    found = [m["content"] for m in standin.messages("comment", card) if m["creator"]["id"] == agent]
    return [int(number) for text in found for number in re.findall(r"Done with event (\d+)\.", text)]


def cursor_reads(standin: StandIn) -> int:
    return sum(1 for request in standin.requests() if "inbox.json" in request.path)


def start_run(state: Path) -> subprocess.Popen[str]:
    """``bin/connect run``, once it says it is running: the start may first say what it heard."""
    command = [
        str(REPOSITORY / "bin" / "connect"),
        "run",
        "--state-dir",
        str(state),
        "--poll-seconds",
        str(POLL_SECONDS),
    ]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert process.stdout is not None
    while not (line := process.stdout.readline()).startswith("running account="):
        assert line, "it ended before it was running"
    return process


def stop(process: subprocess.Popen[str]) -> str:
    process.send_signal(signal.SIGTERM)
    _, errors = process.communicate(timeout=90)
    assert process.returncode == 0, errors[-3000:]
    return errors


def lanes(state: Path) -> dict[int, tuple[str, str]]:
    with open_ledger_read_only(state / "ledger.sqlite3") as ledger, ledger.read() as connection:
        return {
            int(row[0]): (str(row[1]), str(row[2]))
            for row in connection.execute("SELECT id, lane, state FROM events")
        }


def test_three_mentions_made_while_stopped_past_a_stale_feed_position_are_answered_once(
    standin: StandIn, tmp_path: Path
) -> None:
    state = configure_connector(standin, tmp_path)
    card = standin.world.projects[0].recording_ids[0]
    process = start_run(state)
    try:
        wait_until(lambda: cursor_reads(standin) >= 1)
    finally:
        stop(process)
    asked = [standin.mention(standin.world.people[0], card, f"while you were away {n}") for n in range(3)]
    standin.feed.begin_epoch()  # the feed's position is stale: the three are before its new epoch
    process = start_run(state)
    try:
        wait_until(lambda: sorted(replies(standin, card)) == asked, timeout=90)
        wait_until(lambda: all(lanes(state)[event][1] == "completed" for event in asked), timeout=30)
    finally:
        errors = stop(process)
    assert sorted(replies(standin, card)) == asked, "each answered once"
    assert {event: lanes(state)[event][0] for event in asked} == dict.fromkeys(asked, "inbox")
    assert "the feed's epoch passed" in errors


def test_a_braked_mention_is_heard_from_the_inbox_and_answered_once(standin: StandIn, tmp_path: Path) -> None:
    state = configure_connector(standin, tmp_path)
    card = standin.world.projects[0].recording_ids[0]
    process = start_run(state)
    try:
        wait_until(lambda: cursor_reads(standin) >= 1)
        standin.feed.brake_next()
        braked = standin.mention(standin.world.people[0], card, "Basecamp braked this one")
        wait_until(lambda: replies(standin, card) == [braked], timeout=60)
        wait_until(lambda: lanes(state)[braked][1] == "completed", timeout=30)
        heard = standin.mention(standin.world.people[0], card, "and this one the feed brings")
        wait_until(lambda: replies(standin, card) == [braked, heard], timeout=60)
    finally:
        stop(process)
    assert replies(standin, card) == [braked, heard]
    assert lanes(state)[braked][0] == "inbox"
    assert lanes(state)[heard][0] in ("poll", "live")


def test_a_principal_without_an_inbox_runs_as_today_and_status_says_so(
    standin: StandIn, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    standin.inbox.agents.clear()  # the token's person is not an agent principal: a bare 403
    state = configure_connector(standin, tmp_path)
    card = standin.world.projects[0].recording_ids[0]
    process = start_run(state)
    try:
        asked = standin.mention(standin.world.people[0], card, "heard by the feed as before")
        wait_until(lambda: replies(standin, card) == [asked], timeout=60)
    finally:
        stop(process)
    assert cursor_reads(standin) == 1, "the 403 is recorded once, not asked every poll"
    capsys.readouterr()
    assert connect(["status", "--state-dir", str(state)]) == 0
    shown = capsys.readouterr().out
    assert "inbox lane: not for this principal" in shown
    assert connect(["status", "--state-dir", str(state), "--json"]) == 0
    assert '"verdict": "not_for_principal"' in capsys.readouterr().out
