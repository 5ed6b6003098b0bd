"""Hostile answers cannot silence the connector: the real ``bin/connect run`` against the stand-in
behind a proxy that answers 100,000 nested arrays on each lane -- the feed (the poll lane), the
projects (membership, on intake's thread) and the stream ticket (the live lane) -- and then a
mention is still heard, and ``status`` says every loop turns.

Before ``core.json_input``, the parser's ``RecursionError`` (not a ``ValueError``) escaped the
membership read and the ticket's decoding: the intake and live-lane threads died, the process
stayed up, ``status`` said "running", and the mention was never heard."""

from __future__ import annotations

import json
import signal
import subprocess
from collections import Counter
from pathlib import Path

import pytest

from core.intake_status import LaneState
from shell.basecamp.standin.server import StandIn
from shell.ledger.connection import open_ledger_read_only
from shell.ledger.intake import read_lane_state
from tests.support.child import wait_until
from tests.support.configured import REPOSITORY, configure_connector, start_run
from tests.support.hostile_basecamp import Answered, HostileBasecamp

pytestmark = pytest.mark.slow
DEEP = b"[" * 100_000 + b"]" * 100_000
HOSTILE_ANSWERS = {"/events.json": 3, "/projects.json": 1, "/events/stream_ticket.json": 2}
"""How many answers of each kind are deep before Basecamp behaves again (the projects are read once
in ten minutes)."""


class DeepAnswers:
    """The first answers of each kind in ``HOSTILE_ANSWERS`` made deep; the rest as they are."""

    def __init__(self) -> None:
        self.given: Counter[str] = Counter()
        self.started = False

    def __call__(self, answer: Answered) -> Answered:
        kind = next((kind for kind in HOSTILE_ANSWERS if kind in answer.path.split("?")[0]), None)
        if kind is None or not self.started or self.given[kind] >= HOSTILE_ANSWERS[kind]:
            return answer
        self.given[kind] += 1
        return Answered(answer.path, answer.status, answer.headers, DEEP)

    def all_given(self) -> bool:
        return all(self.given[kind] >= count for kind, count in HOSTILE_ANSWERS.items())


def _live_lane(state: Path) -> LaneState | None:
    with open_ledger_read_only(state / "ledger.sqlite3") as ledger:
        lane = read_lane_state(ledger)
    return None if lane is None else lane.state


def test_a_deep_answer_on_each_lane_leaves_every_loop_turning_and_a_later_mention_heard(tmp_path: Path) -> None:
    deep = DeepAnswers()
    with StandIn(world="demo") as standin, HostileBasecamp(standin.base_url, deep) as hostile:
        state = configure_connector(standin, tmp_path, base_url=hostile.base_url)
        deep.started = True  # setup's own check is answered as it is
        process = start_run(state)
        try:
            wait_until(deep.all_given, timeout=90)
            wait_until(lambda: _live_lane(state) is LaneState.connected, timeout=90)  # it hears from now on
            card = standin.world.projects[0].recording_ids[0]
            standin.mention(standin.world.people[0], card, "please take a look")
            agent = standin.world.agent.id
            wait_until(
                lambda: any(message["creator"]["id"] == agent for message in standin.messages("comment", card)),
                timeout=90,
            )
            shown = subprocess.run(
                [str(REPOSITORY / "bin" / "connect"), "status", "--state-dir", str(state), "--json"],
                capture_output=True, text=True, timeout=60, check=True,
            )  # fmt: skip
        finally:
            process.send_signal(signal.SIGTERM)
            out, err = process.communicate(timeout=90)
            print(dict(deep.given), out[-3000:], err[-4000:])
    assert process.returncode == 0, err[-3000:]
    assert "RecursionError" not in err
    loops = json.loads(shown.stdout)["loops"]
    assert loops is not None, "status reads the running connector's heartbeats"
    assert {"intake", "dispatch", "outbox", "live"} <= set(loops)
    assert all(loop["turning"] for loop in loops.values()), loops
