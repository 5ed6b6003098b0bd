"""`bin/connect run` as a real process with a login's token that expires every 6 s: requests
made across several expiries, and across a token Launchpad suddenly stops honouring (a 401),
are each answered exactly once; the connector refreshed, and kept the new pair in the file."""

from __future__ import annotations

import signal
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from core.oauth import Credentials, read_token_text
from shell.basecamp.standin.server import StandIn
from shell.cli.main import main as connect
from shell.ledger.connection import open_ledger_read_only
from tests.support.child import wait_until
from tests.support.configured import configure_connector, start_run
from tests.support.launchpad import token_file_with

pytestmark = pytest.mark.slow
LIFETIME = 6  # refreshed 1.5 s before it expires (a quarter of its life)


@pytest.fixture
def standin() -> Iterator[StandIn]:
    with StandIn(world="demo") as server:
        yield server


def test_the_connector_runs_across_token_expiries_with_nothing_lost_or_doubled(
    standin: StandIn, tmp_path: Path
) -> None:
    world = standin.world
    agent = world.agent.id
    state = configure_connector(standin, tmp_path, routed=(0, 1))
    standin.launchpad.token_lifetime = LIFETIME
    credentials_file = tmp_path / "agent.credentials"
    first = token_file_with(standin, credentials_file)
    assert connect(["setup", "--state-dir", str(state), "--token-file", str(credentials_file)]) == 0
    cards = [*world.projects[0].recording_ids, *world.projects[1].recording_ids]
    process = start_run(state)
    try:
        for number, card in enumerate(cards):
            if number == 1:
                # Launchpad stops honouring a token the connector still counts good: a 401, once.
                # Right after a refresh, so the token has most of its life left; expired any later,
                # it may be one the connector replaces before its next request anyway (the shared
                # budget spaces fast polls out, so requests can pause for seconds), and then no
                # request is ever made with it.
                refreshed = standin.launchpad.refreshes
                wait_until(lambda refreshed=refreshed: standin.launchpad.refreshes > refreshed, timeout=30)
                standin.launchpad.expire_all()
            standin.mention(world.people[0], card, f"request {number}")
            wait_until(lambda card=card: _answers(standin, card, agent) == 1, timeout=30)
            if number < len(cards) - 1:
                time.sleep(LIFETIME)  # the next one after the token it was answered with expired
    finally:
        process.send_signal(signal.SIGTERM)
        output, errors = process.communicate(timeout=90)
        print(output, errors[-4000:], sep="\n")
    assert process.returncode == 0
    assert [_answers(standin, card, agent) for card in cards] == [1, 1, 1], "nothing lost, nothing doubled"
    with open_ledger_read_only(state / "ledger.sqlite3") as ledger, ledger.read() as connection:
        assert connection.execute("SELECT DISTINCT state FROM events").fetchall() == [("completed",)]
        # The worker's own words go through the outbox too; no notice of the connector's own was needed.
        assert connection.execute(
            "SELECT kind FROM outbox WHERE state = 'sent' AND kind NOT LIKE 'worker_%'"
        ).fetchall() == []
    kept = read_token_text(credentials_file.read_text())
    assert isinstance(kept, Credentials)
    assert kept.access_token != first.access_token
    assert standin.launchpad.refreshes >= 3, "refreshed before each expiry"
    refused = [r for r in standin.requests() if r.status == 401]
    assert 1 <= len(refused) <= 3, "the token Launchpad stopped honouring: refused, refreshed, asked once more"
    for secret in (first.access_token, kept.access_token, kept.refresh_token):
        assert secret not in output + errors


def _answers(standin: StandIn, card: int, agent: int) -> int:
    return len([m for m in standin.messages("comment", card) if m["creator"]["id"] == agent])
