"""One budget for every request: posts, reads and feed polls share the client's pacer, a feed
poll yields to a backlog within a bound, and together they draw no 429 from a stand-in that
enforces the limit."""

from __future__ import annotations

import itertools
import threading

import pytest

from core.destinations import Destination, MessageKind
from core.feed import FeedFilters
from core.pacing import poll_may_go, spacing_wait
from core.posting import Created
from shell.basecamp.client import BasecampClient, Pacer
from shell.basecamp.errors import BasecampError
from shell.basecamp.standin.faults import RateLimit
from shell.basecamp.standin.server import StandIn
from shell.clock import FakeClock
from tests.basecamp.conftest import MakeClient


def test_a_poll_goes_while_the_window_has_headroom_and_waits_while_half_of_it_is_spent() -> None:
    assert poll_may_go([0.0] * 4, 1.0, 0.0, limit=10, window=10)
    assert not poll_may_go([0.0] * 5, 1.0, 0.0, limit=10, window=10)
    assert poll_may_go([0.0] * 5, 10.5, 0.0, limit=10, window=10)  # they left the window


def test_a_poll_never_yields_longer_than_its_bound() -> None:
    assert not poll_may_go([0.0] * 10, 1.0, 19.9, bound=20.0, limit=10, window=10)
    assert poll_may_go([0.0] * 10, 1.0, 20.0, bound=20.0, limit=10, window=10)


def test_a_poll_waits_for_headroom_where_any_other_request_goes_at_once() -> None:
    clock = FakeClock()
    pacer = Pacer(clock, limit=10, window=10.0)
    for _ in range(8):
        assert pacer.take_turn(None)
    start = clock.monotonic()
    assert pacer.take_turn(None)  # a post or a read: there is room, one spacing away
    assert clock.monotonic() - start <= 1.0
    start = clock.monotonic()
    assert pacer.take_turn(None, yielding=True)  # a poll: half the window is spent
    assert clock.monotonic() - start >= 5.0


def test_a_poll_yields_within_its_bound_and_half_its_deadline() -> None:
    clock = FakeClock()
    pacer = Pacer(clock, limit=10, window=10.0)
    for _ in range(9):
        assert pacer.take_turn(None)
    start = clock.monotonic()
    assert pacer.take_turn(start + 8.0, yielding=True)
    assert 4.0 <= clock.monotonic() - start < 5.0


def test_posts_and_polls_together_draw_no_429_from_a_limited_stand_in() -> None:
    with StandIn(world="empty", rate_limit=RateLimit(10, 1.0)) as standin:
        client = BasecampClient(
            standin.base_url,
            standin.world.account_id,
            standin.world.token,
            "basecamp-connector tests (tests@example.com)",
            requests_per_window=8,
            window_seconds=1.0,
        )
        card = Destination(
            MessageKind.comment, standin.world.projects[0].id, standin.world.projects[0].recording_ids[0]
        )
        outcomes: list[object] = []
        pages: list[object] = []

        def poll() -> None:
            for _ in range(3):
                pages.append(client.poll_events(None, None, FeedFilters.of(), client.deadline_in(10)))

        poller = threading.Thread(target=poll)
        poller.start()
        for number in range(25):
            outcomes.append(client.post(card, f"<div>message {number}</div>", client.deadline_in(10)))
        poller.join()
        statuses = [request.status for request in standin.requests()]
    assert all(isinstance(outcome, Created) for outcome in outcomes)
    assert len(pages) == 3
    assert 429 not in statuses
    assert len(statuses) == 28


def test_the_clients_feed_poll_yields_where_its_reads_do_not(
    standin: StandIn, make_client: MakeClient
) -> None:
    clock = FakeClock()
    client = make_client(clock=clock, requests_per_window=10, window_seconds=10.0)
    for _ in range(8):
        client.me()
    start = clock.monotonic()
    client.me()
    assert clock.monotonic() - start <= 1.0
    start = clock.monotonic()
    client.poll_events(None, None, FeedFilters.of(), start + 60)
    assert clock.monotonic() - start >= 5.0


def test_with_half_the_window_spent_turns_are_evenly_spaced() -> None:
    assert spacing_wait([0.0] * 4, 0.5, limit=10, window=10) == 0.0
    assert spacing_wait([0.0] * 5, 0.5, limit=10, window=10) == 0.5
    assert spacing_wait([0.0] * 5, 2.0, limit=10, window=10) == 0.0


def test_a_drain_goes_evenly_so_an_urgent_turn_waits_at_most_one_spacing() -> None:
    clock = FakeClock()
    pacer = Pacer(clock, limit=10, window=10.0)
    moments = []
    for _ in range(40):
        assert pacer.take_turn(None)
        moments.append(clock.monotonic())
    gaps = [later - earlier for earlier, later in itertools.pairwise(moments[10:])]
    assert max(gaps) <= 1.0 + 1e-9, "no burst, so no long pause a window later"


def test_a_stream_ticket_past_its_share_of_the_budget_is_not_asked(make_client: MakeClient,
                                                                    standin: StandIn) -> None:
    clock = FakeClock()
    client = make_client(clock, requests_per_window=47)  # 2 tickets in any 10 s
    deadline = clock.monotonic() + 60
    for _ in range(2):
        client.stream_ticket(deadline)
    assert client.ticket_wait() == 10.0
    with pytest.raises(BasecampError, match="at most 2 in any 10 s"):
        client.stream_ticket(deadline)
    assert standin.post_count("stream_ticket") == 2, "the third was never asked"
    clock.advance(10.0)
    assert client.ticket_wait() == 0.0
    client.stream_ticket(clock.monotonic() + 60)
    assert standin.post_count("stream_ticket") == 3
