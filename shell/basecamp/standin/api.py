"""Basecamp's behaviour, endpoint by endpoint: what a request gets when nothing goes wrong.

Rules (checked in this order, as Basecamp's edge and then its controllers would):
1. No ``User-Agent`` -> 400 ``text/plain``, no JSON at all.
2. No bearer token of a person in the world (or a live one Launchpad issued) -> 401.
3. A path that names no route -> 404; a route that does not take the method -> 405.
4. An unknown recording, Campfire, comment, boost or line -> 404, as is one outside the bucket a
   legacy path names, and a place the kind cannot be posted on.
5. A POST: not ``application/json`` -> 415; malformed JSON -> 400; blank ``content`` -> 422; a
   boost over 16 code points -> 422 only with ``enforce_boost_length`` (Basecamp's clients
   enforce it, Basecamp does not).
6. A create answers 201 with the whole object and a ``Location``, by the token's person, at the
   stand-in's clock.
7. Listings are paginated (``shell.basecamp.standin.pagination``), oldest first, showing what is
   visible by the stand-in's clock (``lag``); a read by id finds it regardless.
8. The feed, projects, inbox, live ticket and Launchpad are their own modules'; every comment and
   line kept appends its event to the feed.
9. ``mention`` is a person's comment mentioning the agent as Basecamp marks one up."""

from __future__ import annotations

import html
import json
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from typing import TypeVar

from shell.basecamp.standin.exchange import Incoming, JsonObject, Reply, error_reply, json_reply, text_reply
from shell.basecamp.standin.feed import Feed
from shell.basecamp.standin.launchpad import PATHS as LAUNCHPAD_PATHS
from shell.basecamp.standin.launchpad import Launchpad
from shell.basecamp.standin.pagination import page_headers, page_number, page_of
from shell.basecamp.standin.representation import Renderer
from shell.basecamp.standin.routes import COLLECTIONS, Endpoint, EndpointMatch, parse_route
from shell.basecamp.standin.store import Kind, Message, Store, accepts
from shell.basecamp.standin.urls import Urls
from shell.basecamp.standin.world import CAMPFIRE, CARD, Person, Recording, World

BOOST_MAX_LENGTH = 16
MENTION_TYPE = "application/vnd.basecamp.mention"

Item = TypeVar("Item")

KIND_OF: dict[Endpoint, Kind] = {
    Endpoint.comments: Kind.comment,
    Endpoint.comment: Kind.comment,
    Endpoint.boosts: Kind.boost,
    Endpoint.boost: Kind.boost,
    Endpoint.lines: Kind.chat_line,
    Endpoint.line: Kind.chat_line,
}

RECORDING_READS = frozenset({Endpoint.card, Endpoint.subscription, Endpoint.recording_events})

MISSING_USER_AGENT = (
    "Bad Request: a User-Agent header is required. Name your application and a way to "
    "reach you, e.g. `User-Agent: MyApp (me@example.com)`.\n"
)


def not_found() -> Reply:
    return error_reply(404, "Not Found")


class BasecampApi:
    """Answers Basecamp requests from the world and the store."""

    def __init__(
        self,
        world: World,
        store: Store,
        urls: Urls,
        now: Callable[[], datetime],
        page_sizes: Sequence[int],
        *,
        enforce_boost_length: bool = True,
        feed: Feed | None = None,
        launchpad: Launchpad | None = None,
    ) -> None:
        self._world = world
        self.launchpad = launchpad or Launchpad(
            world, urls.account_url, urls.account_url, now, urls.account_url.rsplit("/", 1)[0]
        )
        self.feed = feed or Feed(world, urls.account_url, now)
        self._store = store
        self._urls = urls
        self._now = now
        self._page_sizes = tuple(page_sizes)
        self._enforce_boost_length = enforce_boost_length
        self._render = Renderer(world, store, urls, now)
        self.mint_ticket: Callable[[Person], Reply] | None = None  # set by StandIn (rule 8)
        self.answer_inbox: Callable[[Incoming, Person], Reply] | None = None  # set by StandIn (rule 9a)

    def answer(self, request: Incoming, lag: float = 0.0) -> Reply:
        """The answer to ``request``; ``lag`` seconds hide what it creates from listings."""
        if not request.headers.get("user-agent", "").strip():
            return text_reply(400, MISSING_USER_AGENT)
        if request.path in LAUNCHPAD_PATHS:
            return self.launchpad.answer(request)
        person = self._authenticate(request.headers.get("authorization", ""))
        if person is None:
            challenge = (("WWW-Authenticate", 'Bearer realm="Basecamp"'),)
            return error_reply(401, "Unauthorized", challenge)
        route = parse_route(request.path, self._world.account_id)
        if route is None:
            return not_found()
        if request.method not in route.methods():
            allow = (("Allow", ", ".join(sorted(route.methods()))),)
            return error_reply(405, "Method Not Allowed", allow)
        if route.endpoint is Endpoint.stream_ticket:
            return self.mint_ticket(person) if self.mint_ticket else not_found()
        if request.method == "POST":
            return self._create(route, request, person, lag)
        return self._read(route, request, person)

    def seed(
        self,
        kind: Kind,
        recording_id: int,
        creator_id: int,
        content: str,
        created_at: datetime | None = None,
    ) -> Message:
        """Place a message directly, as if ``creator_id`` had posted it at ``created_at``
        (default: now). ValueError when the place, the person or the time is not one."""
        recording = self._store.recording(recording_id)
        if recording is None or not accepts(kind, recording):
            raise ValueError(f"no recording {recording_id} takes a {kind}")
        if self._world.person(creator_id) is None:
            raise ValueError(f"no person {creator_id} in the world")
        if created_at is not None and created_at.tzinfo is None:
            raise ValueError("a naive created_at has no zone; give a UTC time")
        message = self._store.post(kind, recording, creator_id, content, created_at=created_at or self._now())
        self.feed.record_message(message)
        return message

    def mention(self, creator_id: int, recording_id: int, text: str) -> tuple[Message, int]:
        """``creator_id`` comments on ``recording_id`` mentioning the agent, in Basecamp's markup
        (rule 9); the comment and its event's id. ValueError as ``seed``."""
        agent = self._world.agent
        mention = (
            f'<bc-attachment sgid="{html.escape(agent.sgid)}" content-type="{MENTION_TYPE}">'
            f"@{html.escape(agent.name.split()[0])}</bc-attachment>"
        )
        content = f"<div>{mention} {html.escape(text)}</div>"
        message = self.seed(Kind.comment, recording_id, creator_id, content)
        event = self.feed.event_about(message.id)
        assert event is not None  # seeding a comment records its event
        return message, event.id

    def person(self, person_id: int) -> Person | None:
        return self._world.person(person_id)

    @property
    def operator(self) -> Person:
        return self._world.operator

    def shown(self, kind: Kind, recording_id: int) -> list[JsonObject]:
        """Every message of ``kind`` kept on a recording, visible yet or not, as read alone."""
        return [self._render.message(message) for message in self._store.messages(kind, recording_id)]

    def _authenticate(self, authorization: str) -> Person | None:
        scheme, _, token = authorization.strip().partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            return None
        return self._world.person_with_token(token.strip()) or self.launchpad.person_for(token.strip())

    def _read(self, route: EndpointMatch, request: Incoming, person: Person) -> Reply:
        if route.endpoint is Endpoint.profile:
            return json_reply(200, self._render.person(person))
        if route.endpoint is Endpoint.events:
            return self.feed.answer(request, person)
        if route.endpoint is Endpoint.inbox:
            return self.answer_inbox(request, person) if self.answer_inbox else not_found()
        if route.endpoint is Endpoint.projects:
            visible = self.feed.visible_buckets(person)
            projects = [project for project in self._world.projects if project.id in visible]
            return json_reply(200, [{"id": project.id, "name": project.name} for project in projects])
        if route.endpoint is Endpoint.chats:
            campfires = [project.campfire for project in self._world.projects]
            return self._listing(request, campfires, self._render.campfire)
        if route.endpoint is Endpoint.chat:
            campfire = self._recording(route, route.ids[0])
            if campfire is None or campfire.type != CAMPFIRE:
                return not_found()
            return json_reply(200, self._render.campfire(campfire))
        if route.endpoint in RECORDING_READS:
            return self._read_recording(route, request, person)
        kind = KIND_OF[route.endpoint]
        if route.endpoint in COLLECTIONS:
            destination = self._destination(route, kind)
            if destination is None:
                return not_found()
            messages = self._store.messages(kind, destination.id, self._now())
            if kind is Kind.chat_line and request.query.get("direction") == "desc":
                messages.reverse()
            return self._listing(
                request, messages, lambda message: self._render.message(message, alone=False)
            )
        message = self._message(route, kind)
        if message is None:
            return not_found()
        return json_reply(200, self._render.message(message))

    def _read_recording(self, route: EndpointMatch, request: Incoming, person: Person) -> Reply:
        """A card, a recording's subscription, a recording's events (admission's reads)."""
        recording = self._recording(route, route.ids[0])
        if recording is None:
            return not_found()
        if route.endpoint is Endpoint.card:
            if recording.type != CARD:
                return not_found()
            return json_reply(200, self._render.card(recording))
        if route.endpoint is Endpoint.subscription:
            if recording.type == CAMPFIRE:
                return not_found()
            return json_reply(200, self._render.subscription(recording, person))
        events = [event for event in self.feed.events() if event.recording_id == recording.id]
        events.reverse()  # newest first, as Basecamp lists a recording's events
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
            message = f"Content is too long (maximum is {BOOST_MAX_LENGTH} characters)"
            return error_reply(422, message)
        rich_text = kind is Kind.chat_line and body.get("content_type") == "text/html"
        now = self._now()
        created = self._store.post(
            kind,
            destination,
            person.id,
            content,
            created_at=now,
            visible_at=now + timedelta(seconds=lag),
            rich_text=rich_text,
        )
        self.feed.record_message(created)
        shown = self._render.message(created)
        location = (
            self._urls.boost(created.bucket_id, created.id) if kind is Kind.boost else str(shown["app_url"])
        )
        return json_reply(201, shown, (("Location", location),))

    def _listing(self, request: Incoming, items: Sequence[Item], show: Callable[[Item], JsonObject]) -> Reply:
        page = page_of(items, page_number(request.query), self._page_sizes)
        headers = page_headers(page, self._urls.origin, request.path, request.query)
        return json_reply(200, [show(item) for item in page.items], headers)

    def _recording(self, route: EndpointMatch, recording_id: int) -> Recording | None:
        """The recording, if it exists in the bucket a legacy path names (rule 4)."""
        recording = self._store.recording(recording_id)
        if recording is None or route.bucket_id not in (None, recording.bucket_id):
            return None
        return recording

    def _destination(self, route: EndpointMatch, kind: Kind) -> Recording | None:
        recording = self._recording(route, route.ids[0])
        return recording if recording is not None and accepts(kind, recording) else None

    def _message(self, route: EndpointMatch, kind: Kind) -> Message | None:
        message = self._store.message(kind, route.ids[-1])
        if message is None or route.bucket_id not in (None, message.bucket_id):
            return None
        if kind is Kind.chat_line and message.recording_id != route.ids[0]:
            return None
        return message
