"""A lapsed token is an outage, not a refusal (``core.posting``'s not-created decision).

A 401 on a create -- after the client's one refresh -- used to cancel the intent as Basecamp's
refusal of the message, and the next due intent was claimed and refused the same way: one lapsed
token turned the whole due queue into refusals, each waiting for a person's ``resend``. Now the
claimed intent goes back to pending as not created, nothing more is claimed until a read with the
token succeeds, ``status`` and ``doctor`` name the outage, and sending resumes by itself.
"""

from __future__ import annotations

import itertools
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from core import notes
from shell.basecamp.client import BasecampClient
from shell.basecamp.standin.faults import Fault, FaultAction
from shell.basecamp.standin.server import StandIn
from shell.cli.run import USER_AGENT
from shell.clock import FakeClock, SystemClock
from shell.ledger.connection import open_ledger
from shell.outbox import Outbox, SendResult
from tests.support.configured import REPOSITORY, configure_connector
from tests.support.fake_basecamp import FakeBasecamp, Post
from tests.support.ids import nth_intent
from tests.support.ledger_world import LedgerWorld


def test_a_401_returns_the_claim_to_pending_and_nothing_more_is_claimed_until_a_read_succeeds(
    world: LedgerWorld, outbox: Outbox, basecamp: FakeBasecamp, clock: FakeClock
) -> None:
    for event_id in (101, 102, 103):
        world.request(event_id)
    clock.advance(31)
    basecamp.posts = [Post.unauthorized]
    basecamp.reachable = False  # the probe's read is refused too
    assert outbox.flush().results == [SendResult.retry, SendResult.waiting]
    assert outbox.flush().results == [SendResult.waiting]
    assert basecamp.post_count() == 1, "one refused create, not a queue of refusals"
    assert world.outbox()[0] == (nth_intent(1), "guard_ack", "pending", notes.TOKEN_REFUSED)
    assert all(not notes.resendable(note) for _, _, _, note in world.outbox()), "nothing for a person"
    basecamp.reachable = True  # a token works again
    assert outbox.flush().count(SendResult.sent) == 3, "the refused one is due at once, with the rest"
    assert [state for _, _, state, _ in world.outbox()] == ["sent", "sent", "sent"]


@pytest.mark.parametrize(("outage", "blip"), list(itertools.product(
    [Post.unauthorized, Post.not_connected], [Post.rate_limited, Post.not_connected],
)))  # fmt: skip
def test_an_outage_over_a_day_then_a_blip_as_sending_resumes_is_retried_never_given_up(
    world: LedgerWorld, outbox: Outbox, basecamp: FakeBasecamp, clock: FakeClock, *, outage: Post, blip: Post
) -> None:
    """The outage the outbox waited out never counted against the message: the bound measures
    tries while Basecamp answered, and a 401 is never given up."""
    world.request(7_401)
    clock.advance(31)
    basecamp.posts = [outage]
    basecamp.reachable = False
    assert outbox.flush().results[0] is SendResult.retry
    for _ in range(25 * 4):  # the outage: each tick's probe fails, nothing is claimed
        clock.advance(15 * 60)
        assert outbox.flush().results == [SendResult.waiting]
    basecamp.reachable = True
    basecamp.posts = [blip]  # the first answer as a day's backlog flushes
    assert outbox.flush().results[0] is SendResult.retry
    assert world.outbox()[0][2] == "pending", "not given up for a person"
    clock.advance(31 * 60)
    outbox.flush()
    assert world.outbox()[0][2:] == ("sent", "")
    assert basecamp.post_count() == 3


def shown(command: str, state: Path) -> dict[str, Any]:
    ran = subprocess.run(
        [str(REPOSITORY / "bin" / "connect"), command, "--state-dir", str(state), "--json"],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert ran.stdout, ran.stderr
    found: dict[str, Any] = json.loads(ran.stdout)
    return found


def token_check(state: Path) -> dict[str, str]:
    return next(check for check in shown("doctor", state)["checks"] if check["name"] == "token")


@pytest.mark.slow
def test_a_lapsed_token_stops_sending_is_named_by_status_and_doctor_and_sending_resumes(tmp_path: Path) -> None:
    with StandIn(world="demo") as standin:
        world = standin.world
        state = configure_connector(standin, tmp_path)
        card = world.projects[2].recording_ids[0]  # no route: a holding reply each, due at once
        with open_ledger(state / "ledger.sqlite3", clock=SystemClock()) as ledger:
            ledger_world = LedgerWorld(ledger)
            for event_id in (101, 102):
                ledger_world.seen(event_id, recording_id=card)
                ledger_world.verdict(event_id, "blocked", "no_route")
            standin.add_fault(Fault(FaultAction.refuse, method="POST", status=401, times=None))
            standin.add_fault(Fault(FaultAction.refuse, method="GET", status=401, times=None))
            client = BasecampClient(standin.base_url, world.account_id, world.token, USER_AGENT)
            outbox = Outbox(ledger, client, world.agent.id)

            assert outbox.flush(deadline=client.deadline_in(30)).results == [SendResult.retry, SendResult.waiting]
            assert [(state, note) for _, _, state, note in ledger_world.outbox()] == [
                ("pending", notes.TOKEN_REFUSED), ("pending", ""),
            ]  # fmt: skip
            assert outbox.flush(deadline=client.deadline_in(30)).results == [SendResult.waiting]
            assert standin.post_count() == 1, "sending stopped at the first 401"

            status = shown("status", state)
            assert status["token_outage"]["messages_waiting"] == 2
            assert "token failing since" in status["summary"]
            assert status["waiting_for_person"] == [], "nothing became a person's resend"
            check = token_check(state)
            assert (check["status"], "refused (401" in check["detail"]) == ("failing", True)

            standin.clear_faults()  # a token works again
            assert outbox.flush(deadline=client.deadline_in(30)).count(SendResult.sent) == 2
            assert [state for _, _, state, _ in ledger_world.outbox()] == ["sent", "sent"]
            assert shown("status", state)["token_outage"] is None
            assert "refused (401" not in token_check(state)["detail"]
