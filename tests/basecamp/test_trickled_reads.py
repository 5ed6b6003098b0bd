"""Every client call returns by its deadline when the stand-in trickles its answer (the headers at
once, then a byte of body at a time, each quicker than any one recv's timeout): found in a
security review, 6 of 7 calls outlived a 6 s deadline at 40 s. And the start's stop cuts a read
short (``BasecampClient.reads_stopped_by``), where a create goes on."""

from __future__ import annotations

import json
import threading
import time
import urllib.request
from collections.abc import Callable
from datetime import UTC, datetime

import pytest
from urllib3.connection import HTTPConnection

from core.destinations import Destination, MessageKind
from core.feed import FeedFilters
from core.oauth import TOKEN_PATH, app, refresh_form
from core.posting import Created
from shell.basecamp import tokens
from shell.basecamp.client import BasecampClient
from shell.basecamp.errors import BasecampError
from shell.basecamp.standin.control import SECRET_HEADER
from shell.basecamp.standin.faults import Fault, FaultAction
from shell.basecamp.standin.launchpad import CLIENT_ID
from shell.basecamp.standin.server import StandIn
from shell.basecamp.wire import Watchdog
from tests.basecamp.conftest import MakeClient
from tests.support.child import wait_until

BYTE_EVERY = 0.3  # far within a recv's timeout: only a bound on the whole exchange ends the read
DEADLINE = 1.0
SLACK = 0.6

Call = Callable[[BasecampClient, float], object]
A_COMMENT = Destination(MessageKind.comment, 1, 2)
CALLS: dict[str, tuple[str, Call]] = {
    "me": ("/my/profile.json", lambda client, deadline: client.me(deadline)),
    "probe": ("/my/profile.json", lambda client, deadline: client.probe(deadline)),
    "list": ("/comments.json", lambda client, deadline: client.list(
        A_COMMENT, datetime(2026, 1, 1, tzinfo=UTC), 42, deadline)),
    "projects": ("/projects.json", lambda client, deadline: client.projects(deadline)),
    "poll_events": ("/events.json", lambda client, deadline: client.poll_events(
        None, None, FeedFilters.of(), deadline)),
    "poll_inbox": ("/inbox.json", lambda client, deadline: client.poll_inbox(None, None, deadline)),
    "stream_ticket": ("/stream_ticket.json", lambda client, deadline: client.stream_ticket(deadline)),
    "post": ("/comments.json", lambda client, deadline: client.post(A_COMMENT, "<div>hi</div>", deadline)),
}


def _trickle(standin: StandIn, path: str, method: str) -> None:
    """Through the control API, as a second process would add it."""
    fault = {"action": "trickle", "method": method, "path_contains": path, "delay": BYTE_EVERY, "times": None}
    request = urllib.request.Request(
        f"{standin.base_url}/__standin/faults", data=json.dumps(fault).encode(), method="POST",
        headers={SECRET_HEADER: standin.control_secret, "Content-Type": "application/json"})  # fmt: skip
    with urllib.request.urlopen(request, timeout=5) as answer:
        assert answer.status == 201


@pytest.mark.parametrize("name", sorted(CALLS))
def test_every_client_call_returns_by_its_deadline_when_the_answer_trickles(
    standin: StandIn, make_client: MakeClient, name: str
) -> None:
    path, call = CALLS[name]
    method = "POST" if name in ("post", "stream_ticket") else "GET"
    _trickle(standin, path, method)
    client = make_client()
    started = time.monotonic()
    try:
        outcome: object = call(client, started + DEADLINE)
    except BasecampError as error:
        outcome = error
    took = time.monotonic() - started
    assert took < DEADLINE + SLACK, f"{name} ran {took:.1f} s past a {DEADLINE} s deadline ({outcome!r})"
    assert not isinstance(outcome, Created)
    asked = [request for request in standin.requests() if path in request.path]
    assert [request.fault for request in asked] == [FaultAction.trickle], "asked once, never again"


def test_a_read_timeout_bounds_the_whole_exchange_too(standin: StandIn, make_client: MakeClient) -> None:
    _trickle(standin, "/projects.json", "GET")
    client = make_client(read_timeout=DEADLINE)
    started = time.monotonic()
    with pytest.raises(BasecampError, match="no whole answer before the deadline"):
        client.projects(started + 60)
    assert time.monotonic() - started < DEADLINE + SLACK


def test_a_trickled_answer_within_the_deadline_is_read_whole(standin: StandIn, make_client: MakeClient) -> None:
    standin.add_fault(Fault(FaultAction.trickle, method="GET", path_contains="/projects.json", delay=0.001))
    assert make_client().projects(time.monotonic() + 30) == frozenset(project.id for project in standin.world.projects)


def test_the_stop_cuts_a_read_short_and_no_later_read_is_sent(standin: StandIn, make_client: MakeClient) -> None:
    _trickle(standin, "/projects.json", "GET")
    client, stop = make_client(), threading.Event()
    threading.Timer(0.3, stop.set).start()
    started = time.monotonic()
    with client.reads_stopped_by(stop):
        with pytest.raises(BasecampError, match="the read was stopped"):
            client.projects(started + 30)
        took = time.monotonic() - started
        with pytest.raises(BasecampError, match="stopped"):
            client.me(time.monotonic() + 30)
    assert took < 0.3 + SLACK, f"the read ran {took:.1f} s after the stop"
    assert sum("/projects.json" in request.path for request in standin.requests()) == 1
    assert not any("/my/profile.json" in request.path for request in standin.requests()), "none after the stop"
    assert make_client().me(time.monotonic() + 5).id == standin.world.agent.id, "reads go on once it ends"


def test_the_stop_ends_a_wait_for_a_turn_under_the_rate_limit(standin: StandIn, make_client: MakeClient) -> None:
    client, stop = make_client(requests_per_window=1, window_seconds=30.0), threading.Event()
    client.me(time.monotonic() + 5)  # the window's one request: the next waits ~30 s for its turn
    threading.Timer(0.3, stop.set).start()
    started = time.monotonic()
    with client.reads_stopped_by(stop), pytest.raises(BasecampError):
        client.me(started + 60)
    assert time.monotonic() - started < 0.3 + SLACK


def test_a_create_goes_on_through_the_stop(standin: StandIn, make_client: MakeClient) -> None:
    standin.add_fault(Fault(FaultAction.create_then_delay, method="POST", delay=0.5))  # answered late
    client, stop = make_client(), threading.Event()
    stop.set()
    with client.reads_stopped_by(stop):
        outcome = client.post(_a_card(standin), "<div>hi</div>", time.monotonic() + 10)
    assert isinstance(outcome, Created), "cut short, a create would be a doubt"


def _a_card(standin: StandIn) -> Destination:
    project = standin.world.projects[0]
    return Destination(MessageKind.comment, project.id, project.recording_ids[0])


def test_the_stop_ends_the_wait_before_a_reads_retry(standin: StandIn, make_client: MakeClient) -> None:
    standin.add_fault(Fault(FaultAction.rate_limit, method="GET", retry_after="20"))
    client, stop = make_client(), threading.Event()
    threading.Timer(0.3, stop.set).start()
    started = time.monotonic()
    with client.reads_stopped_by(stop), pytest.raises(BasecampError, match="stopped before its retry"):
        client.me(started + 60)
    assert time.monotonic() - started < 0.3 + SLACK


def test_a_watchdog_never_shuts_a_connection_a_later_exchange_took(standin: StandIn) -> None:
    """A pooled connection goes back to the pool as its answer's last byte is read, before that
    read's watchdog is disarmed: fired then, it would cut whichever read took the connection next."""
    connection = HTTPConnection("127.0.0.1", standin.port, timeout=5)
    connection.connect()
    earlier = Watchdog(0.2)
    earlier.watch(connection)
    later = Watchdog(60)
    later.watch(connection)  # the next exchange, on the connection back in the pool
    wait_until(lambda: earlier.fired, timeout=5)
    connection.request("GET", "/__standin/live")
    assert connection.getresponse().status == 403, "answered: the earlier watchdog left it alone"
    later.disarm()
    connection.close()


def test_a_trickled_launchpad_answer_ends_by_its_bound(standin: StandIn, monkeypatch: pytest.MonkeyPatch) -> None:
    """A refresh runs inside a client call (after a 401): Launchpad's exchange is bounded whole too."""
    monkeypatch.setattr(tokens, "LAUNCHPAD_TIMEOUT", DEADLINE)
    now = datetime.now(UTC)
    registered = app(f"{standin.base_url}{TOKEN_PATH}", CLIENT_ID, standin.control_secret, now)
    _trickle(standin, "/authorization/token", "POST")
    started = time.monotonic()
    with pytest.raises(tokens.LaunchpadFailed, match="TimeoutError"):
        tokens.token_request(refresh_form(registered), registered, now)
    assert time.monotonic() - started < DEADLINE + SLACK
