"""A SIGTERM while the adopted-reply rule lists a worker's reply destination: `bin/connect run` as a
real process against the stand-in, whose listing of that destination hangs. The stop ends
within its bound, and the attempt ends with its real reason (the worker replied, never reported
and exited: ``finished``), its completion notice sent, and the reply destination it never
finished listing "not known": nothing adopted, nothing guessed. Never left live for the next
start to end ``lost``."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from shell.basecamp.standin.faults import Fault, FaultAction
from shell.basecamp.standin.server import StandIn
from shell.ledger.connection import open_ledger_read_only
from tests.support.child import wait_until
from tests.support.configured import POLL_SECONDS, configure_connector

pytestmark = pytest.mark.slow
REPOSITORY = Path(__file__).resolve().parents[2]
SHUTDOWN_SECONDS = 10  # the outbox claims only with 5 s left (core.posting.MIN_POST_WINDOW)


def test_sigterm_during_a_reply_listing_settles_the_attempt_with_its_reason_within_the_bound(
    tmp_path: Path,
) -> None:
    scenes = tmp_path / "scenes.json"
    scenes.write_text("{}")
    with StandIn(world="demo") as standin:
        state = configure_connector(standin, tmp_path, scenes=scenes)
        card = standin.world.projects[0].recording_ids[0]
        listing = f"/recordings/{card}/comments.json"
        standin.add_fault(Fault(FaultAction.hang, method="GET", path_contains=listing, delay=120))
        environment = {key: value for key, value in os.environ.items() if key != "CONNECTOR_PAUSE_AT"}
        process = subprocess.Popen(
            [
                str(REPOSITORY / "bin" / "connect"), "--verbose", "run", "--state-dir", str(state),
                "--poll-seconds", str(POLL_SECONDS), "--shutdown-seconds", str(SHUTDOWN_SECONDS),
            ],
            env=environment, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        try:
            assert process.stdout is not None
            assert process.stdout.readline().startswith("running account=")
            event = standin.mention(standin.world.people[0], card, "please take a look")
            scenes.write_text(json.dumps({str(event): "reply_unreported"}))  # replies, never reports
            wait_until(lambda: any(r.method == "GET" and listing in r.path for r in standin.requests()), timeout=60)
        finally:
            asked = time.monotonic()
            process.send_signal(signal.SIGTERM)
            _, errors = process.communicate(timeout=60)  # the listing's answer is 120 s away
        took = time.monotonic() - asked
        assert process.returncode == 0, errors[-2000:]
        assert took < SHUTDOWN_SECONDS + 2, f"the stop took {took:.1f} s"
        with open_ledger_read_only(state / "ledger.sqlite3") as ledger, ledger.read() as connection:
            attempts = connection.execute("SELECT state, stop_reason FROM attempts").fetchall()
            notices = connection.execute("SELECT state FROM outbox WHERE kind = 'completion'").fetchall()
            (adopted,) = connection.execute("SELECT adopted_reply_id FROM task_events").fetchone()
        assert [tuple(row) for row in attempts] == [("ended", "finished")], errors[-2000:]
        assert [tuple(row) for row in notices] == [("sent",)], errors[-1500:]
        assert adopted is None, "the destination was never listed: nothing adopted, nothing guessed"
