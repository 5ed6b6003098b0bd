"""The stand-in's live lane on the wire: stream tickets, the Action Cable WebSocket, its faults.

Plain ``http.client`` for the ticket and ``websockets``' sync client for the cable: these pin
what the stand-in does, independently of the connector's live lane.
"""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

import pytest
from websockets.exceptions import ConnectionClosed, ConnectionClosedOK, InvalidStatus
from websockets.sync.client import ClientConnection, connect
from websockets.typing import Subprotocol

from shell.basecamp.standin.faults import LiveAction, LiveFault
from shell.basecamp.standin.server import StandIn
from shell.basecamp.standin.world import Person

if TYPE_CHECKING:
    from conftest import Client

CHANNEL = {"channel": "EventsChannel"}


@pytest.fixture
def live() -> Iterator[StandIn]:
    with StandIn(world="demo", feed_delay=30.0, ping_interval=0.3) as running:
        yield running


@pytest.fixture
def http(live: StandIn, connect: type[Client]) -> Client:
    return connect(live)


def mint(http: Client) -> dict[str, Any]:
    answer = http.post("events/stream_ticket.json", body=b"")
    assert answer.status == 201, answer.body
    return dict(answer.json())


def open_cable(url: str) -> ClientConnection:
    """A connection the test closes (entered, as ``websockets`` 17 asks of a connection kept)."""
    cable = connect(url, subprotocols=[Subprotocol("actioncable-v1-json")], proxy=None, open_timeout=5)
    return cable.__enter__()


def frame(cable: ClientConnection, timeout: float = 3.0) -> dict[str, Any]:
    """The next frame that is not a ping."""
    while True:
        found = json.loads(cable.recv(timeout=timeout))
        if found.get("type") != "ping":
            return dict(found)


def only_pings(cable: ClientConnection, seconds: float) -> bool:
    """Whether nothing but pings arrives for ``seconds``."""
    deadline = time.monotonic() + seconds
    while (left := deadline - time.monotonic()) > 0:
        try:
            if json.loads(cable.recv(timeout=left)).get("type") != "ping":
                return False
        except TimeoutError:
            return True
    return True


def subscribed(http: Client, **params: str) -> ClientConnection:
    cable = open_cable(mint(http)["url"])
    assert frame(cable) == {"type": "welcome"}
    identifier = json.dumps({**CHANNEL, **params})
    cable.send(json.dumps({"command": "subscribe", "identifier": identifier}))
    assert frame(cable) == {"identifier": identifier, "type": "confirm_subscription"}
    return cable


def person(standin: StandIn) -> Person:
    return next(found for found in standin.world.people if found.id != standin.world.agent.id)


def mention(standin: StandIn, text: str = "hello") -> int:
    return standin.mention(person(standin), standin.world.projects[0].recording_ids[0], text)


def events_of(found: dict[str, Any]) -> list[int]:
    return [event["id"] for event in found["message"]["events"]]


# -- tickets -----------------------------------------------------------------------------------


def test_a_ticket_is_minted_for_the_cable_on_its_own_port(live: StandIn, http: Client) -> None:
    ticket = mint(http)
    assert set(ticket) == {"ticket", "expires_in", "url"}
    assert ticket["expires_in"] == 120
    assert ticket["url"] == f"ws://127.0.0.1:{live.live.port}/cable?ticket={ticket['ticket']}"
    assert live.live.port != live.port


def test_a_ticket_takes_the_token_and_a_post(http: Client, live: StandIn, connect: type[Client]) -> None:
    assert connect(live, token="wrong").post("events/stream_ticket.json", body=b"").status == 401
    assert http.get("events/stream_ticket.json").status == 405


def test_a_ticket_is_replayable_within_its_window(http: Client) -> None:
    url = mint(http)["url"]
    open_cable(url).close()
    open_cable(url).close()


def test_a_forged_or_missing_ticket_is_refused(http: Client) -> None:
    url = mint(http)["url"]
    # The signature is hex: "xyz" is never its tail ("abc" was, one ticket in 4,096, and then the
    # "forgery" was the ticket itself).
    for bad in (url[:-3] + "xyz", url.split("?")[0], url.replace("/cable", "/elsewhere")):
        with pytest.raises(InvalidStatus) as refused:
            open_cable(bad)
        assert refused.value.response.status_code in (401, 404)


def test_a_ticket_expires_by_the_standins_clock(connect: type[Client]) -> None:
    now = [datetime(2026, 12, 1, 12, tzinfo=UTC)]
    with StandIn(world="empty", clock=lambda: now[0], ticket_ttl=60) as standin:
        url = mint(connect(standin))["url"]
        open_cable(url).close()
        now[0] += timedelta(seconds=60)
        with pytest.raises(InvalidStatus) as refused:
            open_cable(url)
        assert refused.value.response.status_code == 401


# -- the channel ---------------------------------------------------------------------------------


def test_an_event_arrives_at_once_while_the_poll_lane_still_holds_it_back(connect: type[Client]) -> None:
    with StandIn(world="demo", feed_delay=30.0, ping_interval=5.0) as live:  # no ping to wake the sender
        arrives_at_once(live, connect(live))


def arrives_at_once(live: StandIn, http: Client) -> None:
    cable = subscribed(http, exclude_performers="self")
    time.sleep(0.3)  # the sender is waiting for the feed by now
    started = time.monotonic()
    event_id = mention(live)
    delivered = frame(cable)
    assert time.monotonic() - started < 1.0
    assert events_of(delivered) == [event_id]
    assert http.get("events.json?since=0").json()["events"] == [], "the poll lane waits 30 s"
    shown = next(event for event in live.feed.events() if event.id == event_id)
    assert delivered["message"]["events"] == [shown.to_json()], "the shape events.json serves"
    cable.close()


def test_the_subscription_honours_the_feeds_filters(live: StandIn, http: Client) -> None:
    other = live.world.projects[1]
    cable = subscribed(http, exclude_performers="self", buckets=str(other.id))
    live.seed_message("comment", live.world.projects[0].recording_ids[0], person(live).id, "elsewhere")
    live.seed_message("comment", other.recording_ids[0], live.world.agent.id, "the agent's own")
    wanted = live.seed_message("comment", other.recording_ids[0], person(live).id, "here")
    (only,) = events_of(frame(cable))
    assert live.feed.event_about(wanted) is not None
    assert only == live.feed.event_about(wanted).id  # type: ignore[union-attr]
    cable.close()


def test_a_filter_events_json_refuses_or_another_channel_is_rejected(http: Client) -> None:
    for identifier in ({**CHANNEL, "actor_types": "robot"}, {"channel": "ChatChannel"}):
        cable = open_cable(mint(http)["url"])
        assert frame(cable) == {"type": "welcome"}
        cable.send(json.dumps({"command": "subscribe", "identifier": json.dumps(identifier)}))
        assert frame(cable)["type"] == "reject_subscription"
        cable.close()


def test_pings_come_every_interval(http: Client) -> None:
    cable = open_cable(mint(http)["url"])
    assert json.loads(cable.recv(timeout=2)) == {"type": "welcome"}
    pings = [json.loads(cable.recv(timeout=2)) for _ in range(2)]
    assert [ping["type"] for ping in pings] == ["ping", "ping"]
    assert all(isinstance(ping["message"], int) for ping in pings)
    cable.close()


# -- faults ---------------------------------------------------------------------------------------


def test_fault_refuse_answers_the_upgrade_with_its_status(live: StandIn, http: Client) -> None:
    live.live.faults.add(LiveFault(LiveAction.refuse, status=503))
    with pytest.raises(InvalidStatus) as refused:
        open_cable(mint(http)["url"])
    assert refused.value.response.status_code == 503
    open_cable(mint(http)["url"]).close()


def test_fault_expire_ticket_refuses_a_good_ticket_as_expired(live: StandIn, http: Client) -> None:
    live.live.faults.add(LiveFault(LiveAction.expire_ticket))
    with pytest.raises(InvalidStatus) as refused:
        open_cable(mint(http)["url"])
    assert refused.value.response.status_code == 401
    assert b"expired" in refused.value.response.body


def test_fault_drop_cuts_the_connection_instead_of_sending_the_event(live: StandIn, http: Client) -> None:
    cable = subscribed(http)
    live.live.faults.add(LiveFault(LiveAction.drop))
    mention(live)
    with pytest.raises(ConnectionClosed) as closed:
        frame(cable)
    assert not isinstance(closed.value, ConnectionClosedOK), "no close frame: the socket was cut"


def test_fault_stall_sends_nothing_for_its_delay_then_goes_on(live: StandIn, http: Client) -> None:
    cable = subscribed(http)
    live.live.faults.add(LiveFault(LiveAction.stall, delay=1.5))
    event_id = mention(live)
    with pytest.raises(TimeoutError):
        cable.recv(timeout=1.0)  # not even a ping (every 0.3 s otherwise)
    assert events_of(frame(cable)) == [event_id]
    cable.close()


def test_fault_skip_drops_events_then_says_overflow(live: StandIn, http: Client) -> None:
    cable = subscribed(http)
    live.live.faults.add(LiveFault(LiveAction.skip, times=2))
    first = mention(live, "one")
    mention(live, "two")
    third = mention(live, "three")
    assert frame(cable)["message"] == {"overflow": {"after_id": first - 1}}
    assert events_of(frame(cable)) == [third]
    cable.close()


def test_fault_garble_sends_an_unreadable_frame_after_every_confirmation_it_lasts_for(
    live: StandIn, http: Client
) -> None:
    assert http.post("/__standin/live/faults", {"action": "garble", "times": None}).status == 201
    for _ in range(3):  # for ever: every subscription
        cable = subscribed(http)
        with pytest.raises(json.JSONDecodeError):
            frame(cable)
        cable.close()
    assert live.live.faults.clear() == 1
    cable = subscribed(http)
    assert only_pings(cable, 0.7), "once cleared, nothing but pings"
    cable.close()


def test_the_control_api_scripts_live_faults_and_cuts_connections(live: StandIn, http: Client) -> None:
    added = http.post("/__standin/live/faults", {"action": "stall", "delay": 2})
    assert added.status == 201
    assert http.get("/__standin/live/faults").json() == [
        {"action": "stall", "status": None, "delay": 2.0, "times": 1}
    ]
    assert http.post("/__standin/live/faults", {"action": "explode"}).status == 400
    cable = subscribed(http)
    assert http.get("/__standin/live").json() == {"connections": 1, "tickets_minted": 1}
    assert http.post("/__standin/live/drop", body=b"").json() == {"dropped": 1}
    with pytest.raises(ConnectionClosed):
        frame(cable)


def test_a_standin_never_started_stops_at_once_and_frees_both_ports() -> None:
    standin = StandIn(world="empty")
    ports = (standin.port, standin.live.port)
    started = time.monotonic()
    standin.stop()
    assert time.monotonic() - started < 2.0
    for port in ports:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", port))


def test_the_official_sdks_create_stream_ticket_works_against_the_standin(live: StandIn) -> None:
    """A contract test: Basecamp's own Python SDK mints a ticket here, and its URL opens the cable."""
    from basecamp import Client as SdkClient
    from basecamp.config import Config

    sdk = SdkClient(config=Config(base_url=live.base_url), access_token=live.world.token,
                    user_agent="stand-in contract tests (tests@example.com)")  # fmt: skip
    ticket = sdk.for_account(str(live.world.account_id)).event_feed.create_stream_ticket()
    assert set(ticket) == {"ticket", "expires_in", "url"}
    cable = open_cable(ticket["url"])
    assert frame(cable) == {"type": "welcome"}
    cable.close()


def test_a_withheld_project_is_neither_listed_nor_served_nor_sent(connect: type[Client]) -> None:
    with StandIn(world="demo", ping_interval=0.3) as standin:
        http = connect(standin)
        hidden, shown = standin.world.projects[1], standin.world.projects[0]
        standin.feed.withhold(hidden.id)
        assert [project["id"] for project in http.get("projects.json").json()] == [
            project.id for project in standin.world.projects if project.id != hidden.id
        ]
        cable = subscribed(http)
        other = person(standin)
        standin.seed_message("comment", hidden.recording_ids[0], other.id, "not for the agent")
        heard = standin.seed_message("comment", shown.recording_ids[0], other.id, "for the agent")
        event = standin.feed.event_about(heard)
        assert event is not None
        assert events_of(frame(cable)) == [event.id]
        assert [item["id"] for item in http.get("events.json?since=0").json()["events"]] == [event.id]
        cable.close()


def test_a_project_granted_later_is_heard_on_a_new_subscription_only(connect: type[Client]) -> None:
    with StandIn(world="demo", ping_interval=0.3) as standin:
        http = connect(standin)
        project = standin.world.projects[1]
        standin.feed.withhold(project.id)
        before = subscribed(http)
        standin.feed.grant(project.id)
        after = subscribed(http)
        said = standin.seed_message("comment", project.recording_ids[0], person(standin).id, "granted")
        event = standin.feed.event_about(said)
        assert event is not None
        assert events_of(frame(after)) == [event.id]
        assert only_pings(before, seconds=1.0), "the cable snapshots the projects at subscribe"
        before.close()
        after.close()
