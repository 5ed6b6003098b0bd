"""The outbox with the real client against the stand-in: the client's own pacing (47 requests in
any 10 s, shared by intake, admission and the outbox) is not a rate limit, so a window that
intake's polls filled never stops the outbox from claiming (found end to end at a 0.2 s poll:
a due guard still pending 20 s past due)."""

from __future__ import annotations

from pathlib import Path

from core.pacing import DEFAULT_LIMIT
from shell.basecamp.client import BasecampClient
from shell.basecamp.standin.server import StandIn
from shell.cli.run import USER_AGENT
from shell.clock import SystemClock
from shell.ledger.connection import open_ledger
from shell.outbox import Outbox, SendResult
from tests.support.ledger_world import LedgerWorld


def test_a_full_rate_window_is_not_a_429_the_outbox_still_claims(tmp_path: Path) -> None:
    with StandIn(world="demo") as standin:
        world = standin.world
        client = BasecampClient(standin.base_url, world.account_id, world.token, USER_AGENT)
        for _ in range(DEFAULT_LIMIT):  # what intake's polls do to the window, as reads that answered 200
            client.me(client.deadline_in(5))
        assert client.rate_limited_for() == 0, "a full pacing window is not a 429's Retry-After"
        state = tmp_path / "state"
        state.mkdir(mode=0o700)
        with open_ledger(state / "ledger.sqlite3", clock=SystemClock()) as ledger:
            ledger_world = LedgerWorld(ledger)
            ledger_world.seen(101, recording_id=world.projects[2].recording_ids[0])
            ledger_world.verdict(101, "blocked", "no_route")  # a holding reply, due at once
            outbox = Outbox(ledger, client, world.agent.id)
            results = outbox.flush(deadline=client.deadline_in(30)).results
            assert SendResult.waiting not in results
            assert ledger_world.outbox()[0][2] != "pending", "the due holding reply was claimed"
