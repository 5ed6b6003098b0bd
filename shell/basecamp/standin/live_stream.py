"""The stand-in's live lane: stream tickets and the Action Cable WebSocket (``EventsChannel``).

Rules:
1. ``POST /{account}/events/stream_ticket.json`` answers 201 ``{"ticket", "expires_in", "url"}``.
   A ticket is signed (account, person, expiry, nonce), good for ``ticket_ttl`` seconds of the
   stand-in's clock and for every connection opened within them, as Basecamp's is.
2. The WebSocket has a port of its own. The upgrade: another path -> 404; a ticket missing,
   forged, another account's or expired -> 401; a scripted fault may refuse it first
   (``shell.basecamp.standin.live_faults``).
3. Action Cable's JSON protocol: a welcome, a ping every ``ping_interval`` seconds, and a
   subscription to ``EventsChannel`` confirmed, or rejected for another channel or a filter
   ``events.json`` would refuse. The person's projects are snapshotted then
   (rule 8 of shell.basecamp.standin.feed).
4. From the confirmation on, every later event the filters admit is sent at once, one frame
   each, as ``events.json`` shows it; an overflow (fault ``skip``) is an ``overflow`` frame
   naming ``after_id``.
5. Stopping closes every connection (code 1001). Nothing here logs a ticket or a query string.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import hashlib
import hmac
import json
import logging
import secrets
import socket
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from http import HTTPStatus
from urllib.parse import parse_qs, urlsplit

from websockets.exceptions import ConnectionClosed
from websockets.http11 import Request, Response
from websockets.sync.server import Server, ServerConnection, serve
from websockets.typing import Subprotocol

from shell.basecamp.standin.exchange import JsonObject, Reply, json_reply
from shell.basecamp.standin.feed import BadFilter, Feed, Filters, StandinFeedEvent, parse_filters
from shell.basecamp.standin.live_faults import LiveAction, LiveFault, LiveFaults
from shell.basecamp.standin.world import Person, World

HOST = "127.0.0.1"
CABLE_PATH = "/cable"
CHANNEL = "EventsChannel"
SUBPROTOCOL = Subprotocol("actioncable-v1-json")
DEFAULT_TICKET_TTL = 120  # "lives about two minutes" (the official SDK's create_stream_ticket)
DEFAULT_PING_INTERVAL = 3.0

LOGGER = logging.getLogger("shell.basecamp.standin.live")
_QUIET = logging.getLogger("shell.basecamp.standin.live.websockets")
_QUIET.setLevel(logging.WARNING)  # the library logs each request line, ticket and all, at DEBUG


class TicketRefused(Exception):
    """Why an upgrade's ticket is not good (no ticket text in the message)."""


@dataclass(frozen=True, slots=True)
class _Subscription:
    identifier: str
    filters: Filters
    # the person's projects when it subscribed (rule 8 of shell.basecamp.standin.feed)
    buckets: frozenset[int]


class StreamTickets:
    """Minting and redeeming tickets (rule 1)."""

    def __init__(self, world: World, now: Callable[[], datetime], url: str, ttl: int) -> None:
        self._world = world
        self._now = now
        self._url = url
        self.ttl = ttl
        self._secret = secrets.token_bytes(32)
        self._lock = threading.Lock()
        self.minted = 0

    def mint(self, person: Person) -> Reply:
        expiry = (self._now() + timedelta(seconds=self.ttl)).timestamp()
        payload = json.dumps(
            {"a": self._world.account_id, "p": person.id, "x": expiry, "n": secrets.token_hex(8)},
            separators=(",", ":"),
        ).encode()
        ticket = f"{base64.urlsafe_b64encode(payload).decode().rstrip('=')}.{self._sign(payload)}"
        with self._lock:
            self.minted += 1
        body: JsonObject = {"ticket": ticket, "expires_in": self.ttl, "url": f"{self._url}?ticket={ticket}"}
        return json_reply(201, body)

    def redeem(self, ticket: str) -> Person:
        """The person a good ticket was minted for; ``TicketRefused`` otherwise."""
        encoded, _, signature = ticket.partition(".")
        try:
            payload = base64.urlsafe_b64decode(encoded + "=" * (-len(encoded) % 4))
        except (binascii.Error, ValueError):
            raise TicketRefused("not a ticket") from None
        if not hmac.compare_digest(self._sign(payload), signature):
            raise TicketRefused("not a ticket of this stand-in")
        try:
            fields = json.loads(payload)
            account, person_id, expiry = int(fields["a"]), int(fields["p"]), float(fields["x"])
        except (ValueError, KeyError, TypeError):
            raise TicketRefused("not a ticket") from None
        person = self._world.person(person_id)
        if account != self._world.account_id or person is None:
            raise TicketRefused("a ticket of another account")
        if self._now().timestamp() >= expiry:
            raise TicketRefused("the ticket expired")
        return person

    def _sign(self, payload: bytes) -> str:
        return hmac.new(self._secret, payload, hashlib.sha256).hexdigest()


class LiveStream:
    """The cable's server (rule 2): bound when made, serving after ``start``."""

    def __init__(
        self,
        world: World,
        feed: Feed,
        now: Callable[[], datetime],
        *,
        ticket_ttl: int = DEFAULT_TICKET_TTL,
        ping_interval: float = DEFAULT_PING_INTERVAL,
    ) -> None:
        self._world = world
        self._feed = feed
        self.faults = LiveFaults()
        self.ping_interval = ping_interval
        self._stopping = threading.Event()
        self._people: dict[int, Person] = {}
        self._lock = threading.Lock()
        self._server: Server = serve(
            self._handle,
            HOST,
            0,
            process_request=self._upgrade,
            subprotocols=[SUBPROTOCOL],
            select_subprotocol=_select_subprotocol,
            compression=None,
            logger=_QUIET,
        )
        self.port = int(self._server.socket.getsockname()[1])
        self.tickets = StreamTickets(world, now, f"ws://{HOST}:{self.port}{CABLE_PATH}", ticket_ttl)
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._server.serve_forever, name=f"standin-cable:{self.port}", daemon=True
            )
            self._thread.start()

    def stop(self) -> None:
        """Close every connection and the port; a server never started only frees its port
        (``shutdown`` would wait for a serving loop that never ran)."""
        self._stopping.set()
        if self._thread is None:
            self._server.socket.close()
            return
        self._server.shutdown()
        self._thread.join()
        self._thread = None

    def connections(self) -> int:
        """Open connections (confirmed or not)."""
        with self._lock:
            return len(self._people)

    def drop_all(self) -> int:
        """Cut every open connection now (no close frame); how many."""
        with self._lock:
            found = [connection for connection in self._server.connections if id(connection) in self._people]
        for connection in found:
            _cut(connection)
        return len(found)

    # -- the upgrade (rule 2) ----------------------------------------------------------------

    def _upgrade(self, connection: ServerConnection, request: Request) -> Response | None:
        target = urlsplit(request.path)
        if target.path != CABLE_PATH:
            return connection.respond(HTTPStatus.NOT_FOUND, "Not Found\n")
        taken = self.faults.take(at_upgrade=True)
        fault = taken[0] if taken else None
        if fault is not None and fault.action is LiveAction.refuse:
            self._stopping.wait(fault.delay)
            LOGGER.info("cable upgrade refused (fault)")
            return connection.respond(fault.status or 503, "Refused\n")
        tickets = parse_qs(target.query).get("ticket", [])
        try:
            if len(tickets) != 1:
                raise TicketRefused("no ticket")
            person = self.tickets.redeem(tickets[0])
            if fault is not None and fault.action is LiveAction.expire_ticket:
                raise TicketRefused("the ticket expired")
        except TicketRefused as refused:
            LOGGER.info("cable upgrade refused: %s", refused)
            return connection.respond(HTTPStatus.UNAUTHORIZED, f"Unauthorized: {refused}\n")
        with self._lock:
            self._people[id(connection)] = person
        return None

    # -- a connection (rules 3 and 4) ------------------------------------------------------------

    def _handle(self, connection: ServerConnection) -> None:
        with self._lock:
            person = self._people.get(id(connection))
        if person is None:
            return
        session = _Session(connection, person, self)
        sender = threading.Thread(target=session.send_loop, name="standin-cable-send", daemon=True)
        try:
            session.send({"type": "welcome"})
            sender.start()
            for text in connection:
                session.command(text)
        except ConnectionClosed:
            pass
        finally:
            session.closed.set()
            with self._lock:
                self._people.pop(id(connection), None)

    def _take_delivery_fault(self) -> tuple[LiveFault, bool] | None:
        return self.faults.take(at_upgrade=False)


class _Session:
    """One connection's subscription and sender."""

    def __init__(self, connection: ServerConnection, person: Person, stream: LiveStream) -> None:
        self._connection = connection
        self._person = person
        self._stream = stream
        self.closed = threading.Event()
        self._subscription: _Subscription | None = None
        self._after = 0
        self._skipped_after: int | None = None
        self._lock = threading.Lock()

    def send(self, frame: JsonObject) -> None:
        self._connection.send(json.dumps(frame))

    def command(self, text: str | bytes) -> None:
        try:
            value = json.loads(text)
            name, identifier = value["command"], value["identifier"]
            params = json.loads(identifier)
            channel = params["channel"]
        except (ValueError, KeyError, TypeError):
            return  # Action Cable ignores what it cannot read
        if name == "unsubscribe":
            with self._lock:
                self._subscription = None
            return
        if name != "subscribe":
            return
        try:
            if channel != CHANNEL:
                raise BadFilter(f"no channel {channel!r}")
            query = {str(key): str(item) for key, item in params.items() if key != "channel"}
            filters = parse_filters(query, self._person)
        except (BadFilter, AttributeError):
            self.send({"identifier": identifier, "type": "reject_subscription"})
            return
        feed = self._stream._feed
        after, buckets = feed.newest_id(), feed.visible_buckets(self._person)
        self.send({"identifier": identifier, "type": "confirm_subscription"})
        with self._lock:
            self._subscription, self._after = _Subscription(identifier, filters, buckets), after

    def send_loop(self) -> None:
        stream = self._stream
        interval = stream.ping_interval
        next_ping = time.monotonic() + interval
        try:
            while not self.closed.is_set() and not stream._stopping.is_set():
                wait = max(0.0, next_ping - time.monotonic())
                with self._lock:
                    subscription, after = self._subscription, self._after
                if subscription is None:
                    self.closed.wait(min(wait, 0.05))
                elif not self._deliver(subscription, stream._feed.wait_after(after, wait)):
                    return
                if time.monotonic() >= next_ping:
                    self.send({"type": "ping", "message": int(time.time())})
                    next_ping = time.monotonic() + interval
        except ConnectionClosed:
            return

    def _deliver(self, subscription: _Subscription, events: Sequence[StandinFeedEvent]) -> bool:
        """Send what the filters admit; False when the connection was cut (fault ``drop``)."""
        agent_id = self._stream._world.agent.id
        for event in events:
            with self._lock:
                if self._subscription is not subscription:
                    return True
                self._after = event.id
            if event.bucket_id not in subscription.buckets:
                continue  # a project granted later is heard after a new subscription
            if not subscription.filters.admit(event, agent_id):
                continue
            taken = self._stream._take_delivery_fault()
            if taken is not None:
                fault, last = taken
                if fault.action is LiveAction.drop:
                    LOGGER.info("cable: connection cut before event %d (fault)", event.id)
                    _cut(self._connection)
                    return False
                if fault.action is LiveAction.skip:
                    if self._skipped_after is None:
                        self._skipped_after = event.id - 1
                    if last:
                        overflow = {"overflow": {"after_id": self._skipped_after}}
                        self._skipped_after = None
                        self.send({"identifier": subscription.identifier, "message": overflow})
                    continue
                if fault.action is LiveAction.stall and self._stream._stopping.wait(fault.delay):
                    return False
            self.send({"identifier": subscription.identifier, "message": {"events": [event.to_json()]}})
        return True


def _select_subprotocol(connection: ServerConnection, offered: Sequence[Subprotocol]) -> Subprotocol | None:
    return SUBPROTOCOL if SUBPROTOCOL in offered else None


def _cut(connection: ServerConnection) -> None:
    """End the TCP connection without a close frame (fault ``drop``)."""
    with contextlib.suppress(OSError):
        connection.socket.shutdown(socket.SHUT_RDWR)

