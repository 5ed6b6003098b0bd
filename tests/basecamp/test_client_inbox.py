"""The client's inbox read (``shell.basecamp.client``): inside the one request budget, a poll's
yielding turn, its refusals read by ``core.feed``, a ``next`` only on the same origin."""

from __future__ import annotations

import pytest

from core.feed import ASKED_REASONS, InboxGone, NotForPrincipal
from shell.basecamp.errors import FeedFailed, InboxRefused
from shell.basecamp.standin.faults import Fault, FaultAction
from shell.basecamp.standin.server import StandIn
from shell.clock import FakeClock
from tests.basecamp.conftest import MakeClient


def test_the_inbox_read_waits_its_turn_in_the_one_budget_and_yields_like_a_feed_poll(
    standin: StandIn, make_client: MakeClient
) -> None:
    clock = FakeClock()
    client = make_client(clock=clock, requests_per_window=10, window_seconds=10.0)
    for _ in range(8):
        client.me()
    start = clock.monotonic()
    client.poll_inbox(None, None, start + 60)
    assert clock.monotonic() - start >= 5.0, "half the window spent: the inbox yields its turn"


def test_the_inbox_is_asked_for_the_mapped_reasons_and_refusals_are_read(
    standin: StandIn, make_client: MakeClient
) -> None:
    client = make_client()
    page = client.poll_inbox(0, None, client.deadline_in(10))
    assert page.items == ()
    standin.inbox.agents.clear()
    with pytest.raises(InboxRefused) as refused:
        client.poll_inbox(None, page.position, client.deadline_in(10))
    assert refused.value.refusal == NotForPrincipal()
    assert "position" not in str(refused.value).replace("the inbox refused the request", "")
    standin.inbox.agents.add(standin.world.agent.id)
    standin.add_fault(Fault(FaultAction.refuse, path_contains="inbox.json", status=410))
    with pytest.raises(InboxRefused) as gone:
        client.poll_inbox(None, page.position, client.deadline_in(10))
    assert gone.value.refusal == InboxGone()
    assert ",".join(ASKED_REASONS) == "assigned,mentioned,pinged,subscribed,watched"


def test_a_next_on_another_origin_is_refused(make_client: MakeClient) -> None:
    client = make_client()
    with pytest.raises(FeedFailed, match="another origin"):
        client.poll_inbox(None, None, client.deadline_in(10), next_url="http://evil.example/1/inbox.json")
