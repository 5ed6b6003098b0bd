"""`bin/connect run` as a real process re-reads its configuration: a route `setup` adds while it
runs is served within 3 s, with no restart and no holding reply; a file that names another
agent authorizes nothing (the request waits ``blocked(config_unreadable)``, nothing is posted,
``status`` says why) until it is usable again, and then the request is answered once."""

from __future__ import annotations

import json
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from shell.basecamp.standin.server import StandIn
from shell.cli.main import main as connect
from shell.ledger.connection import open_ledger_read_only
from shell.private_files import write_atomically
from tests.support.child import wait_until
from tests.support.configured import configure_connector, start_run

pytestmark = pytest.mark.slow


@pytest.fixture
def standin() -> Iterator[StandIn]:
    with StandIn(world="demo") as server:
        yield server


def _records(state: Path) -> dict[int, tuple[str, str]]:
    with open_ledger_read_only(state / "ledger.sqlite3") as ledger, ledger.read() as connection:
        return {int(i): (str(s), str(r)) for i, s, r in connection.execute("SELECT id, state, reason FROM events")}


def _kinds(state: Path) -> list[str]:
    with open_ledger_read_only(state / "ledger.sqlite3") as ledger, ledger.read() as connection:
        return [str(kind) for (kind,) in connection.execute("SELECT kind FROM outbox")]


def test_a_route_added_by_setup_while_the_connector_runs_is_served_within_3_s(
    standin: StandIn, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = configure_connector(standin, tmp_path, routed=(0,))
    world = standin.world
    agent = world.agent.id
    process = start_run(state)
    try:
        lines: list[str] = []
        stdout = process.stdout
        threading.Thread(target=lambda: lines.extend(line.rstrip("\n") for line in stdout), daemon=True).start()
        unrouted = world.projects[1]
        work = tmp_path / "added"
        work.mkdir()
        capsys.readouterr()
        assert connect(["setup", "--state-dir", str(state), "--route", f"{unrouted.id}={work}", "--no-check"]) == 0
        said = capsys.readouterr().out
        assert "serves these routes within 2 s" in said
        assert "restart" not in said
        reloaded = f"configuration: routes reloaded: serving projects {world.projects[0].id},{unrouted.id}"
        wait_until(lambda: reloaded in lines, timeout=10)  # every RELOAD_EVERY (2 s): within 3 s unloaded
        card = unrouted.recording_ids[0]
        standin.mention(world.people[0], card, "now that you serve this project, please look")
        wait_until(lambda: any(m["creator"]["id"] == agent for m in standin.messages("comment", card)))
        replies = [m["content"] for m in standin.messages("comment", card) if m["creator"]["id"] == agent]
        assert len(replies) == 1
        assert replies[0].startswith("<div>Done with event"), "the worker's, not a holding reply"
        assert "holding_reply" not in _kinds(state)

        # A file naming another agent authorizes nothing until it is usable again.
        good = (state / "config.json").read_bytes()
        write_atomically(state / "config.json", json.dumps({**json.loads(good), "agent_id": 1}).encode())
        wait_until(lambda: "authorizes nothing" in _status(state, capsys), timeout=10)
        routed_card = world.projects[0].recording_ids[0]
        event = standin.mention(world.people[0], routed_card, "are you there?")
        wait_until(lambda: _records(state).get(event) == ("blocked", "config_unreadable"), timeout=10)
        time.sleep(1)
        assert [m for m in standin.messages("comment", routed_card) if m["creator"]["id"] == agent] == []
        write_atomically(state / "config.json", good)
        wait_until(lambda: _records(state).get(event, ("",))[0] == "completed", timeout=30)
        assert "authorizes nothing" not in _status(state, capsys)
    finally:
        process.send_signal(signal.SIGTERM)
        _, errors = process.communicate(timeout=90)
        print(*lines, errors[-4000:], sep="\n")
    assert process.returncode == 0
    answers = [m for m in standin.messages("comment", routed_card) if m["creator"]["id"] == agent]
    assert len(answers) == 1, "answered once, when the file was usable again"
    assert errors.count("authorizes nothing until it is usable again") == 1, "logged once"


def _status(state: Path, capsys: pytest.CaptureFixture[str]) -> str:
    capsys.readouterr()
    assert connect(["status", "--state-dir", str(state)]) == 0
    return capsys.readouterr().out
