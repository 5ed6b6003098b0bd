"""`bin/connect status` as a real process beside `bin/connect run` against the stand-in: it
reads what the running connector did without the lock, and never prints the feed position or
the token; once the connector has stopped, it says so."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from shell.basecamp.standin.server import StandIn
from shell.ledger import connection as write_failures
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


def configure(standin: StandIn, tmp_path: Path) -> Path:
    return configure_connector(standin, tmp_path)


def status(state: Path, *arguments: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [CONNECT, "status", "--state-dir", str(state), *arguments],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def ledger_rows(state: Path, query: str) -> list[tuple[Any, ...]]:
    with open_ledger_read_only(state / "ledger.sqlite3") as ledger, ledger.read() as connection:
        return [tuple(row) for row in connection.execute(query)]


def test_status_beside_a_running_connector_then_beside_none(standin: StandIn, tmp_path: Path) -> None:
    state = configure(standin, tmp_path)
    environment = {key: value for key, value in os.environ.items() if key != "CONNECTOR_PAUSE_AT"}
    process = subprocess.Popen(
        [CONNECT, "run", "--state-dir", str(state), "--poll-seconds", str(POLL_SECONDS)],
        env=environment,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        assert process.stdout.readline().startswith("running account=")
        kept = state / write_failures.WRITE_FAILURE_FILE
        assert kept.is_file(), "run keeps its failed writes where status reads them"
        card = standin.world.projects[0].recording_ids[0]
        standin.mention(standin.world.people[0], card, "please take a look")
        agent = standin.world.agent.id
        wait_until(
            lambda: any(message["creator"]["id"] == agent for message in standin.messages("comment", card))
        )
        wait_until(
            lambda: ledger_rows(state, "SELECT state, stop_reason FROM attempts") == [("ended", "finished")]
        )

        beside = status(state, "--json")
        text = status(state)
        assert process.poll() is None, "the connector ran throughout"
    finally:
        process.send_signal(signal.SIGTERM)
        output, errors = process.communicate(timeout=90)
        print(output, errors[-4000:], sep="\n")
    assert process.returncode == 0

    assert (beside.returncode, beside.stderr) == (0, "")
    found = json.loads(beside.stdout)
    assert found["lock_file"] == {
        "diagnostic": True,
        "found": True,
        "pid": process.pid,
        "started_at": found["lock_file"]["started_at"],
        "pid_status": "present",
        "configuration_problem": None,
    }
    assert found["running"] == "yes"
    assert found["write_failure"] is None
    assert found["queues"] == {
        "seen": 0,
        "admitted": 0,
        "queued": 0,
        "blocked": 0,
        "dispatched": 0,
        "completed": 1,
        "discarded": 0,
        "held": 0,
    }
    assert (found["blocked"], found["live_tasks"], found["waiting_for_person"], found["held"]) == (
        {},
        [],
        [],
        [],
    )
    ((event_id,),) = ledger_rows(state, "SELECT id FROM events")
    (dispatch,) = found["dispatches"]
    assert (dispatch["state"], dispatch["stop_reason"]) == ("ended", "finished")
    ((ack_id, reply_id),) = ledger_rows(state, "SELECT ack_id, reply_id FROM task_events")
    assert reply_id is not None
    assert dispatch["events"] == [
        {
            "event_id": event_id,
            "delivery": "completed",
            "outcome": "succeeded",
            "withdrawn": False,
            "record_state": "completed",
            "ack_id": ack_id,
            "reply_id": reply_id,
        }
    ]
    ((position, last_served_id),) = ledger_rows(state, "SELECT position, last_served_id FROM checkpoints")
    assert position, "the connector keeps a feed position"
    assert found["feed"] == [
        {"has_position": True, "last_served_id": last_served_id, "updated_at": found["feed"][0]["updated_at"]}
    ]
    assert found["summary"] == (
        f"running (lock file: pid {process.pid}, present) · 0 live tasks · 0 indeterminate messages · 0 blocked"
    )
    assert (text.returncode, text.stderr) == (0, "")
    assert text.stdout.splitlines()[0] == found["summary"]
    for output in (beside.stdout, text.stdout):
        assert position not in output
        assert standin.world.token not in output

    after = status(state, "--json")
    assert (after.returncode, after.stderr) == (0, "")
    stopped = json.loads(after.stdout)
    assert (stopped["running"], stopped["lock_file"]["found"]) == ("no", False)
    assert stopped["summary"].startswith("not running (no lock file) · ")
    assert stopped["queues"] == found["queues"]
