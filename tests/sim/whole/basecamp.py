"""The simulated Basecamp: one in-process account behind the connector's three seams.

Rules:
1. It answers exactly the protocols the connector's parts are built on, and nothing else: the
   feed (``shell.intake.poll_lane.FeedReader.poll_events``), admission's reads
   (``shell.admission.SummaryReader``) and the outbox's ``Poster`` (post, list, probe,
   ``rate_limited_for``). No sockets, no threads, no sleeps: a slow answer advances the
   simulated clock, and every choice is drawn from the run's one ``random.Random``.
2. It keeps ground truth the connector cannot see: every message stored (with who made it:
   which outbox request, or which worker), and every request attributed to the intent whose
   claim it follows (``Attribution``, supplied by the run). Checks judge the ledger against it.
3. Faults are scripted one request at a time (``next_posts``, ``next_listings``, ``feed_down``,
   ``reads``): a create lands, is refused, is lost before or after landing, is rate limited
   (429), cannot connect, or -- while it is in flight -- a person signed in as the agent posts
   the same words, then it lands and its answer is lost (the listing then holds two messages
   with the intent's words: adoption must take neither), or lands lagging (listed only after
   ``LAGGING``: reconciliation's first look finds nothing, a later listing finds it). The copy is made only where no other
   intent has those words at that destination (``Attribution.alone``), a second before the
   create lands: no other intent's listing could tell it from its own message either, and
   adopting it there would be the design's known limit, not a bug. A landed message may be visible only
   after a lag; a listing fails,
   hangs to its bound, or is cut short (the client's exhaustive-or-error rule makes a short
   listing an error); the feed fails; a summary read fails or is throttled.
4. A crash armed here (``crash_at``) raises ``Crash`` at that point of a request: before the
   create reaches Basecamp, after it landed (the answer dies with the process), during a
   listing, or during a summary read.
5. The feed and the cable: ``epoch_after_id`` is the feed's epoch -- a request
   from a position before it is answered 410 (``EpochPassed``): the events between were
   expired and may never be served. The feed serves an event only ``SAFETY_DELAY`` after it was
   made; the cable at once. ``feed_blips`` fails that many next feed requests (a 5xx),
   whoever makes them (the poll lane or the repair's walk). The cable (``hear``) pushes every
   mention made since it last pushed; with ``overflow`` armed it drops them instead and says so
   (Action Cable's overflow frame). ``projects`` answers the agent's projects (membership).
6. A recording a person put in the trash (``trashed``) refuses every create at it, whatever was
   scripted, until that person restores it (``tests.sim.whole.person``).
7. Every trigger of the matrix reaches the feed (``Kind``): a mention (a comment or a chat line),
   a comment on a card the agent is subscribed to, an assignment of the agent by the operator,
   a completed to-do the agent is assigned to; the summary read answers each as Basecamp would.
8. A 429 carries a ``Retry-After`` drawn from ``RETRY_AFTERS`` (below, at and above the first
   backoff); a slow create answers no later than the caller's deadline (the real client's bound:
   past it the answer is lost, landed or not); an outage (``listings_down_until``) fails every
   listing until it ends, long enough to make reconciliation give up at ten, and every create
   meanwhile times out, landed or not.
9. Every listing answered is kept for the step's checks (``listed``: destination, when, what).
10. A token outage (``token_refused_until``) answers every request 401 until the token works
    again, as the real client shows it after its one refresh: a create is ``Refused(answered,
    401)``, the feed, the inbox and the probe raise ``AuthenticationFailed``, a listing or the
    projects fail (``ListingFailed``), a summary read is ``unauthorized``. Each stretch is kept
    (``token_outages``, wall times) for the checks; ``after_token_outage`` is the first create's
    answer once it ends (a day's backlog flushed at once: a 429, or a connection refused).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from enum import StrEnum
from typing import TYPE_CHECKING

from core.admission import (
    CHAT_LINE_CREATED,
    COMMENT_CREATED,
    Author,
    ReadFailure,
    ReadFailureKind,
    RecordingStatus,
    RecordingSummary,
)
from core.destinations import Destination, ListedMessage
from core.feed import (
    Delivered,
    EpochPassed,
    FeedEvent,
    FeedFilters,
    FeedPage,
    InboxPage,
    NotForPrincipal,
    Overflow,
)
from core.posting import Created, PostOutcome, RefusalCause, Refused, Uncertain, UncertainCause
from core.text import message_text
from core.timestamps import format_timestamp
from shell.basecamp.errors import (
    AuthenticationFailed,
    BasecampError,
    FeedRefused,
    InboxRefused,
    ListingFailed,
)
from shell.clock import FakeClock

if TYPE_CHECKING:
    from tests.sim.whole.inbox import SimInbox

AGENT_ID = 4_242
OPERATOR_ID = 26_909_558
ROUTED = 2_085_958_504
UNROUTED = 2_085_958_999
CAMPFIRE = 1_069_478_985
PAGE_SIZE = 3
SAFETY_DELAY = timedelta(seconds=30)  # the feed serves an event once it is this old (API.md)


class Crash(BaseException):
    """The connector process died here (SIGKILL): nothing after this line of it runs."""


class Post(StrEnum):
    land = "land"
    refuse = "refuse"
    lost_after_landing = "lost_after_landing"
    lost_before_landing = "lost_before_landing"
    not_connected = "not_connected"
    rate_limited = "rate_limited"
    copied_then_lost = "copied_then_lost"  # rule 3: a person's copy first, then lost after landing
    lost_lagging = "lost_lagging"  # lost after landing, and listed only after LAGGING: reconciliation misses it


class Kind(StrEnum):
    """Rule 7: what a feed event is, as the world made it (the connector sees only the feed)."""

    mention = "mention"
    subscribed = "subscribed"
    assigned = "assigned"
    completed = "completed"


REQUESTS = frozenset({Kind.mention, Kind.assigned})  # the triggers that ask for something
RETRY_AFTERS = (5.0, 30.0, 120.0, 900.0)  # rule 8: a 429's Retry-After, seconds
LAGGING = 300.0  # how long a lagging create stays out of listings: past reconciliation's first look


class Listing(StrEnum):
    answer = "answer"
    fail = "fail"
    hang = "hang"  # answers nothing until the caller's bound passes
    cut_short = "cut_short"  # a page missing: the client's exhaustive rule makes it an error


@dataclass(frozen=True, slots=True)
class Message:
    id: int
    destination: Destination
    text: str
    created_at: datetime
    visible_at: datetime
    creator_id: int
    made_by: str  # "intent:<id>", "worker:<attempt>" or "person"


@dataclass(frozen=True, slots=True)
class Listed:
    """Rule 9: one listing answered: where, from when, at what time, and the messages it held."""

    destination: Destination
    since: datetime
    at: datetime
    messages: tuple[ListedMessage, ...]


@dataclass(frozen=True, slots=True)
class Mention:
    """One feed event (rule 7): a person mentions the agent on a recording (a comment or a chat
    line), comments on a card it is subscribed to, assigns it a to-do, or completes one."""

    event_id: int
    bucket_id: int
    recording_id: int
    chat: bool
    created_at: str
    at: datetime
    kind: Kind = Kind.mention

    @property
    def event_type(self) -> str:
        match self.kind:
            case Kind.assigned:
                return ASSIGNMENT_CHANGED
            case Kind.completed:
                return TODO_COMPLETED
            case _:
                return CHAT_LINE_CREATED if self.chat else COMMENT_CREATED


ASSIGNMENT_CHANGED = "todo.assignment_changed"
TODO_COMPLETED = "todo.completed"


def _event(mention: Mention) -> FeedEvent:
    kind, _, action = mention.event_type.partition(".")
    return FeedEvent(
        id=mention.event_id,
        kind="chat_line" if mention.chat else kind,
        action=action.replace("line.", ""),
        event_type=mention.event_type,
        bucket_id=mention.bucket_id,
        creator_id=OPERATOR_ID,
        performed_by_id=None,
        recording_id=mention.recording_id,
        created_at=mention.created_at,
        details=None,
    )


class Attribution:
    """What the run tells Basecamp about the connector's requests (rule 2)."""

    def request_starts(self, destination: Destination, body: str) -> int:  # the intent's id
        raise NotImplementedError

    def request_ended(self, intent_id: int, outcome: PostOutcome | None) -> None:
        raise NotImplementedError

    def alone(self, intent_id: int, destination: Destination, body: str) -> bool:
        """No other intent has ``body``'s words at ``destination``."""
        raise NotImplementedError


@dataclass
class SimBasecamp:
    clock: FakeClock
    rng: random.Random
    attribution: Attribution
    messages: list[Message] = field(default_factory=list)
    feed: list[Mention] = field(default_factory=list)
    next_posts: list[Post] = field(default_factory=list)
    next_listings: list[Listing] = field(default_factory=list)
    lag_seconds: float = 0.0
    slow_post_seconds: float = 0.0
    feed_down: bool = False
    reads: list[str] = field(default_factory=list)  # "fail" | "throttled", one per summary read
    crash_at: str | None = None  # before_landing | after_landing | during_listing | during_read
    held_until: float = 0.0
    trashed: set[int] = field(default_factory=set)  # recordings that refuse every create (rule 6)
    on_fault: Callable[[str], None] = field(default=lambda name: None)
    epoch_after_id: int = 0
    feed_blips: int = 0
    overflow: bool = False
    cable_after: int = 0  # the last mention the cable pushed (or dropped)
    by_maker: dict[str, list[int]] = field(default_factory=dict)
    texts: dict[int, str] = field(default_factory=dict)
    inbox: SimInbox | None = None  # the agent's inbox (tests.sim.whole.inbox); None: a 403
    listings_down_until: float = 0.0  # rule 8: every listing fails until then (monotonic)
    listed: list[Listed] = field(default_factory=list)  # rule 9: the listings since the last check
    token_refused_until: float = 0.0  # rule 10: every request answered 401 until then (monotonic)
    token_outages: list[tuple[datetime, datetime]] = field(default_factory=list)  # rule 10: (from, to)
    after_token_outage: Post | None = None  # rule 10: the first create's answer once the token works
    _next_id: int = 1_069_479_000

    # -- ground truth -------------------------------------------------------------------------

    def store(self, destination: Destination, text: str, made_by: str, creator_id: int = AGENT_ID,
              lag: float | None = None) -> int:
        self._next_id += 1
        now = self.clock.now()
        self.by_maker.setdefault(made_by, []).append(self._next_id)
        self.texts[self._next_id] = message_text(text)
        self.messages.append(
            Message(self._next_id, destination, message_text(text), now,
                    now + timedelta(seconds=self.lag_seconds if lag is None else lag), creator_id, made_by)
        )
        return self._next_id

    def token_refused(self) -> bool:
        """Rule 10: whether Basecamp refuses the token now."""
        return self.clock.monotonic() < self.token_refused_until

    def refuse_token(self, seconds: float, after: Post | None) -> None:
        """Rule 10: a token outage from now for ``seconds`` (one already running is extended)."""
        now = self.clock.now()
        if self.token_refused():
            start, _ = self.token_outages.pop()
            seconds = max(seconds, self.token_refused_until - self.clock.monotonic())
        else:
            start = now
        self.token_refused_until = self.clock.monotonic() + seconds
        self.token_outages.append((start, now + timedelta(seconds=seconds)))
        self.after_token_outage = after

    def _refused_401(self, what: str) -> None:
        if self.token_refused():
            self.on_fault(f"token outage: {what} answered 401")
            raise AuthenticationFailed("Basecamp refused the token (401)")

    # -- the feed -------------------------------------------------------------------------------

    def poll_events(
        self,
        since: int | None,
        position: str | None,
        filters: FeedFilters,
        deadline: float,
        *,
        next_url: str | None = None,
    ) -> FeedPage:
        self._refused_401("the feed")
        if self.feed_down or self.feed_blips:
            self.feed_blips = max(0, self.feed_blips - 1)
            self.on_fault("feed failed")
            raise BasecampError("the feed is down")
        after = int(next_url or position or since or 0)
        if after < self.epoch_after_id:
            self.on_fault("feed 410: the epoch passed")
            raise FeedRefused(EpochPassed(self.epoch_after_id))
        served = self.clock.now() - SAFETY_DELAY
        ready = [mention for mention in self.feed if mention.event_id > after and mention.at <= served]
        page, more = ready[:PAGE_SIZE], len(ready) > PAGE_SIZE
        events = tuple(_event(mention) for mention in page)
        last = str(page[-1].event_id if page else after)
        return FeedPage(events, last, last if more else None)

    def poll_inbox(self, since: int | None, position: str | None, deadline: float, *,
                   next_url: str | None = None) -> InboxPage:
        """No inbox here (a principal that is not an agent), unless ``inbox`` is set."""
        self._refused_401("the inbox")
        if self.inbox is None:
            raise InboxRefused(NotForPrincipal())
        return self.inbox.poll_inbox(since, position, deadline, next_url=next_url)

    def addressed(self) -> list[Mention]:
        """Every mention made: the feed's, and those Basecamp braked (in the inbox alone)."""
        return [*self.feed, *(self.inbox.braked if self.inbox is not None else ())]

    def hear(self) -> Delivered | Overflow | None:
        """The cable's next frame (rule 5): the mentions made since the last, or their overflow."""
        fresh = [mention for mention in self.feed if mention.event_id > self.cable_after]
        if not fresh:
            return None
        after, self.cable_after = self.cable_after, fresh[-1].event_id
        if self.overflow:
            self.overflow = False
            return Overflow(after)
        return Delivered(tuple(_event(mention) for mention in fresh))

    def projects(self, deadline: float) -> frozenset[int]:
        if self.token_refused():
            raise ListingFailed("projects.json answered HTTP 401")
        return frozenset({ROUTED, UNROUTED})

    def mention(self, event_id: int, bucket_id: int, recording_id: int, chat: bool, kind: Kind = Kind.mention) -> None:
        now = self.clock.now()
        self.feed.append(Mention(event_id, bucket_id, recording_id, chat, format_timestamp(now), now, kind))

    def kind_of(self, event_id: int) -> Kind | None:
        return next((mention.kind for mention in self.feed if mention.event_id == event_id), None)

    # -- admission's reads ----------------------------------------------------------------------

    def deadline_in(self, seconds: float) -> float:
        return self.clock.monotonic() + seconds

    def summary(
        self, bucket_id: int, recording_id: int, event_type: str, deadline: float, *, event_id: int | None = None
    ) -> RecordingSummary | ReadFailure:
        if self.crash_at == "during_read":
            self.crash_at = None
            raise Crash("during admission's read")
        if self.token_refused():
            self.on_fault("token outage: a summary read answered 401")
            return ReadFailure(ReadFailureKind.unauthorized)
        fault = self.reads.pop(0) if self.reads else ""
        if fault == "fail":
            self.on_fault("read failed")
            return ReadFailure(ReadFailureKind.failed)
        if fault == "throttled":
            self.on_fault("read throttled (429)")
            return ReadFailure(ReadFailureKind.throttled, self.clock.now() + timedelta(seconds=60))
        chat = event_type == CHAT_LINE_CREATED
        kind = self.kind_of(event_id) if event_id is not None else Kind.mention
        comment = event_type == COMMENT_CREATED
        agent = frozenset({AGENT_ID})
        return RecordingSummary(
            status=RecordingStatus.active,
            type="Chat::Lines::Text" if chat else "Comment" if comment else "Todo",
            creator=Author(OPERATOR_ID, "User"),
            parent_id=CAMPFIRE if chat else recording_id + 1,
            parent_type="Chat::Transcript" if chat else "Kanban::Card" if comment else "Todolist",
            campfire_id=CAMPFIRE if chat else None,
            mentioned_person_ids=agent if kind is Kind.mention else frozenset(),
            assignee_ids=agent if kind in (Kind.assigned, Kind.completed) else frozenset(),
            added_person_ids=agent if kind is Kind.assigned else frozenset(),
            subscribed=kind is Kind.subscribed,
            app_url=f"https://3.basecamp.com/999/buckets/{bucket_id}/recordings/{recording_id}",
            title="A card",
            content=f"<div>please look at {recording_id}</div>",
            updated_at=format_timestamp(self.clock.now()),
        )

    # -- the outbox's Poster --------------------------------------------------------------------

    def post(self, destination: Destination, body: str, deadline: float | None = None) -> PostOutcome:
        intent_id = self.attribution.request_starts(destination, body)
        outcome: PostOutcome | None = None
        try:
            if self.token_refused():  # rule 10: refused before anything is done
                self.on_fault("token outage: a create answered 401")
                outcome = Refused(RefusalCause.answered, 401, "Basecamp refused the token (401)")
                return outcome
            if self.after_token_outage is not None:  # rule 10: the first create once it works again
                self.next_posts.insert(0, self.after_token_outage)
                self.after_token_outage = None
                self.on_fault("token outage: the first create after it met a blip")
            slow, self.slow_post_seconds = self.slow_post_seconds, 0.0
            if deadline is not None and slow > deadline - self.clock.monotonic():  # rule 8: the client's bound
                self.clock.advance(max(0.0, deadline - self.clock.monotonic()))
                if self.rng.random() < 0.5:
                    self.store(destination, body, f"intent:{intent_id}")
                self.on_fault("post answered nothing by its deadline")
                outcome = Uncertain(UncertainCause.timeout, None, "no answer by the deadline")
                return outcome
            self.clock.advance(slow)
            if self.crash_at == "before_landing":
                self.crash_at = None
                raise Crash("after the claim, before the request reached Basecamp")
            if self.crash_at == "after_landing":
                self.crash_at = None
                self.store(destination, body, f"intent:{intent_id}")
                raise Crash("after the message was stored, before its receipt was recorded")
            behaviour = self.next_posts.pop(0) if self.next_posts else Post.land
            if self.clock.monotonic() < self.listings_down_until:  # rule 8: creates time out, landed or not
                behaviour = self.rng.choice([Post.lost_after_landing, Post.lost_before_landing])
            elif self.lag_seconds >= LAGGING and behaviour is Post.land and self.rng.random() < 0.5:
                behaviour = Post.lost_lagging  # so slow to list that its answers time out too
            if destination.recording_id in self.trashed:
                behaviour = Post.refuse  # rule 6: refused for as long as it is in the trash
            self.on_fault(f"post {behaviour}")
            match behaviour:
                case Post.land:
                    outcome = Created(self.store(destination, body, f"intent:{intent_id}"))
                case Post.lost_lagging:
                    self.store(destination, body, f"intent:{intent_id}", lag=LAGGING)
                    outcome = Uncertain(UncertainCause.connection_lost, None, "lost after landing")
                case Post.lost_after_landing:
                    self.store(destination, body, f"intent:{intent_id}")
                    outcome = Uncertain(UncertainCause.connection_lost, None, "lost after landing")
                case Post.copied_then_lost:
                    if self.attribution.alone(intent_id, destination, body):
                        self.store(destination, body, "person")  # the agent's account, the same words
                        self.clock.advance(1)  # a claim after this answer lists from later on
                    self.store(destination, body, f"intent:{intent_id}")
                    outcome = Uncertain(UncertainCause.connection_lost, None, "lost after landing")
                case Post.lost_before_landing:
                    outcome = Uncertain(UncertainCause.timeout, None, "lost before landing")
                case Post.refuse:
                    outcome = Refused(RefusalCause.answered, 422, "refused")
                case Post.not_connected:
                    outcome = Refused(RefusalCause.not_connected, None, "could not connect")
                case Post.rate_limited:
                    retry_after = self.rng.choice(RETRY_AFTERS)
                    self.held_until = self.clock.monotonic() + retry_after
                    outcome = Refused(RefusalCause.answered, 429, "rate limited", retry_after)
            return outcome
        finally:
            self.attribution.request_ended(intent_id, outcome)

    def list(
        self, destination: Destination, since: datetime, creator_id: int, deadline: float
    ) -> list[ListedMessage]:
        if self.crash_at == "during_listing":
            self.crash_at = None
            raise Crash("during a listing")
        if self.token_refused():  # rule 10: the real client's listing answered 401
            self.on_fault("token outage: a listing answered 401")
            raise ListingFailed(f"listing {destination.describe()} answered HTTP 401")
        behaviour = self.next_listings.pop(0) if self.next_listings else Listing.answer
        if self.clock.monotonic() < self.listings_down_until:
            behaviour = Listing.fail  # rule 8: the outage
        if behaviour is not Listing.answer:
            self.on_fault(f"listing {behaviour}")
        if behaviour is Listing.fail:
            raise ListingFailed("the listing failed")
        if behaviour is Listing.hang:
            self.clock.advance(max(0.0, deadline - self.clock.monotonic()))
            raise ListingFailed("the listing ran out of time")
        if behaviour is Listing.cut_short:
            raise ListingFailed("a page of the listing was missing")
        now = self.clock.now()
        listed = [
            ListedMessage(message.id, message.created_at, message.creator_id, message.text)
            for message in self.messages
            if message.destination == destination and message.visible_at <= now
            and message.creator_id == creator_id and message.created_at >= since
        ]
        self.listed.append(Listed(destination, since, now, tuple(listed)))
        return listed

    def rate_limited_for(self) -> float:
        return max(0.0, self.held_until - self.clock.monotonic())

    def probe(self, deadline: float) -> None:
        self._refused_401("the probe")
        if (self.next_listings and self.next_listings[0] is Listing.fail) or self.clock.monotonic() < self.listings_down_until:
            raise ListingFailed("unreachable")
