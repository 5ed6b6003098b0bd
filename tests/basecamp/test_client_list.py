"""The listing: every message of the agent at a destination since a time, or an exception.

A shorter answer would read as "never posted", so every way a walk can be cut short must
raise instead: a page limit, a 403/404, a bad Link, a deadline, a failing page.
"""

import threading
import time
from datetime import UTC, datetime, timedelta

import pytest

from core.destinations import Destination, MessageKind
from shell.basecamp.client import MAX_PAGES
from shell.basecamp.errors import ListingFailed, Unlistable
from shell.basecamp.standin.faults import Fault, FaultAction, RateLimit
from shell.basecamp.standin.server import StandIn
from shell.clock import FakeClock
from tests.basecamp.conftest import MakeClient

LONG_AGO = datetime(2020, 1, 1, tzinfo=UTC)


def where(standin: StandIn, kind: MessageKind) -> Destination:
    project = standin.world.projects[0]
    recording = project.campfire_id if kind is MessageKind.chat_line else project.recording_ids[0]
    return Destination(kind, project.id, recording)


def seed(
    standin: StandIn, destination: Destination, creator_id: int, count: int, start: datetime
) -> list[int]:
    return [
        standin.seed_message(
            str(destination.kind),
            destination.recording_id,
            creator_id,
            f"message {n}",
            start + timedelta(seconds=n),
        )
        for n in range(count)
    ]


@pytest.mark.parametrize("kind", list(MessageKind), ids=str)
def test_a_listing_walks_every_page_and_keeps_only_the_agents_since(
    standin: StandIn, make_client: MakeClient, kind: MessageKind
) -> None:
    destination = where(standin, kind)
    agent, other = standin.world.agent.id, standin.world.people[0].id
    start = datetime(2026, 6, 1, tzinfo=UTC)
    old = seed(standin, destination, agent, 3, start - timedelta(days=1))
    mine = seed(standin, destination, agent, 7, start)
    seed(standin, destination, other, 4, start)
    client = make_client()
    listed = client.list(destination, start, agent, client.deadline_in(10))
    assert sorted(message.id for message in listed) == sorted(mine)
    assert not set(old) & {message.id for message in listed}
    assert all(message.creator_id == agent for message in listed)
    assert {message.text for message in listed} == {f"message {n}" for n in range(7)}


def test_campfire_lines_are_read_newest_first_and_stop_at_the_first_older_line(
    standin: StandIn, make_client: MakeClient
) -> None:
    destination = where(standin, MessageKind.chat_line)
    agent = standin.world.agent.id
    start = datetime(2026, 6, 1, tzinfo=UTC)
    seed(standin, destination, agent, 20, start - timedelta(days=1))
    recent = seed(standin, destination, agent, 3, start)
    client = make_client()
    listed = client.list(destination, start, agent, client.deadline_in(10))
    assert sorted(message.id for message in listed) == sorted(recent)
    gets = [request for request in standin.requests() if request.method == "GET"]
    assert all(request.query.get("direction") == "desc" for request in gets[:1])
    assert len(gets) == 2, "3 recent lines on pages of 2: the second page reaches back, so the walk stops"


def test_a_line_shifted_across_pages_is_one_message(standin: StandIn, make_client: MakeClient) -> None:
    destination = where(standin, MessageKind.chat_line)
    agent = standin.world.agent.id
    start = datetime.now(UTC) - timedelta(minutes=5)
    ids = seed(standin, destination, agent, 4, start + timedelta(seconds=1))  # Basecamp keeps milliseconds
    standin.add_fault(
        Fault(action=FaultAction.hang, method="GET", path_contains="/lines.json", delay=0.6, times=None)
    )
    client = make_client()
    results: list[list[int]] = []
    walker = threading.Thread(
        target=lambda: results.append(
            [message.id for message in client.list(destination, start, agent, client.deadline_in(20))]
        )
    )
    walker.start()
    time.sleep(0.8)  # page 1 answered; a new line arrives before page 2 is served
    newest = standin.seed_message(
        "chat_line", destination.recording_id, agent, "a new line", datetime.now(UTC)
    )
    walker.join()
    (listed,) = results
    assert len(listed) == len(set(listed))
    assert set(ids) <= set(listed)
    assert newest not in listed or listed.count(newest) == 1


def test_more_than_the_page_limit_is_unlistable_not_short(standin: StandIn, make_client: MakeClient) -> None:
    destination = where(standin, MessageKind.comment)
    agent = standin.world.agent.id
    seed(standin, destination, agent, 2 * MAX_PAGES + 1, datetime(2026, 6, 1, tzinfo=UTC))
    standin.limiter.set_limit(RateLimit.off())  # 200 pages at Basecamp's 50 per 10 s took 30 s of 429s
    client = make_client()
    with pytest.raises(Unlistable, match="200 pages"):
        client.list(destination, LONG_AGO, agent, client.deadline_in(60))


@pytest.mark.parametrize("status", [403, 404])
def test_a_forbidden_or_missing_destination_is_unlistable(
    standin: StandIn, make_client: MakeClient, status: int
) -> None:
    standin.add_fault(Fault(action=FaultAction.refuse, method="GET", status=status))
    client = make_client()
    with pytest.raises(Unlistable):
        client.list(
            where(standin, MessageKind.comment), LONG_AGO, standin.world.agent.id, client.deadline_in(5)
        )
    assert len(standin.requests()) == 1, "a 403 or 404 is never asked again"


def test_a_bad_link_fails_the_listing_instead_of_answering_short(
    standin: StandIn, make_client: MakeClient
) -> None:
    destination = where(standin, MessageKind.comment)
    seed(standin, destination, standin.world.agent.id, 5, datetime(2026, 6, 1, tzinfo=UTC))
    standin.add_fault(Fault(action=FaultAction.bad_link, method="GET"))
    client = make_client()
    with pytest.raises(ListingFailed, match="another origin"):
        client.list(destination, LONG_AGO, standin.world.agent.id, client.deadline_in(5))
    assert len(standin.requests()) == 1, "nothing is requested from the other origin"


def test_a_failing_page_fails_the_whole_listing(standin: StandIn, make_client: MakeClient) -> None:
    destination = where(standin, MessageKind.comment)
    seed(standin, destination, standin.world.agent.id, 5, datetime(2026, 6, 1, tzinfo=UTC))
    standin.add_fault(
        Fault(action=FaultAction.server_error, method="GET", path_contains="comments.json", status=500)
    )
    client = make_client()
    with pytest.raises(ListingFailed):
        client.list(destination, LONG_AGO, standin.world.agent.id, client.deadline_in(5))
    assert len(standin.requests()) == 1, "a 500 is not retried"


def test_a_listing_never_outlives_its_deadline(standin: StandIn, make_client: MakeClient) -> None:
    standin.add_fault(Fault(action=FaultAction.hang, method="GET", delay=3.0))
    client = make_client()
    started = time.monotonic()
    with pytest.raises(ListingFailed):
        client.list(
            where(standin, MessageKind.boost), LONG_AGO, standin.world.agent.id, client.deadline_in(0.5)
        )
    assert time.monotonic() - started < 1.5


def test_503_is_retried_with_backoff_then_answers_whole(standin: StandIn, make_client: MakeClient) -> None:
    destination = where(standin, MessageKind.comment)
    mine = seed(standin, destination, standin.world.agent.id, 3, datetime(2026, 6, 1, tzinfo=UTC))
    standin.add_fault(Fault(action=FaultAction.server_error, method="GET", status=503, times=2))
    clock = FakeClock()
    client = make_client(clock=clock)
    before = clock.monotonic()
    listed = client.list(destination, LONG_AGO, standin.world.agent.id, client.deadline_in(60))
    assert sorted(message.id for message in listed) == sorted(mine)
    assert 3.0 <= clock.monotonic() - before <= 3.3, "waited 1 s then 2 s, plus at most 100 ms of jitter each"


def test_three_503s_fail_the_listing(standin: StandIn, make_client: MakeClient) -> None:
    standin.add_fault(Fault(action=FaultAction.server_error, method="GET", status=503, times=None))
    client = make_client(clock=FakeClock())
    with pytest.raises(ListingFailed):
        client.list(
            where(standin, MessageKind.comment), LONG_AGO, standin.world.agent.id, client.deadline_in(60)
        )
    assert len(standin.requests()) == 3


def test_a_429_waits_out_its_retry_after(standin: StandIn, make_client: MakeClient) -> None:
    standin.add_fault(Fault(action=FaultAction.rate_limit, method="GET", retry_after="7"))
    clock = FakeClock()
    client = make_client(clock=clock)
    before = clock.monotonic()
    client.list(where(standin, MessageKind.comment), LONG_AGO, standin.world.agent.id, client.deadline_in(60))
    assert clock.monotonic() - before >= 7.0
    assert len(standin.requests()) == 2


def test_a_retry_that_would_pass_the_deadline_is_not_waited(
    standin: StandIn, make_client: MakeClient
) -> None:
    standin.add_fault(Fault(action=FaultAction.rate_limit, method="GET", retry_after="100"))
    clock = FakeClock()
    client = make_client(clock=clock)
    before = clock.monotonic()
    with pytest.raises(ListingFailed, match="deadline"):
        client.list(
            where(standin, MessageKind.comment), LONG_AGO, standin.world.agent.id, client.deadline_in(30)
        )
    assert len(standin.requests()) == 1
    assert clock.monotonic() - before < 1, "it did not sit out a wait it knew would pass the deadline"


def test_a_lagging_message_is_absent_until_it_shows(standin: StandIn, make_client: MakeClient) -> None:
    destination = where(standin, MessageKind.comment)
    standin.add_fault(Fault(action=FaultAction.lag, method="POST", delay=0.5))
    client = make_client()
    posted = client.post(destination, "<div>slow to show</div>")
    agent = standin.world.agent.id
    assert client.list(destination, LONG_AGO, agent, client.deadline_in(5)) == []
    time.sleep(0.6)
    assert [message.id for message in client.list(destination, LONG_AGO, agent, client.deadline_in(5))] == [
        getattr(posted, "id", None)
    ]


def test_the_client_paces_itself_under_the_rate_limit(standin: StandIn, make_client: MakeClient) -> None:
    clock = FakeClock()
    client = make_client(clock=clock, requests_per_window=3, window_seconds=10.0)
    before = clock.monotonic()
    for _ in range(4):
        client.me()
    assert clock.monotonic() - before >= 10.0
    assert len(standin.requests()) == 4


def test_me_names_the_agent_and_a_wrong_token_is_refused(standin: StandIn, make_client: MakeClient) -> None:
    from shell.basecamp.errors import AuthenticationFailed

    assert make_client().me().id == standin.world.agent.id
    with pytest.raises(AuthenticationFailed):
        make_client(token="not-the-token").me()
