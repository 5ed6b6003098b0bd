"""The outbox with the real client against the stand-in: the client's own pacing (47 requests in
any 10 s, shared by intake, admission and the outbox) is not a rate limit, so a window that
intake's polls filled never stops the outbox from claiming (found end to end at a 0.2 s poll:
a due guard still pending 20 s past due)."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from pathlib import Path

from core import notes
from core.pacing import DEFAULT_LIMIT
from shell.basecamp.client import BasecampClient
from shell.basecamp.standin.faults import Fault, FaultAction, RateLimit
from shell.basecamp.standin.server import StandIn
from shell.cli.run import USER_AGENT
from shell.clock import FakeClock, SystemClock
from shell.ledger.connection import open_ledger
from shell.outbox import Outbox, SendResult
from tests.support.ledger_world import LedgerWorld
from tests.support.ports import held_port

WINDOW = 2.0


def test_a_full_rate_window_is_not_a_429_the_outbox_still_claims(tmp_path: Path) -> None:
    # Basecamp's 50 requests and the connector's 47 per window, in a 2 s window instead of 10 s:
    # the claim waits for the window's first turn to come back, not 10 s of it
    with StandIn(world="demo", rate_limit=RateLimit(50, WINDOW)) as standin:
        world = standin.world
        client = BasecampClient(
            standin.base_url, world.account_id, world.token, USER_AGENT, window_seconds=WINDOW
        )
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


def _same_tokens() -> Callable[[], str]:
    """Tokens a restarted stand-in hands out again, in the same order."""
    counter = itertools.count()
    return lambda: f"token-{next(counter)}"


def _holding_reply(ledger_world: LedgerWorld, recording_id: int) -> None:
    ledger_world.seen(101, recording_id=recording_id)
    ledger_world.verdict(101, "blocked", "no_route")  # a holding reply, due at once


def test_a_post_that_never_connects_goes_back_to_pending_and_lands_once_basecamp_is_back(
    tmp_path: Path,
) -> None:
    clock = FakeClock()
    state = tmp_path / "state"
    state.mkdir(mode=0o700)
    with held_port() as port, open_ledger(state / "ledger.sqlite3", clock=clock) as ledger:
        down = StandIn(world="demo", port=port, make_token=_same_tokens())  # never served: then closed
        world = down.world
        down.stop()  # the port stays held: nothing answers there, and no other process takes it
        client = BasecampClient(
            f"http://127.0.0.1:{port}", world.account_id, world.token, USER_AGENT, clock=clock
        )
        recording_id = world.projects[2].recording_ids[0]
        ledger_world = LedgerWorld(ledger)
        _holding_reply(ledger_world, recording_id)
        outbox = Outbox(ledger, client, world.agent.id)
        assert outbox.flush(deadline=client.deadline_in(10)).results[0] is SendResult.retry
        assert ledger_world.outbox() == [(1, "holding_reply", "pending", notes.NOT_CONNECTED)]
        with StandIn(world="demo", port=port, make_token=_same_tokens()) as standin:
            clock.advance(31)
            for _ in range(3):
                outbox.run_once()
            assert ledger_world.outbox() == [(1, "holding_reply", "sent", "")]
            assert len(standin.messages("comment", recording_id)) == 1
            assert standin.post_count() == 1


def test_a_429_ends_in_exactly_one_message_once_basecamp_is_back(tmp_path: Path) -> None:
    clock = FakeClock()
    with StandIn(world="demo") as standin:
        world = standin.world
        client = BasecampClient(standin.base_url, world.account_id, world.token, USER_AGENT, clock=clock)
        recording_id = world.projects[2].recording_ids[0]
        standin.add_fault(Fault(FaultAction.rate_limit, method="POST", retry_after="90"))
        state = tmp_path / "state"
        state.mkdir(mode=0o700)
        with open_ledger(state / "ledger.sqlite3", clock=clock) as ledger:
            ledger_world = LedgerWorld(ledger)
            _holding_reply(ledger_world, recording_id)
            outbox = Outbox(ledger, client, world.agent.id)
            assert outbox.flush(deadline=client.deadline_in(10)).results[0] is SendResult.retry
            assert ledger_world.outbox() == [(1, "holding_reply", "pending", notes.RATE_LIMITED)]
            clock.advance(60)
            outbox.run_once()
            assert standin.post_count() == 1, "not asked again before its Retry-After"
            clock.advance(31)
            for _ in range(3):
                outbox.run_once()
            assert ledger_world.outbox() == [(1, "holding_reply", "sent", "")]
            assert len(standin.messages("comment", recording_id)) == 1
            assert standin.post_count() == 2
