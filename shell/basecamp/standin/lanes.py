"""The three lanes an event reaches a client by: the account feed (``events.json``), the agent's inbox
(``inbox.json``) and the live lane (Action Cable's ``EventsChannel`` on a WebSocket).

Every comment and Campfire line kept appends an event to the feed; its performer is ``performed_by_id`` when
set, else its creator. The agent is a member of every project until ``withhold`` (again after ``grant``): a
read serves the caller's projects as they are then, and the cable snapshots them when it subscribes. An
event recorded while ``brake_next`` has some to brake is served by neither ``events.json`` nor the cable, as
Basecamp's rate ceiling does; the inbox hears every event.

``events.json`` starts at a signed ``position`` (one it did not mint or another account's is a 400, another
filter set's a 409, one from before ``begin_epoch`` a 410 with ``resume``), else at ``since`` (an id, ``0``
or ``now``). A page is oldest first, with ``next`` only while more remain, its position past what the
filters skipped; only events ``delay`` seconds old are served, in id order, so a younger one holds back
every later one. The inbox addresses each person an event mentions, each subscriber and each person an
assignment adds, never its performer; it serves agents only (others get a bare 403), keeps an item 30 days
(a position behind that is a 410 resuming at ``since=0``) and drops items of a project the caller no longer
sees.

A stream ticket is signed and good for ``ticket_ttl`` seconds of the stand-in's clock, for every connection
opened within them; an upgrade elsewhere is a 404, with a ticket missing, forged, another account's or
expired a 401. A connection gets a welcome, a ping every ``ping_interval``, its subscription confirmed (or
rejected for another channel or a filter ``events.json`` refuses), then every later event the filters admit
at once. Nothing logs a ticket or a query.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import hmac
import itertools
import json
import logging
import secrets
import socket
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from http import HTTPStatus
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

from websockets.exceptions import ConnectionClosed
from websockets.http11 import Request, Response
from websockets.sync.server import Server, ServerConnection, serve
from websockets.typing import Subprotocol

from core.mentions import mentioned_person_ids
from shell.basecamp.standin.api import Incoming, JsonObject, Reply, basecamp_time, error_reply, json_reply
from shell.basecamp.standin.faults import Book, LiveAction, LiveFault, seconds
from shell.basecamp.standin.world import Kind, Message, Person, Store, World

FIRST_EVENT_ID = 7_000_000_001
FIRST_ADDRESSING_ID = 9_100_000_001
DEFAULT_FEED_PAGE_SIZE = 100
DEFAULT_INBOX_PAGE_SIZE = 100
MAX_BUCKETS = 100
RETENTION = timedelta(days=30)
ACTOR_TYPES = frozenset({"agent", "person"})
REASONS = ("mentioned", "assigned", "subscribed", "watched", "pinged", "boosted")
FEED_FILTERS = ("buckets", "types", "creators", "performers", "exclude_performers", "actor_types")
INBOX_FILTERS = ("reasons", "types", "buckets")
EVENT_TYPES = {Kind.comment: "comment.created", Kind.chat_line: "chat.line.created"}
KIND_OF_EVENT = {event_type: kind for kind, event_type in EVENT_TYPES.items()}
HOST = "127.0.0.1"
CABLE_PATH = "/cable"
CHANNEL = "EventsChannel"
SUBPROTOCOL = Subprotocol("actioncable-v1-json")
DEFAULT_TICKET_TTL = 120  # "lives about two minutes" (the official SDK's create_stream_ticket)
DEFAULT_PING_INTERVAL = 3.0

LOGGER = logging.getLogger("shell.basecamp.standin.live")
_QUIET = logging.getLogger("shell.basecamp.standin.live.websockets")
_QUIET.setLevel(logging.WARNING)  # the library logs each request line, ticket and all, at DEBUG


@dataclass(frozen=True, slots=True)
class StandinFeedEvent:
    id: int
    kind: str
    action: str
    event_type: str
    bucket_id: int
    creator_id: int
    recording_id: int
    created_at: datetime
    performed_by_id: int | None = None
    details: Mapping[str, Any] | None = None

    @property
    def performer_id(self) -> int:
        return self.performed_by_id if self.performed_by_id is not None else self.creator_id

    def to_json(self) -> JsonObject:
        shown = {name: getattr(self, name) for name in self.__dataclass_fields__}
        details = dict(self.details) if self.details is not None else None
        return {**shown, "created_at": basecamp_time(self.created_at), "details": details}


class BadFilter(ValueError):
    """A filter a lane refuses (400 ``invalid_filter``)."""


class Signer:
    """Mints and reads what a client may hand back but neither build nor alter: base64url of
    compact JSON, a dot, its HMAC-SHA256 under a secret of this signer's own."""

    def __init__(self) -> None:
        self._secret = secrets.token_bytes(32)

    def mint(self, fields: Mapping[str, object]) -> str:
        payload = json.dumps(dict(fields), separators=(",", ":")).encode()
        return f"{base64.urlsafe_b64encode(payload).decode().rstrip('=')}.{self._sign(payload)}"

    def read(self, token: str) -> dict[str, Any] | None:
        """The fields of what this signer minted; None for anything else."""
        encoded, _, signature = token.partition(".")
        try:  # binascii.Error and JSONDecodeError are ValueErrors
            payload = base64.urlsafe_b64decode(encoded + "=" * (-len(encoded) % 4))
            fields = json.loads(payload) if hmac.compare_digest(self._sign(payload), signature) else None
        except ValueError:
            return None
        return fields if isinstance(fields, dict) else None

    def _sign(self, payload: bytes) -> str:
        return hmac.new(self._secret, payload, hashlib.sha256).hexdigest()


def _items(query: Mapping[str, str], name: str) -> frozenset[str]:
    return frozenset(item.strip() for item in query.get(name, "").split(",") if item.strip())


def _digest(canonical: Mapping[str, frozenset[Any]]) -> str:
    shown = {name: sorted(values) for name, values in canonical.items()}
    return hashlib.sha256(json.dumps(shown, sort_keys=True).encode()).hexdigest()


def _ids(query: Mapping[str, str], name: str, caller: Person | None = None) -> frozenset[int]:
    items = _items(query, name)
    if bad := [item for item in items if not item.isdigit() and (item != "self" or caller is None)]:
        raise BadFilter(f"{name} takes ids, not {bad[0]!r}")
    return frozenset(caller.id if item == "self" and caller is not None else int(item) for item in items)


def _passes(allowed: frozenset[Any], value: object) -> bool:
    """An empty filter passes everything."""
    return not allowed or value in allowed


@dataclass(frozen=True, slots=True)
class Filters:
    """The feed's filters of one request, resolved (``self`` -> the caller's id)."""

    buckets: frozenset[int] = frozenset()
    types: frozenset[str] = frozenset()
    creators: frozenset[int] = frozenset()
    performers: frozenset[int] = frozenset()
    exclude_performers: frozenset[int] = frozenset()
    actor_types: frozenset[str] = frozenset()
    raw: tuple[tuple[str, str], ...] = field(default=(), compare=False)

    def digest(self) -> str:
        return _digest({name: getattr(self, name) for name in FEED_FILTERS})

    def admit(self, event: StandinFeedEvent, agent_id: int) -> bool:
        performer = event.performer_id
        actor = "agent" if performer == agent_id else "person"
        return (_passes(self.buckets, event.bucket_id) and _passes(self.types, event.event_type)
                and _passes(self.creators, event.creator_id) and _passes(self.performers, performer)
                and performer not in self.exclude_performers and _passes(self.actor_types, actor))


def parse_filters(query: Mapping[str, str], caller: Person) -> Filters:
    buckets = _ids(query, "buckets")
    if len(buckets) > MAX_BUCKETS:
        raise BadFilter(f"at most {MAX_BUCKETS} buckets")
    actor_types = _items(query, "actor_types")
    if not actor_types <= ACTOR_TYPES:
        raise BadFilter("actor_types are agent and person")
    return Filters(buckets, _items(query, "types"), _ids(query, "creators"),
                   _ids(query, "performers", caller), _ids(query, "exclude_performers", caller), actor_types,
                   tuple((name, query[name]) for name in FEED_FILTERS if query.get(name)))


class _Lane:
    """What the feed and the inbox share: signed positions, ``since``, and pages with ``next``."""

    def __init__(self, world: World, url: str, now: Callable[[], datetime], page_size: int) -> None:
        self._world = world
        self._url = url
        self._now = now
        self.page_size = page_size
        self._signer = Signer()
        self._lock = threading.RLock()

    def _begin(self, query: Mapping[str, str], digest: str, newest: int, what: str,
               **minted_for: int) -> tuple[int, dict[str, Any] | None] | Reply:
        """The id a page starts after and its signed position's fields (None: at ``since``), or a refusal."""
        token = query.get("position")
        if token is None:
            since = query.get("since", "now").strip()
            if since != "now" and not since.isdigit():
                return error_reply(400, f"since is an {what} id, 0 or now", reason="invalid_since")
            return (newest if since == "now" else int(since)), None
        fields = self._signer.read(token)
        wanted = {"a": self._world.account_id, **minted_for}
        if fields is None or any(fields.get(name) != value for name, value in wanted.items()):
            return error_reply(400, "The position is not valid", reason="invalid_position")
        if fields["d"] != digest:
            return error_reply(409, "The position was minted for another filter set", filters_digest=digest,
                               position_digest=fields["d"])
        return int(fields["i"]), fields

    def _page(self, name: str, wanted: list[Any], last: int, raw: Mapping[str, str],
              **position: object) -> Reply:
        """The first ``page_size`` of ``wanted``; its position after the page's last id when more
        remain, else after ``last``, the last id scanned."""
        page, more = wanted[: self.page_size], len(wanted) > self.page_size
        if more:
            last = page[-1].id
        token = self._signer.mint({"a": self._world.account_id, **position, "i": last})
        body: JsonObject = {name: [item.to_json() for item in page], "position": token}
        if more:
            body["next"] = f"{self._url}?{urlencode({**raw, 'position': token})}"
        return json_reply(200, body)


class Feed(_Lane):
    def __init__(self, world: World, account_url: str, now: Callable[[], datetime], *,
                 page_size: int = DEFAULT_FEED_PAGE_SIZE, delay: float = 0.0) -> None:
        if page_size < 1:
            raise ValueError(f"a feed page holds at least one event, not {page_size}")
        super().__init__(world, f"{account_url}/events.json", now, page_size)
        self.delay = seconds(delay, "the feed's delay")
        self._recorded = threading.Condition(self._lock)
        self._events: list[StandinFeedEvent] = []
        self._ids = itertools.count(FIRST_EVENT_ID)
        self._epoch = 0
        self._epoch_after_id = 0
        self._withheld: set[int] = set()
        self._braked: set[int] = set()
        self._braking = 0
        self.listeners: list[Callable[[StandinFeedEvent], None]] = []

    def record(self, event_type: str, *, bucket_id: int, creator_id: int, recording_id: int,
               created_at: datetime, performed_by_id: int | None = None,
               details: Mapping[str, Any] | None = None) -> StandinFeedEvent:
        """Append an event; its ``kind`` and ``action`` come from ``event_type`` (``a.b.action``)."""
        kind, _, action = event_type.rpartition(".")
        with self._lock:
            event = StandinFeedEvent(next(self._ids), kind.replace(".", "_"), action, event_type, bucket_id,
                                     creator_id, recording_id, created_at, performed_by_id, details)
            self._events.append(event)
            if self._braking:
                self._braking -= 1
                self._braked.add(event.id)
            self._recorded.notify_all()
        for listener in self.listeners:
            listener(event)
        return event

    def record_message(self, message: Message) -> None:
        """A kept comment's or line's event (a boost has none)."""
        if message.kind in EVENT_TYPES:
            self.record(EVENT_TYPES[message.kind], bucket_id=message.bucket_id, creator_id=message.creator_id,
                        recording_id=message.id, created_at=message.created_at,
                        details={"parent_recording_id": message.recording_id})

    def brake_next(self, count: int = 1) -> None:
        if count < 0:
            raise ValueError(f"a count of events is not negative: {count}")
        with self._lock:
            self._braking += count

    def events(self) -> list[StandinFeedEvent]:
        with self._lock:
            return list(self._events)

    def withhold(self, project_id: int) -> None:
        with self._lock:
            self._withheld.add(project_id)

    def grant(self, project_id: int) -> None:
        with self._lock:
            self._withheld.discard(project_id)

    def visible_buckets(self, person: Person) -> frozenset[int]:
        with self._lock:
            every = {project.id for project in self._world.projects}
            return frozenset(every - (self._withheld if person.id == self._world.agent.id else set()))

    def newest_id(self) -> int:
        with self._lock:
            return self._events[-1].id if self._events else 0

    def wait_after(self, after: int, timeout: float) -> list[StandinFeedEvent]:
        """Events after id ``after``, without the poll lane's delay, waiting up to ``timeout`` s for one."""
        with self._recorded:
            served = self._served_after(after)
            if not served:
                self._recorded.wait(max(0.0, timeout))
                served = self._served_after(after)
            return served

    def event_about(self, recording_id: int) -> StandinFeedEvent | None:
        with self._lock:
            return next((event for event in self._events[::-1] if event.recording_id == recording_id), None)

    def begin_epoch(self, epoch_after_id: int | None = None) -> int:
        """Every position minted so far answers 410 with ``epoch_after_id`` (default: the newest id)."""
        with self._lock:
            self._epoch += 1
            self._epoch_after_id = epoch_after_id if epoch_after_id is not None else self.newest_id()
            return self._epoch_after_id

    def answer(self, request: Incoming, caller: Person) -> Reply:
        try:
            filters = parse_filters(request.query, caller)
        except BadFilter as error:
            return error_reply(400, str(error), reason="invalid_filter")
        digest = filters.digest()
        with self._lock:
            if isinstance(begun := self._begin(request.query, digest, self.newest_id(), "event"), Reply):
                return begun
            after, position = begun
            if position is not None and position["e"] < self._epoch:
                resume = f"{self._url}?{urlencode({**dict(filters.raw), 'since': str(self._epoch_after_id)})}"
                return error_reply(410, "The position predates the feed's epoch",
                                   epoch_after_id=self._epoch_after_id, resume=resume)
            agent, visible, ready = self._world.agent.id, self.visible_buckets(caller), self._ready(after)
            shown = [event for event in ready if filters.admit(event, agent) and event.bucket_id in visible]
            last = ready[-1].id if ready else after
            return self._page("events", shown, last, dict(filters.raw), d=digest, e=self._epoch)

    def _ready(self, after: int) -> list[StandinFeedEvent]:
        """The events after ``after`` old enough to serve, in id order: a younger one holds back the rest."""
        cutoff = self._now() - timedelta(seconds=self.delay)
        return list(itertools.takewhile(lambda event: event.created_at <= cutoff, self._served_after(after)))

    def _served_after(self, after: int) -> list[StandinFeedEvent]:
        return [event for event in self._events if event.id > after and event.id not in self._braked]


@dataclass(frozen=True, slots=True)
class Addressing:
    id: int
    person_id: int
    reason: str
    addressed_at: datetime
    event: StandinFeedEvent

    def to_json(self) -> JsonObject:
        return {"addressing_id": self.id, "reason": self.reason,
                "addressed_at": basecamp_time(self.addressed_at), "event": self.event.to_json()}


class Inbox(_Lane):
    def __init__(self, world: World, feed: Feed, store: Store, url: str, now: Callable[[], datetime]) -> None:
        super().__init__(world, f"{url}/inbox.json", now, DEFAULT_INBOX_PAGE_SIZE)
        self._feed = feed
        self._store = store
        self.agents: set[int] = {world.agent.id}
        self._items: list[Addressing] = []
        self._ids = itertools.count(FIRST_ADDRESSING_ID)
        feed.listeners.append(self.hear)

    def hear(self, event: StandinFeedEvent) -> None:
        for person_id, reason in self._addressed(event):
            if person_id != event.performer_id:
                with self._lock:
                    self._items.append(Addressing(next(self._ids), person_id, reason, self._now(), event))

    def _addressed(self, event: StandinFeedEvent) -> list[tuple[int, str]]:
        kind = KIND_OF_EVENT.get(event.event_type)
        message = self._store.message(kind, event.recording_id) if kind is not None else None
        if message is not None:
            subscribers = self._store.joined("subscribers", message.recording_id)
            mentioned = [(person, "mentioned") for person in mentioned_person_ids(message.content)]
            return mentioned + [(person, "subscribed") for person in subscribers]
        if event.event_type.endswith(".assignment_changed") and event.details is not None:
            return [(int(person), "assigned") for person in event.details.get("added_person_ids", ())]
        return []

    def answer(self, request: Incoming, caller: Person) -> Reply:
        if caller.id not in self.agents:
            return Reply(403)  # the agent guard's bare head :forbidden
        query = request.query
        reasons, types, buckets = (_items(query, name) for name in INBOX_FILTERS)
        if not reasons <= set(REASONS):
            return error_reply(400, f"reasons are {', '.join(REASONS)}", reason="invalid_filter")
        if not all(bucket.isdigit() for bucket in buckets) or len(buckets) > MAX_BUCKETS:
            return error_reply(400, f"buckets are at most {MAX_BUCKETS} ids", reason="invalid_filter")
        bucket_ids = frozenset(map(int, buckets))
        digest = _digest({"reasons": reasons, "types": types, "buckets": bucket_ids})
        raw = {name: query[name] for name in INBOX_FILTERS if query.get(name)}
        visible = self._feed.visible_buckets(caller)
        with self._lock:
            retained = self._now() - RETENTION
            newest = self._items[-1].id if self._items else 0
            if isinstance(begun := self._begin(query, digest, newest, "item", p=caller.id), Reply):
                return begun
            after, position = begun
            behind = (item.id > after and item.addressed_at < retained for item in self._items)
            if position is not None and any(behind):
                resume = f"{self._url}?{urlencode({**raw, 'since': '0'})}"
                return error_reply(410, "The position fell behind the inbox's retention", resume=resume)
            mine = [item for item in self._items if item.person_id == caller.id and item.id > after]
            kept = [item for item in mine if item.addressed_at >= retained]
            wanted = [item for item in kept if _passes(reasons, item.reason)
                      and _passes(types, item.event.event_type) and _passes(bucket_ids, item.event.bucket_id)
                      and item.event.bucket_id in visible]
            last = mine[-1].id if mine else after
            return self._page("items", wanted, last, raw, p=caller.id, d=digest)


class TicketRefused(Exception):
    """Why an upgrade's ticket is not good (no ticket text in the message)."""


class StreamTickets:
    def __init__(self, world: World, now: Callable[[], datetime], url: str, ttl: int) -> None:
        self._world = world
        self._now = now
        self._url = url
        self.ttl = ttl
        self._signer = Signer()
        self._lock = threading.Lock()
        self.minted = 0

    def mint(self, person: Person) -> Reply:
        expiry = (self._now() + timedelta(seconds=self.ttl)).timestamp()
        fields = {"a": self._world.account_id, "p": person.id, "x": expiry, "n": secrets.token_hex(8)}
        ticket = self._signer.mint(fields)
        with self._lock:
            self.minted += 1
        body = {"ticket": ticket, "expires_in": self.ttl, "url": f"{self._url}?ticket={ticket}"}
        return json_reply(201, body)

    def redeem(self, ticket: str) -> Person:
        """The person a good ticket was minted for; ``TicketRefused`` otherwise."""
        fields = self._signer.read(ticket)
        if fields is None:
            raise TicketRefused("not a ticket of this stand-in")
        person = self._world.person(fields["p"])
        if fields["a"] != self._world.account_id or person is None:
            raise TicketRefused("a ticket of another account")
        expiry = fields["x"]
        if self._now().timestamp() >= expiry:
            raise TicketRefused("the ticket expired")
        return person


class LiveStream:
    """The cable's server: bound when made, serving after ``start``."""

    def __init__(self, world: World, feed: Feed, now: Callable[[], datetime], ticket_ttl: int,
                 ping_interval: float) -> None:
        self.world = world
        self.feed = feed
        self.faults: Book[LiveFault] = Book()
        self.ping_interval = ping_interval
        self.stopping = threading.Event()
        self._people: dict[int, Person] = {}
        self._lock = threading.Lock()
        self._server: Server = serve(
            self._handle, HOST, 0, process_request=self._upgrade, subprotocols=[SUBPROTOCOL],
            compression=None, logger=_QUIET,
            select_subprotocol=lambda _, offered: SUBPROTOCOL if SUBPROTOCOL in offered else None)
        self.port = int(self._server.socket.getsockname()[1])
        self.tickets = StreamTickets(world, now, f"ws://{HOST}:{self.port}{CABLE_PATH}", ticket_ttl)
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        if self._thread is None:
            name = f"standin-cable:{self.port}"
            self._thread = threading.Thread(target=self._server.serve_forever, name=name, daemon=True)
            self._thread.start()

    def stop(self) -> None:
        """Close every connection and the port (unstarted, the port only: ``shutdown`` would hang)."""
        self.stopping.set()
        if self._thread is None:
            self._server.socket.close()
            return
        self._server.shutdown()
        self._thread.join()
        self._thread = None

    def connections(self) -> int:
        """Open connections, confirmed or not."""
        with self._lock:
            return len(self._people)

    def drop_all(self) -> int:
        """Cut every open connection now (no close frame); how many."""
        with self._lock:
            found = [connection for connection in self._server.connections if id(connection) in self._people]
        for connection in found:
            cut(connection.socket)
        return len(found)

    def _upgrade(self, connection: ServerConnection, request: Request) -> Response | None:
        target = urlsplit(request.path)
        if target.path != CABLE_PATH:
            return connection.respond(HTTPStatus.NOT_FOUND, "Not Found\n")
        taken = self.faults.take_first(lambda fault: fault.at_upgrade)
        fault = taken[0] if taken else None
        if fault is not None and fault.action is LiveAction.refuse:
            self.stopping.wait(fault.delay)
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

    def _handle(self, connection: ServerConnection) -> None:
        with self._lock:
            person = self._people.get(id(connection))
        if person is None:
            return
        session = _Session(connection, person, self)
        sender = threading.Thread(target=session.send_loop, name="standin-cable-send", daemon=True)
        try:
            with contextlib.suppress(ConnectionClosed):
                session.send({"type": "welcome"})
                sender.start()
                for text in connection:
                    session.command(text)
        finally:
            session.closed.set()
            with self._lock:
                self._people.pop(id(connection), None)


@dataclass(frozen=True, slots=True)
class _Subscription:
    identifier: str
    filters: Filters
    buckets: frozenset[int]  # the person's projects when it subscribed


class _Session:
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
        if name != "subscribe":
            if name == "unsubscribe":
                with self._lock:
                    self._subscription = None
            return
        try:
            if channel != CHANNEL:
                raise BadFilter(f"no channel {channel!r}")
            query = {str(key): str(item) for key, item in params.items() if key != "channel"}
            filters = parse_filters(query, self._person)
        except (BadFilter, AttributeError):
            self.send({"identifier": identifier, "type": "reject_subscription"})
            return
        feed = self._stream.feed
        after, buckets = feed.newest_id(), feed.visible_buckets(self._person)
        self.send({"identifier": identifier, "type": "confirm_subscription"})
        with self._lock:
            self._subscription, self._after = _Subscription(identifier, filters, buckets), after
        if self._stream.faults.take_first(lambda fault: fault.action is LiveAction.garble) is not None:
            LOGGER.info("cable: an unreadable frame after the confirmation (fault)")
            self._connection.send("garbled {")  # not JSON

    def send_loop(self) -> None:
        stream = self._stream
        next_ping = time.monotonic() + stream.ping_interval
        with contextlib.suppress(ConnectionClosed):
            while not self.closed.is_set() and not stream.stopping.is_set():
                wait = max(0.0, next_ping - time.monotonic())
                with self._lock:
                    subscription, after = self._subscription, self._after
                if subscription is None:
                    self.closed.wait(min(wait, 0.05))
                elif not self._deliver(subscription, stream.feed.wait_after(after, wait)):
                    return
                if time.monotonic() >= next_ping:
                    self.send({"type": "ping", "message": int(time.time())})
                    next_ping = time.monotonic() + stream.ping_interval

    def _deliver(self, subscription: _Subscription, events: Sequence[StandinFeedEvent]) -> bool:
        """Send what the filters admit; False when the connection was cut (fault ``drop``)."""
        agent_id = self._stream.world.agent.id
        for event in events:
            with self._lock:
                if self._subscription is not subscription:
                    return True
                self._after = event.id
            if event.bucket_id not in subscription.buckets:
                continue  # a project granted later is heard after a new subscription
            if not subscription.filters.admit(event, agent_id):
                continue
            taken = self._stream.faults.take_first(lambda fault: fault.at_event)
            if taken is not None:
                fault, last = taken
                if fault.action is LiveAction.drop:
                    LOGGER.info("cable: connection cut before event %d (fault)", event.id)
                    cut(self._connection.socket)
                    return False
                if fault.action is LiveAction.skip:
                    if self._skipped_after is None:
                        self._skipped_after = event.id - 1
                    if last:
                        overflow = {"overflow": {"after_id": self._skipped_after}}
                        self._skipped_after = None
                        self.send({"identifier": subscription.identifier, "message": overflow})
                    continue
                if fault.action is LiveAction.stall and self._stream.stopping.wait(fault.delay):
                    return False
            self.send({"identifier": subscription.identifier, "message": {"events": [event.to_json()]}})
        return True


def cut(connection: socket.socket) -> None:
    """End a TCP connection at once: no answer, no close frame."""
    with contextlib.suppress(OSError):
        connection.shutdown(socket.SHUT_RDWR)
