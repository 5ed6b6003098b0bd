"""``core.feed``: the ticket, the frames, the backoff, the lane's line in status."""

from __future__ import annotations

import json

import pytest

from core.feed import (
    Delivered,
    Disconnect,
    FeedFilters,
    Overflow,
    Signal,
    Unreadable,
    identifier,
    proven_healthy,
    read_frame,
    read_ticket,
    reconnect_delay,
    redacted,
    subscribe_command,
)
from core.intake_status import LaneState, LaneStatus, lane_line, lane_report

URL = "wss://cable.example/cable?ticket=SECRET.sig"
ORIGIN = "https://cable.example"
EVENT = {
    "id": 7,
    "kind": "comment",
    "action": "created",
    "event_type": "comment.created",
    "bucket_id": 1,
    "creator_id": 2,
    "performed_by_id": None,
    "recording_id": 3,
    "created_at": "2026-12-01T12:00:00.000Z",
    "details": None,
}


def test_a_ticket_is_read_and_never_printed() -> None:
    ticket = read_ticket({"ticket": "SECRET.sig", "expires_in": 60, "url": URL}, ORIGIN)
    assert (ticket.ticket, ticket.expires_in, ticket.url) == ("SECRET.sig", 60, URL)
    assert "SECRET" not in repr(ticket)


@pytest.mark.parametrize(
    "body",
    [
        None,
        {"expires_in": 60, "url": URL},
        {"ticket": "t", "expires_in": 0, "url": URL},
        {"ticket": "t", "expires_in": True, "url": URL},
        {"ticket": "t", "expires_in": 60, "url": "https://cable.example/cable?ticket=t"},
    ],
)
def test_anything_else_is_no_ticket(body: object) -> None:
    with pytest.raises(ValueError, match="ticket") as refused:
        read_ticket(body, ORIGIN)
    assert "SECRET" not in str(refused.value)


@pytest.mark.parametrize(
    ("url", "configured"),
    [
        ("ws://cable.example/cable?ticket=SECRET", ORIGIN),  # plain ws to a host served over https
        ("wss://other.example/cable?ticket=SECRET", ORIGIN),  # another host
        ("wss://other.example\\@cable.example/cable?ticket=SECRET", ORIGIN),  # parsers disagree
        ("wss://u@cable.example/cable?ticket=SECRET", ORIGIN),  # userinfo
        ("wss://cable.example/ca ble?ticket=SECRET", ORIGIN),  # whitespace
        ("wss://cable.example/cable?ticket=SECRET\x07", ORIGIN),  # a control character
        ("ws://127.0.0.2:9/cable?ticket=SECRET", "http://127.0.0.1:8000"),  # another loopback host
    ],
)
def test_a_ticket_for_another_host_or_an_ambiguous_url_is_no_ticket(url: str, configured: str) -> None:
    with pytest.raises(ValueError, match="configured host") as refused:
        read_ticket({"ticket": "SECRET", "expires_in": 60, "url": url}, configured)
    assert "SECRET" not in str(refused.value)


def test_a_ticket_on_the_configured_host_is_taken_on_any_port() -> None:
    body = {"ticket": "t", "expires_in": 60, "url": "ws://127.0.0.1:9/cable?ticket=t"}
    assert read_ticket(body, "http://127.0.0.1:8000").url.startswith("ws://127.0.0.1:9/")
    assert read_ticket({**body, "url": "wss://cable.example:8443/c"}, ORIGIN).expires_in == 60


def test_a_url_is_shown_without_its_query() -> None:
    assert redacted(URL) == "wss://cable.example/cable"


def test_the_subscription_carries_the_poll_lanes_filters() -> None:
    filters = FeedFilters.of(exclude_performers=["self"], actor_types=["person"], buckets=[5, 4])
    command = json.loads(subscribe_command(filters))
    assert command["command"] == "subscribe"
    assert json.loads(command["identifier"]) == {
        "channel": "EventsChannel",
        "buckets": "4,5",
        "exclude_performers": "self",
        "actor_types": "person",
    }
    assert command["identifier"] == identifier(filters)


@pytest.mark.parametrize(
    ("frame", "meaning"),
    [
        ({"type": "welcome"}, Signal.welcome),
        ({"type": "ping", "message": 1}, Signal.ping),
        ({"identifier": "x", "type": "confirm_subscription"}, Signal.confirmed),
        ({"identifier": "x", "type": "reject_subscription"}, Signal.rejected),
        (
            {"type": "disconnect", "reason": "unauthorized", "reconnect": False},
            Disconnect("unauthorized", False),
        ),
        ({"identifier": "x", "message": {"overflow": {"after_id": 6}}}, Overflow(6)),
        ({"type": "surprise"}, Unreadable("an unknown frame type 'surprise'")),
        ({"identifier": "x", "message": {"overflow": {}}}, Unreadable("an overflow without after_id")),
        ({"identifier": "x"}, Unreadable("a frame with neither a type nor a message")),
    ],
)
def test_each_frame_means_one_thing(frame: object, meaning: object) -> None:
    assert read_frame(json.dumps(frame)) == meaning


def test_events_are_read_as_events_json_serves_them_or_not_at_all() -> None:
    delivered = read_frame(json.dumps({"identifier": "x", "message": {"events": [EVENT]}}))
    assert isinstance(delivered, Delivered)
    assert [event.id for event in delivered.events] == [7]
    broken = read_frame(json.dumps({"identifier": "x", "message": {"events": [{**EVENT, "id": "7"}]}}))
    assert isinstance(broken, Unreadable)
    assert isinstance(read_frame("not json"), Unreadable)
    assert isinstance(read_frame("[1]"), Unreadable)


def test_the_backoff_doubles_to_its_cap_with_half_of_it_drawn() -> None:
    assert reconnect_delay(0, 0.0) == 0.25
    assert reconnect_delay(0, 0.999) == pytest.approx(0.5, abs=0.001)
    assert reconnect_delay(3, 0.0) == 2.0
    assert reconnect_delay(50, 0.0) == 15.0
    assert reconnect_delay(50, 1.0) == 30.0
    draws = {reconnect_delay(4, draw / 10) for draw in range(10)}
    assert len(draws) == 10, "connectors that lost one server do not return in step"


def test_the_lanes_line_says_whether_intake_hears_live_or_polls_alone() -> None:
    def short(stamp: str) -> str:
        return stamp[:5]

    assert lane_line(None, short) == "live lane: never started (intake polls only)"
    down = LaneStatus(LaneState.down, "12:00:00", "the upgrade was refused: HTTP 503", 2, 1)
    assert lane_line(down, short) == (
        "live lane: down since 12:00: the upgrade was refused: HTTP 503 (2 connects, 1 overflows);"
        " intake polls meanwhile"
    )
    up = LaneStatus(LaneState.connected, "12:00:00", "", 1, 0)
    assert lane_line(up, short) == "live lane: connected since 12:00 (1 connects, 0 overflows)"
    assert lane_report(up) == {
        "state": "connected",
        "since": "12:00:00",
        "why": "",
        "connects": 1,
        "overflows": 0,
    }
    assert lane_report(None) is None


def test_a_connection_is_healthy_after_its_first_event_or_a_ping_interval_confirmed_never_at_once() -> None:
    assert not proven_healthy(None, 0), "never confirmed: nothing proven"
    assert not proven_healthy(None, 5)
    assert not proven_healthy(0.0, 0), "a confirmation alone proves nothing"
    assert not proven_healthy(2.9, 0)
    assert proven_healthy(3.0, 0), "a ping interval up"
    assert proven_healthy(0.1, 1), "its first event"
    assert not proven_healthy(10.0, 0, after=30.0)
    assert proven_healthy(30.0, 0, after=30.0)
