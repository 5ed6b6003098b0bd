"""A live lane whose server opens the WebSocket, welcomes and pings but never confirms the
subscription is down after ``confirm_within``, never ``connecting`` for as long as the pings go
on; and no part of a connect outlasts what ``status`` allows one (``CONNECT_WITHIN``)."""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Iterator

import pytest
from websockets.exceptions import ConnectionClosed
from websockets.sync.server import Server, ServerConnection, serve

from core.feed import FeedFilters, StreamTicket
from core.intake_status import CONNECT_WITHIN, LaneState
from shell.clock import SystemClock
from shell.intake import live_lane
from shell.intake.live_lane import LiveLane
from shell.ledger.connection import Ledger
from tests.support.child import wait_until


def _never_confirming(connection: ServerConnection) -> None:
    connection.send(json.dumps({"type": "welcome"}))
    try:
        while True:
            connection.send(json.dumps({"type": "ping", "message": 1}))
            with contextlib.suppress(TimeoutError):
                connection.recv(timeout=0.1)  # the subscribe command, read and ignored
    except ConnectionClosed:
        return


@pytest.fixture
def server() -> Iterator[Server]:
    with serve(_never_confirming, "127.0.0.1", 0, subprotocols=["actioncable-v1-json"]) as running:
        threading.Thread(target=running.serve_forever, daemon=True).start()
        yield running
        running.shutdown()


class Minter:
    def __init__(self, port: int) -> None:
        self.url = f"ws://127.0.0.1:{port}/cable"

    def stream_ticket(self, deadline: float) -> StreamTicket:
        return StreamTicket("t", 60, self.url)

    def ticket_wait(self) -> float:
        return 0.0  # one connect: the tickets' share never binds here

    def deadline_in(self, seconds: float) -> float:
        return SystemClock().monotonic() + seconds


def test_a_subscription_never_confirmed_is_down_within_its_bound(server: Server, ledger: Ledger) -> None:
    port = server.socket.getsockname()[1]
    lane = LiveLane(ledger, Minter(port), FeedFilters.of(), SystemClock(), lambda event_id: None,
                    stale_after=5.0, backoff_base=30.0, backoff_cap=30.0, confirm_within=0.5)
    stop = threading.Event()
    thread = threading.Thread(target=lane.run, args=(stop,), daemon=True)
    thread.start()
    try:
        wait_until(lambda: lane.state is LaneState.down, timeout=3)
        assert lane.why == "no confirmation of the subscription within 0.5 s"
    finally:
        stop.set()
        thread.join(timeout=5)


def test_every_part_of_a_connect_is_within_what_status_allows_one() -> None:
    parts = live_lane.TICKET_DEADLINE + live_lane.OPEN_TIMEOUT + live_lane.CONFIRM_WITHIN
    assert parts < CONNECT_WITHIN.total_seconds()
