"""A local Basecamp on 127.0.0.1 (``StandIn``), for the demo and the tests.

Rules:
1. It is faithful, not kind: it checks and answers what Basecamp does
   (``shell.basecamp.standin.api``), so a client bug shows here first.
2. The port is bound when the ``StandIn`` is made; serving starts with ``start()`` or ``with``;
   ``stop()`` closes every connection and waits for the handlers.
3. Its clock (default real time) stamps what is created, listed and requested; a fault's waits
   are real seconds.
4. Faults, the request record and seeding are methods here, and the same over HTTP under
   ``/__standin/`` (``shell.basecamp.standin.control``).
5. The feed, the live lane, Launchpad's OAuth and the inbox are their own modules (``feed``,
   ``live_stream``, ``launchpad``, ``inbox``), shaped by this class's arguments.
6. Basecamp's rate limit is on by default (``rate_limit``; ``RateLimit.off()``), changeable while
   serving.
7. The live lane's WebSocket is served on a second port (``live.port``).
8. Launchpad's tokens expire after ``launchpad.token_lifetime`` seconds.
9. ``brake_next`` brakes the next events: absent from the feed and live lane, present in the inbox.
10. ``control_secret`` (random unless given) is what a control request carries in
   ``X-Standin-Secret``, and Launchpad's client secret: on a shared machine only whoever read
   the stand-in's first line drives it."""

from __future__ import annotations

import secrets
import threading
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from types import TracebackType
from typing import Any

from shell.basecamp.standin.api import BasecampApi
from shell.basecamp.standin.control import Control
from shell.basecamp.standin.faults import Fault, FaultBook
from shell.basecamp.standin.feed import DEFAULT_FEED_PAGE_SIZE, Feed, StandinFeedEvent
from shell.basecamp.standin.handler import HttpServer
from shell.basecamp.standin.inbox import Inbox
from shell.basecamp.standin.launchpad import Launchpad
from shell.basecamp.standin.live_faults import LiveFault
from shell.basecamp.standin.live_stream import DEFAULT_PING_INTERVAL, DEFAULT_TICKET_TTL, LiveStream
from shell.basecamp.standin.pagination import BASECAMP_PAGE_SIZES
from shell.basecamp.standin.ratelimit import Limiter, RateLimit
from shell.basecamp.standin.recorder import RecordedRequest, RequestLog
from shell.basecamp.standin.store import Kind, Store
from shell.basecamp.standin.urls import Urls
from shell.basecamp.standin.world import CARD, Person, Recording, World, build_world


def _utc_now() -> datetime:
    return datetime.now(UTC)


class StandIn:
    """A running (once started) Basecamp stand-in. See the module's docstring."""

    def __init__(
        self,
        world: str = "demo",
        *,
        port: int = 0,
        page_sizes: Sequence[int] = BASECAMP_PAGE_SIZES,
        clock: Callable[[], datetime] | None = None,
        enforce_boost_length: bool = True,
        keepalive_timeout: float = 5.0,
        feed_page_size: int = DEFAULT_FEED_PAGE_SIZE,
        feed_delay: float = 0.0,
        rate_limit: RateLimit | None = None,
        ticket_ttl: int = DEFAULT_TICKET_TTL,
        ping_interval: float = DEFAULT_PING_INTERVAL,
        make_token: Callable[[], str] | None = None,
        control_secret: str | None = None,
        account_id: int | None = None,
    ) -> None:
        if not page_sizes or any(size < 1 for size in page_sizes):
            raise ValueError(f"page sizes must be positive, not {tuple(page_sizes)}")
        # make_token: a restart keeps its tokens; account_id: a world with an account id of its own
        self.world: World = build_world(world, make_token, account_id)
        now = clock or _utc_now
        self._now = now
        self._faults = FaultBook()
        self._log = RequestLog()
        self.limiter = Limiter(RateLimit() if rate_limit is None else rate_limit)
        self._http = HttpServer(
            port,
            faults=self._faults,
            limiter=self.limiter,
            log=self._log,
            now=now,
            keepalive_timeout=keepalive_timeout,
        )
        self.base_url = self._http.origin
        self.account_url = f"{self.base_url}/{self.world.account_id}"
        self.feed = Feed(self.world, self.account_url, now, page_size=feed_page_size, delay=feed_delay)
        self._store = Store(self.world)
        self._api = BasecampApi(
            self.world,
            self._store,
            Urls(self.base_url, self.world.account_id),
            now,
            page_sizes,
            enforce_boost_length=enforce_boost_length,
            feed=self.feed,
        )
        self.live = LiveStream(self.world, self.feed, now, ticket_ttl=ticket_ttl, ping_interval=ping_interval)
        self._api.mint_ticket = self.live.tickets.mint
        self.inbox = Inbox(self.world, self.feed, self._store, self.account_url, now)
        self._api.answer_inbox = self.inbox.answer
        self._http.api = self._api
        self._http.control = Control(self._api, self._faults, self._log, self.limiter, self.live)
        self.control_secret = control_secret or secrets.token_urlsafe(24)  # rule 10; a restart may keep it
        self._http.control_secret = self.control_secret
        self._api.launchpad.client_secret = self.control_secret
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return int(self._http.server_address[1])

    def start(self) -> StandIn:
        if self._thread is None:
            self._thread = threading.Thread(target=self._http.serve, name=f"standin:{self.port}", daemon=True)
            self._thread.start()
            self.live.start()
        return self

    def stop(self) -> None:
        """Stop serving, close every connection, wait for the handlers; the ports are freed."""
        self.live.stop()
        self._http.stop()
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        self._http.server_close()

    def __enter__(self) -> StandIn:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()

    @property
    def launchpad(self) -> Launchpad:
        """Launchpad's OAuth endpoints on this stand-in (``shell.basecamp.standin.launchpad``)."""
        return self._api.launchpad

    def add_fault(self, fault: Fault) -> None:
        """Script a fault; faults are taken in the order added, the first match wins."""
        self._faults.add(fault)

    def clear_faults(self) -> None:
        self._faults.clear()
        self.live.faults.clear()

    def add_live_fault(self, fault: LiveFault) -> None:
        """Script a fault of the live lane (``shell.basecamp.standin.live_faults``)."""
        self.live.faults.add(fault)

    def set_rate_limit(self, limit: RateLimit) -> None:
        """Enforce ``limit`` from now on (rule 6)."""
        self.limiter.set_limit(limit)

    def requests(self) -> list[RecordedRequest]:
        """Every Basecamp request that reached the stand-in, in arrival order."""
        return self._log.requests()

    def post_count(self, path_contains: str | None = None) -> int:
        """POSTs that reached the stand-in (whatever their fate), whose path contains
        ``path_contains`` when it is given."""
        return self._log.count("POST", path_contains)

    def messages(self, kind: str, recording_id: int) -> list[dict[str, Any]]:
        """Every message of ``kind`` (comment, boost, chat_line) kept on a recording (the
        Campfire for lines), oldest first, visible in listings yet or not, as read alone."""
        return self._api.shown(Kind(kind), recording_id)

    def seed_message(
        self,
        kind: str,
        recording_id: int,
        creator_id: int,
        content: str,
        created_at: datetime | None = None,
    ) -> int:
        """Place a message directly (someone else's, or an old one); its id."""
        return self._api.seed(Kind(kind), recording_id, creator_id, content, created_at).id

    # -- the event feed (rule 5) -------------------------------------------------------------

    def mention(self, person: Person | int, recording_id: int, text: str) -> int:
        """``person`` comments on ``recording_id``, mentioning the agent; the event's id."""
        person_id = person if isinstance(person, int) else person.id
        return self._api.mention(person_id, recording_id, text)[1]

    def assign(self, person: Person | int, card_id: int, assignee_id: int) -> int:
        """``person`` adds ``assignee_id`` to the card's assignees; the event's id."""
        person_id = person if isinstance(person, int) else person.id
        card = next((found for found in self.world.recordings() if found.id == card_id), None)
        if card is None or card.type != CARD:
            raise ValueError(f"no card {card_id} in the world")
        if self.world.person(person_id) is None or self.world.person(assignee_id) is None:
            raise ValueError("the assigner and the assignee are people of the world")
        return self._assignment_changed(card, person_id, added={assignee_id}, removed=set())

    def subscribe(self, person: Person | int, recording_id: int) -> None:
        """``person`` subscribes to ``recording_id`` (``recordings/{id}/subscription.json``)."""
        person_id = person if isinstance(person, int) else person.id
        if self._store.recording(recording_id) is None or self.world.person(person_id) is None:
            raise ValueError("a subscription joins a person and a recording of the world")
        self._store.subscribe(person_id, recording_id)

    def unassign(self, person: Person | int, card_id: int, assignee_id: int) -> int:
        """``person`` removes ``assignee_id`` from the card's assignees; the event's id."""
        person_id = person if isinstance(person, int) else person.id
        card = self._store.recording(card_id)
        if card is None or card.type != CARD:
            raise ValueError(f"no card {card_id} in the world")
        return self._assignment_changed(card, person_id, added=set(), removed={assignee_id})

    def _assignment_changed(
        self, card: Recording, person_id: int, *, added: set[int], removed: set[int]
    ) -> int:
        """The ``card.assignment_changed`` event ``person_id`` made, and the card's new assignees."""
        event = self.feed.record(
            "card.assignment_changed",
            bucket_id=card.bucket_id,
            creator_id=person_id,
            recording_id=card.id,
            created_at=self._now(),
            details={"added_person_ids": sorted(added), "removed_person_ids": sorted(removed)},
        )
        self._store.assign(card.id, added, removed)
        return event.id

    def withhold_project(self, project_id: int) -> None:
        """The agent is no member of ``project_id`` until ``grant_project`` (feed rule 8)."""
        self.feed.withhold(project_id)

    def grant_project(self, project_id: int) -> None:
        self.feed.grant(project_id)

    def begin_epoch(self, epoch_after_id: int | None = None) -> int:
        """Every position minted so far answers 410 with ``epoch_after_id`` (default: the
        newest event's id); returns it."""
        return self.feed.begin_epoch(epoch_after_id)

    def brake_next(self, count: int = 1) -> None:
        """Basecamp's brakes: the next ``count`` events are absent from the feed and the live
        lane, and still in the inbox (rule 9)."""
        self.feed.brake_next(count)

    def feed_events(self) -> list[StandinFeedEvent]:
        return self.feed.events()
