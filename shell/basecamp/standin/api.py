"""Basecamp's API as the stand-in answers it when nothing goes wrong: routes, JSON, pages, refusals.

It is faithful, not kind, so a client's bug shows here first. A request is checked in the order Basecamp's
edge and then its controllers check it: no ``User-Agent`` is a 400 in plain text; no bearer token of a
person in the world (or a live one Launchpad issued) a 401; a path naming no route a 404, a method the route
does not take a 405; an unknown recording, one outside the bucket a legacy path names, or a place the kind
cannot be posted on a 404. A POST not ``application/json`` is a 415, malformed JSON a 400, blank content a
422, a boost over 16 code points a 422 only with ``enforce_boost_length`` (Basecamp's clients enforce it,
Basecamp does not). A create answers 201 with the whole object and a ``Location``, as the token's person, at
the stand-in's clock.

Every route answers under ``/{account}/`` flat and in its legacy ``buckets/{id}/`` form (but the
account-wide ones), with or without ``.json``. The JSON is Basecamp's OpenAPI document's: every required
field, every value of its declared type, times in UTC with milliseconds, every URL absolute on the
stand-in's origin and bucket-scoped. Listings are oldest first, showing what is visible by the stand-in's
clock, in geared pages (15, 30, 50, then 100) with a ``Link`` to the next only while more remain.
"""

from __future__ import annotations

import functools
import html
import json
import re
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from typing import TYPE_CHECKING, Any, Generic, TypeVar
from urllib.parse import urlencode

from shell.basecamp.standin.world import CAMPFIRE, CARD, COMMENT, Kind

if TYPE_CHECKING:  # the lanes and Launchpad answer in this module's values
    from shell.basecamp.standin.lanes import Feed, Inbox, StandinFeedEvent, StreamTickets
    from shell.basecamp.standin.launchpad import Launchpad
    from shell.basecamp.standin.world import Message, Person, Recording, Store, World

JsonObject = dict[str, Any]
Headers = tuple[tuple[str, str], ...]
Item = TypeVar("Item")

BASECAMP_PAGE_SIZES = (15, 30, 50, 100)
BOOST_MAX_LENGTH = 16
MENTION_TYPE = "application/vnd.basecamp.mention"
WORLD_CREATED_AT = "2026-01-05T09:00:00.000Z"
LAUNCHPAD_PATHS = ("/authorization/new", "/authorization/token", "/authorization.json",
                   "/.well-known/oauth-authorization-server", "/oauth/device", "/device")
MISSING_USER_AGENT = ("Bad Request: a User-Agent header is required. Name your application and a way to "
                      "reach you, e.g. `User-Agent: MyApp (me@example.com)`.\n")


@dataclass(frozen=True, slots=True)
class Incoming:
    """A request read whole (so a fault that drops the connection still sees and records all of
    it); header names lower case, the query keeping a repeated parameter's last value."""

    method: str
    path: str
    query: dict[str, str] = field(default_factory=dict)
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""


@dataclass(frozen=True, slots=True)
class Reply:
    """An answer; its writer adds ``Content-Length``, so every one can share a keep-alive connection."""

    status: int
    headers: Headers = ()
    body: bytes = b""
    trickle: float = 0.0  # seconds between the body's bytes after the headers; 0: the body at once


def json_reply(status: int, value: object, headers: Headers = ()) -> Reply:
    body = json.dumps(value, ensure_ascii=False).encode("utf-8")
    json_type = ("Content-Type", "application/json; charset=utf-8")
    return Reply(status, (json_type, ("X-Request-Id", uuid.uuid4().hex), *headers), body)


def error_reply(status: int, error: str, headers: Headers = (), **extra: object) -> Reply:
    return json_reply(status, {"error": error, **extra}, headers)


def text_reply(status: int, text: str) -> Reply:
    headers = (("Content-Type", "text/plain; charset=utf-8"), ("X-Request-Id", uuid.uuid4().hex))
    return Reply(status, headers, text.encode("utf-8"))


def not_found() -> Reply:
    return error_reply(404, "Not Found")


def mention_markup(sgid: str, name: str, words: str) -> str:
    """``words`` after a mention of ``name`` (whom ``sgid`` names), marked up as Basecamp marks one."""
    attachment = f'<bc-attachment sgid="{html.escape(sgid)}" content-type="{MENTION_TYPE}">'
    return f"<div>{attachment}@{html.escape(name)}</bc-attachment> {html.escape(words)}</div>"


def basecamp_time(moment: datetime) -> str:
    """``2026-03-23T22:24:02.130Z``."""
    if moment.tzinfo is None:
        raise ValueError("a naive datetime has no zone; Basecamp times are UTC")
    utc = moment.astimezone(UTC)
    return utc.strftime("%Y-%m-%dT%H:%M:%S.") + f"{utc.microsecond // 1000:03d}Z"


class Endpoint(StrEnum):
    """Each route by its path under the account; its numbers are the route's ids."""

    profile = r"my/profile"
    comments = r"recordings/(\d+)/comments"
    comment = r"comments/(\d+)"
    boosts = r"recordings/(\d+)/boosts"
    boost = r"boosts/(\d+)"
    chats = r"chats"
    chat = r"chats/(\d+)"
    lines = r"chats/(\d+)/lines"
    line = r"chats/(\d+)/lines/(\d+)"
    events = r"events"
    inbox = r"inbox"
    stream_ticket = r"events/stream_ticket"
    projects = r"projects"
    card = r"card_tables/cards/(\d+)"
    subscription = r"recordings/(\d+)/subscription"
    recording_events = r"recordings/(\d+)/events"


COLLECTIONS = frozenset({Endpoint.comments, Endpoint.boosts, Endpoint.lines})
ACCOUNT_WIDE = frozenset({Endpoint.profile, Endpoint.chats, Endpoint.events, Endpoint.inbox,
                          Endpoint.stream_ticket, Endpoint.projects})  # fmt: skip
KIND_OF = {Endpoint.comments: Kind.comment, Endpoint.comment: Kind.comment, Endpoint.boosts: Kind.boost,
           Endpoint.boost: Kind.boost, Endpoint.lines: Kind.chat_line, Endpoint.line: Kind.chat_line}
_PATTERNS = tuple((endpoint, re.compile(endpoint.value + r"(?:\.json)?")) for endpoint in Endpoint)
_ACCOUNT = re.compile(r"/(\d+)/(?:buckets/(\d+)/)?(.*)")


@dataclass(frozen=True, slots=True)
class EndpointMatch:
    """An endpoint and the path's ids in order: the recording or Campfire, then the line; or the
    one comment or boost."""

    endpoint: Endpoint
    bucket_id: int | None
    ids: tuple[int, ...]

    def methods(self) -> frozenset[str]:
        if self.endpoint is Endpoint.stream_ticket:
            return frozenset({"POST"})
        return frozenset({"GET", "POST"}) if self.endpoint in COLLECTIONS else frozenset({"GET"})


def parse_route(path: str, account_id: int) -> EndpointMatch | None:
    """Pure: it does not know whether the ids name anything."""
    account = _ACCOUNT.fullmatch(path)
    if account is None or int(account.group(1)) != account_id:
        return None
    bucket = account.group(2)
    for endpoint, pattern in _PATTERNS:
        if found := pattern.fullmatch(account.group(3)):
            if bucket is not None and endpoint in ACCOUNT_WIDE:
                return None
            return EndpointMatch(endpoint, int(bucket) if bucket else None, tuple(map(int, found.groups())))
    return None


@dataclass(frozen=True, slots=True)
class Page(Generic[Item]):
    items: Sequence[Item]
    number: int
    total: int
    has_next: bool


def page_number(query: dict[str, str]) -> int:
    """``?page=N``; a missing, malformed or non-positive one is page 1."""
    try:
        return max(int(query.get("page", "1")), 1)
    except ValueError:
        return 1


def page_of(items: Sequence[Item], number: int, sizes: Sequence[int]) -> Page[Item]:
    before = number - 1
    start = sum(sizes[:before]) + max(0, before - len(sizes)) * sizes[-1]
    end = start + sizes[min(before, len(sizes) - 1)]
    return Page(items[start:end], number, len(items), end < len(items))


def next_link(origin: str, path: str, query: dict[str, str], number: int) -> str:
    return f"<{origin}{path}?{urlencode({**query, 'page': str(number + 1)})}>; rel=\"next\""


class Renderer:
    """The world and the store's messages as Basecamp's JSON, each as its OpenAPI schema has it."""

    def __init__(self, world: World, store: Store, origin: str, now: Callable[[], datetime]) -> None:
        self.world = world
        self._store = store
        self.account_url = f"{origin}/{world.account_id}"
        self._now = now

    def api_url(self, recording: Recording, suffix: str = "") -> str:
        return f"{self.account_url}/buckets/{recording.bucket_id}/{recording.path}{suffix}.json"

    def app_url(self, recording: Recording, parent: Recording | None = None) -> str:
        """A recording's page (served elsewhere by Basecamp, named on this origin here); a
        comment's is its parent's page with an anchor."""
        if recording.type == COMMENT and parent is not None:
            return f"{self.app_url(parent)}#__recording_{recording.id}"
        bucket = f"{self.account_url}/buckets/{recording.bucket_id}"
        if recording.type.startswith("Chat::Lines::"):
            return f"{bucket}/chats/{recording.parent_id}@{recording.id}"
        return f"{bucket}/{recording.path}"

    def person(self, person: Person) -> JsonObject:
        return {"id": person.id, "attachable_sgid": person.sgid, "name": person.name,
                "email_address": person.email_address, "personable_type": "User", "title": person.title,
                "bio": "", "location": "", "created_at": WORLD_CREATED_AT, "updated_at": WORLD_CREATED_AT,
                "admin": person.admin, "owner": person.owner, "client": False, "employee": True,
                "time_zone": "Etc/UTC", "avatar_url": f"{self.account_url}/people/{person.id}/avatar.png",
                "company": {"id": 1_033_447_001, "name": self.world.account_name}, "can_ping": True,
                "can_manage_projects": person.admin, "can_manage_people": person.admin,
                "can_access_timesheet": person.admin, "can_access_hill_charts": True}  # fmt: skip

    def message(self, message: Message, *, alone: bool = True) -> JsonObject:
        """As a read answers (``alone``; a boost then names what it boosts), or as a listing shows it."""
        if message.kind is Kind.boost:
            shown: JsonObject = {"id": message.id, "content": message.content,
                                 "created_at": basecamp_time(message.created_at),
                                 "booster": self.creator(message.creator_id)}
            if alone:
                boosted = self._recording(message.recording_id)
                shown["recording"] = self.parent(boosted, self._parent_of(boosted))
            return shown
        recording = self._recording(message.id)
        parent = self._parent_of(recording)
        assert parent is not None, f"recording {recording.id} has no parent"  # a comment's or a line's
        shown = {**self._recording_fields(recording, basecamp_time(message.created_at), parent),
                 **self._boosts(recording), "parent": self.parent(parent, self._parent_of(parent)),
                 "bucket": self.bucket(recording.bucket_id), "creator": self.creator(message.creator_id),
                 "content": message.content}
        return {**shown, "content_attachments": []} if message.kind is Kind.comment else shown

    def campfire(self, campfire: Recording) -> JsonObject:
        return {**self._recording_fields(campfire, WORLD_CREATED_AT), "position": 1,
                "bucket": self.bucket(campfire.bucket_id), "creator": self.person(self.world.operator),
                "topic": campfire.title, "lines_url": self.api_url(campfire, "/lines"),
                "files_url": self.api_url(campfire, "/uploads")}

    def card(self, card: Recording) -> JsonObject:
        """Made by its creator: the account's owner, the operator, for the world's own cards."""
        creator = self.world.operator.id if card.creator_id is None else card.creator_id
        column = f"{self.account_url}/buckets/{card.bucket_id}/card_tables/columns/{card.bucket_id}"
        table = {"id": card.bucket_id, "title": "Card Table", "type": "Kanban::Column",
                 "url": f"{column}.json", "app_url": column}
        assignees = [self.creator(person_id) for person_id in self._store.joined("assignees", card.id)]
        return {**self._recording_fields(card, WORLD_CREATED_AT),
                "subscription_url": self._recording_url(card, "subscription"), "position": 1,
                "content": card.content, "description": card.content, "description_attachments": [],
                "due_on": None, "completed": False,
                "comments_count": len(self._store.messages(Kind.comment, card.id)),
                "comments_url": self.api_url(card, "/comments"), "parent": table,
                "bucket": self.bucket(card.bucket_id), "creator": self.creator(creator),
                "assignees": assignees, "completion_subscribers": [], "steps": [],
                **self._boosts(card)}  # fmt: skip

    def subscription(self, recording: Recording, viewer: Person) -> JsonObject:
        subscribers = self._store.joined("subscribers", recording.id)
        return {"subscribed": viewer.id in subscribers, "count": len(subscribers),
                "url": self._recording_url(recording, "subscription"),
                "subscribers": [self.creator(person_id) for person_id in subscribers]}

    def recording_event(self, event: StandinFeedEvent) -> JsonObject:
        return {"id": event.id, "recording_id": event.recording_id, "action": event.action,
                "details": dict(event.details or {}), "created_at": basecamp_time(event.created_at),
                "creator": self.creator(event.creator_id)}

    def parent(self, recording: Recording, parent: Recording | None = None) -> JsonObject:
        return {"id": recording.id, "title": recording.title, "type": recording.type,
                "url": self.api_url(recording), "app_url": self.app_url(recording, parent)}

    def bucket(self, bucket_id: int) -> JsonObject:
        project = self.world.project(bucket_id)
        return {"id": bucket_id, "name": project.name if project else "", "type": "Project"}

    def creator(self, person_id: int) -> JsonObject:
        person = self.world.person(person_id)
        assert person is not None, f"no person {person_id} in the world"  # the store keeps only theirs
        return self.person(person)

    def _recording_fields(self, recording: Recording, stamp: str,
                          parent: Recording | None = None) -> JsonObject:
        return {"id": recording.id, "status": "active", "visible_to_clients": False, "created_at": stamp,
                "updated_at": stamp, "title": recording.title, "inherits_status": True,
                "type": recording.type, "url": self.api_url(recording),
                "app_url": self.app_url(recording, parent)}

    def _boosts(self, recording: Recording) -> JsonObject:
        """A recording's boosts, counted as a listing would show them."""
        boosts = self._store.messages(Kind.boost, recording.id, self._now())
        return {"boosts_count": len(boosts), "boosts_url": self._recording_url(recording, "boosts")}

    def _recording_url(self, recording: Recording, what: str) -> str:
        return f"{self.account_url}/buckets/{recording.bucket_id}/recordings/{recording.id}/{what}.json"

    def _recording(self, recording_id: int) -> Recording:
        recording = self._store.recording(recording_id)
        assert recording is not None, f"no recording {recording_id} in the store"  # it keeps what it shows
        return recording

    def _parent_of(self, recording: Recording) -> Recording | None:
        return self._recording(recording.parent_id) if recording.parent_id else None


class BasecampApi:
    """Answers Basecamp's requests from the world and the store; the feed, the inbox, the live
    lane's tickets and Launchpad answer their own."""

    def __init__(
        self, world: World, store: Store, origin: str, now: Callable[[], datetime], page_sizes: Sequence[int],
        *, feed: Feed, inbox: Inbox, tickets: StreamTickets, launchpad: Launchpad, enforce_boost_length: bool,
    ) -> None:  # fmt: skip
        self.world = world
        self._store = store
        self._origin = origin
        self._now = now
        self._page_sizes = tuple(page_sizes)
        self._enforce_boost_length = enforce_boost_length
        self._render = Renderer(world, store, origin, now)
        self.feed = feed
        self._inbox = inbox
        self._tickets = tickets
        self.launchpad = launchpad

    def answer(self, request: Incoming, lag: float = 0.0) -> Reply:
        """``lag`` seconds hide what it creates from listings."""
        if not request.headers.get("user-agent", "").strip():
            return text_reply(400, MISSING_USER_AGENT)
        if request.path in LAUNCHPAD_PATHS:
            return self.launchpad.answer(request)
        person = self._authenticate(request.headers.get("authorization", ""))
        if person is None:
            return error_reply(401, "Unauthorized", (("WWW-Authenticate", 'Bearer realm="Basecamp"'),))
        route = parse_route(request.path, self.world.account_id)
        if route is None:
            return not_found()
        if request.method not in route.methods():
            return error_reply(405, "Method Not Allowed", (("Allow", ", ".join(sorted(route.methods()))),))
        if route.endpoint is Endpoint.stream_ticket:
            return self._tickets.mint(person)
        if request.method == "POST":
            return self._create(route, request, person, lag)
        return self._read(route, request, person)

    def seed(self, kind: Kind, recording_id: int, creator_id: int, content: str,
             created_at: datetime | None = None) -> Message:
        """Place a message as if ``creator_id`` had posted it at ``created_at`` (default: now);
        ValueError when the place, the person or the time is not one."""
        recording = self._store.recording(recording_id)
        if recording is None or not kind.accepts(recording):
            raise ValueError(f"no recording {recording_id} takes a {kind}")
        if self.world.person(creator_id) is None:
            raise ValueError(f"no person {creator_id} in the world")
        if created_at is not None and created_at.tzinfo is None:
            raise ValueError("a naive created_at has no zone; give a UTC time")
        message = self._store.post(kind, recording, creator_id, content, created_at=created_at or self._now())
        self.feed.record_message(message)
        return message

    def add_card(self, creator_id: int, project_id: int, title: str,
                 content: str = "") -> tuple[Recording, int]:
        """``creator_id``'s new card in the project, and its ``card.created`` event's id."""
        if self.world.project(project_id) is None or self.world.person(creator_id) is None:
            raise ValueError("a card is placed in a project of the world by a person of it")
        card = self._store.add_card(project_id, title, creator_id, content)
        event = self.feed.record("card.created", bucket_id=project_id, creator_id=creator_id,
                                 recording_id=card.id, created_at=self._now())
        return card, event.id

    def mention(self, creator_id: int, recording_id: int, text: str) -> tuple[Message, int]:
        """``creator_id``'s comment mentioning the agent as Basecamp marks one up, and its event's id."""
        agent = self.world.agent
        content = mention_markup(agent.sgid, agent.name.split()[0], text)
        message = self.seed(Kind.comment, recording_id, creator_id, content)
        event = self.feed.event_about(message.id)
        assert event is not None  # seeding a comment records its event
        return message, event.id

    def shown(self, kind: Kind, recording_id: int) -> list[JsonObject]:
        return [self._render.message(message) for message in self._store.messages(kind, recording_id)]

    def _authenticate(self, authorization: str) -> Person | None:
        scheme, _, token = authorization.strip().partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            return None
        return self.world.person_with_token(token.strip()) or self.launchpad.person_for(token.strip())

    def _read(self, route: EndpointMatch, request: Incoming, person: Person) -> Reply:
        match route.endpoint:
            case Endpoint.profile:
                return json_reply(200, self._render.person(person))
            case Endpoint.events:
                return self.feed.answer(request, person)
            case Endpoint.inbox:
                return self._inbox.answer(request, person)
            case Endpoint.projects:
                visible = self.feed.visible_buckets(person)
                shown = [{"id": project.id, "name": project.name} for project in self.world.projects]
                return json_reply(200, [project for project in shown if project["id"] in visible])
            case Endpoint.chats:
                campfires = [project.campfire for project in self.world.projects]
                return self._listing(request, campfires, self._render.campfire)
            case Endpoint.chat | Endpoint.card | Endpoint.subscription | Endpoint.recording_events:
                return self._read_recording(route, request, person)
        kind = KIND_OF[route.endpoint]
        if route.endpoint in COLLECTIONS:
            destination = self._destination(route, kind)
            if destination is None:
                return not_found()
            messages = self._store.messages(kind, destination.id, self._now())
            if kind is Kind.chat_line and request.query.get("direction") == "desc":
                messages.reverse()
            return self._listing(request, messages, functools.partial(self._render.message, alone=False))
        message = self._store.message(kind, route.ids[-1])
        if message is None or route.bucket_id not in (None, message.bucket_id):
            return not_found()
        if kind is Kind.chat_line and message.recording_id != route.ids[0]:
            return not_found()
        return json_reply(200, self._render.message(message))

    def _read_recording(self, route: EndpointMatch, request: Incoming, person: Person) -> Reply:
        """A Campfire, a card, a recording's subscription or its events (admission's reads)."""
        recording = self._recording(route)
        if recording is None:
            return not_found()
        match route.endpoint:
            case Endpoint.chat if recording.type == CAMPFIRE:
                return json_reply(200, self._render.campfire(recording))
            case Endpoint.card if recording.type == CARD:
                return json_reply(200, self._render.card(recording))
            case Endpoint.subscription if recording.type != CAMPFIRE:
                return json_reply(200, self._render.subscription(recording, person))
            case Endpoint.chat | Endpoint.card | Endpoint.subscription:
                return not_found()
        # newest first, as Basecamp lists a recording's events
        events = [event for event in reversed(self.feed.events()) if event.recording_id == recording.id]
        return self._listing(request, events, self._render.recording_event)

    def _create(self, route: EndpointMatch, request: Incoming, person: Person, lag: float) -> Reply:
        kind = KIND_OF[route.endpoint]
        destination = self._destination(route, kind)
        if destination is None:
            return not_found()
        media_type = request.headers.get("content-type", "").partition(";")[0].strip().lower()
        if media_type != "application/json":
            return error_reply(415, "Unsupported Media Type")
        try:
            body = json.loads(request.body)
        except ValueError:
            return error_reply(400, "Bad Request", message="The body is not valid JSON.")
        content = body.get("content") if isinstance(body, dict) else None
        if not isinstance(content, str) or not content.strip():
            return error_reply(422, "Content can't be blank")
        if kind is Kind.boost and self._enforce_boost_length and len(content) > BOOST_MAX_LENGTH:
            return error_reply(422, f"Content is too long (maximum is {BOOST_MAX_LENGTH} characters)")
        rich_text = kind is Kind.chat_line and body.get("content_type") == "text/html"
        now, later = self._now(), timedelta(seconds=lag)
        created = self._store.post(kind, destination, person.id, content, created_at=now,
                                   visible_at=now + later, rich_text=rich_text)
        self.feed.record_message(created)
        shown = self._render.message(created)
        boost = f"{self._render.account_url}/buckets/{created.bucket_id}/boosts/{created.id}.json"
        location = boost if kind is Kind.boost else str(shown["app_url"])
        return json_reply(201, shown, (("Location", location),))

    def _listing(self, request: Incoming, items: Sequence[Item], show: Callable[[Item], JsonObject]) -> Reply:
        page = page_of(items, page_number(request.query), self._page_sizes)
        headers = [("X-Total-Count", str(page.total))]
        if page.has_next:
            headers.append(("Link", next_link(self._origin, request.path, request.query, page.number)))
        return json_reply(200, [show(item) for item in page.items], tuple(headers))

    def _recording(self, route: EndpointMatch) -> Recording | None:
        """The route's recording, if it is in the bucket a legacy path names."""
        recording = self._store.recording(route.ids[0])
        if recording is None or route.bucket_id not in (None, recording.bucket_id):
            return None
        return recording

    def _destination(self, route: EndpointMatch, kind: Kind) -> Recording | None:
        recording = self._recording(route)
        return recording if recording is not None and kind.accepts(recording) else None
