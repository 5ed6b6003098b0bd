"""The Basecamp HTTP client: it decides what is asked, when and how often; ``shell.basecamp.wire``
makes each request once, and a failed read raises one of ``shell.basecamp.errors``.

A create (``post``) is exactly one request on a connection of its own, never retried or redirected,
so a failure falls on a known side of the line (``core.posting``: ``Refused`` or ``Uncertain``); its
one second try is after a 401, refused before anything was done, when the token source has a fresher
token. Reads retry per ``core.pacing``, never past the caller's deadline. A listing is exhaustive or
raises: absence from a short listing would read as "never posted". A URL Basecamp hands back is
followed only when unambiguous and on the configured origin, and only its path and query are sent,
over that origin's connection, so the token never travels to another host. The token, a feed
position, its query and a ``next`` URL are credentials: none is ever in a log, an exception or a
repr. Every request waits its turn in the client's one ``Pacer``, shared by every thread: a turn is
claimed atomically, a 429 holds every later request until its Retry-After, and a feed poll first
yields to a backlog, within a bound and half of what is left to its deadline. A stream ticket past its
share of the budget is not asked."""

from __future__ import annotations

import json
import logging
import random
import threading
from collections import deque
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypeVar
from urllib.parse import urlencode

from returns.result import Failure, Result

from core.destinations import Destination, ListedMessage, MessageKind
from core.feed import (
    ASKED_REASONS,
    FEED_REFUSALS,
    INBOX_REFUSALS,
    FeedFilters,
    FeedPage,
    InboxPage,
    PageRejected,
    StreamTicket,
    read_inbox_page,
    read_inbox_refusal,
    read_page,
    read_refusal,
    read_ticket,
)
from core.links import next_link, request_target, same_origin, transport_allowed
from core.metrics import ProcessFigures
from core.pacing import (
    DEFAULT_LIMIT,
    DEFAULT_WINDOW_SECONDS,
    POLL_YIELD_BOUND,
    Final,
    RetryAfter,
    after_read,
    lasting,
    parse_retry_after,
    poll_may_go,
    spacing_wait,
    ticket_allowance,
    ticket_wait,
    wait_before_next,
    what_to_fix,
)
from core.posting import PostOutcome, RefusalCause, Refused, classify_answer
from core.text import message_text, printable
from core.timestamps import parse_timestamp
from shell.basecamp.errors import (
    AuthenticationFailed,
    BasecampError,
    FeedFailed,
    FeedRefused,
    InboxRefused,
    LastingRefusal,
    ListingFailed,
    Unlistable,
)
from shell.basecamp.tokens import StaticToken, Tokens
from shell.basecamp.wire import Answer, Halt, Wire
from shell.clock import Clock, SystemClock
from shell.errors import EXIT_CONFIG, EXIT_UNAVAILABLE, UserError

log = logging.getLogger("connector.basecamp")

MAX_PAGES = 200
DEFAULT_POST_TIMEOUT = 60.0
DEFAULT_READ_TIMEOUT = 30.0
POLL_RECHECK_SECONDS = 0.25
IDENTITY_CHECK_SECONDS = 20.0

Page = TypeVar("Page")


@dataclass(frozen=True, slots=True)
class Profile:
    id: int
    name: str
    attachable_sgid: str


class Pacer:
    """Thread-safe bookkeeping for ``core.pacing``; waits are on the client's clock."""

    def __init__(self, clock: Clock, limit: int, window: float, halt: Halt | None = None) -> None:
        self._clock = clock
        self._halt = halt or Halt(clock)
        self._limit = limit
        self._window = window
        self._sent: deque[float] = deque()
        self._tickets: deque[float] = deque()
        self._held_until = 0.0
        self._lock = threading.Lock()

    def _recent(self, now: float) -> list[float]:
        while self._sent and self._sent[0] <= now - self._window:
            self._sent.popleft()
        return list(self._sent)

    def _wait(self, now: float) -> float:
        recent = self._recent(now)  # the caller holds the lock
        return max(wait_before_next(recent, now, self._held_until, self._limit, self._window),
                   spacing_wait(recent, now, self._limit, self._window))

    def take_turn(self, deadline: float | None, *, yielding: bool = False) -> bool:
        """Wait for a turn and claim it; False if the turn would come after ``deadline``."""
        if yielding:
            self._yield(deadline)
        while True:
            with self._lock:
                now = self._clock.monotonic()
                wait = self._wait(now)
                if wait <= 0:
                    self._sent.append(now)
                    return True
            if deadline is not None and now + wait > deadline:
                return False
            if not self._halt.pause(wait):
                return False

    def _yield(self, deadline: float | None) -> None:
        started = self._clock.monotonic()
        bound = POLL_YIELD_BOUND if deadline is None else min(POLL_YIELD_BOUND, (deadline - started) / 2)
        while True:
            with self._lock:
                now = self._clock.monotonic()
                if poll_may_go(self._recent(now), now, now - started, bound=bound, limit=self._limit,
                               window=self._window):
                    return
            if not self._halt.pause(POLL_RECHECK_SECONDS):
                return

    def ticket_wait(self) -> float:
        with self._lock:
            return self._ticket_wait(self._clock.monotonic())

    def ticket_share(self) -> str:
        return f"at most {ticket_allowance(self._limit)} in any {self._window:g} s"

    def take_ticket(self) -> bool:
        """Claim a stream ticket's share of the budget; False while it is spent."""
        with self._lock:
            now = self._clock.monotonic()
            if self._ticket_wait(now) > 0:
                return False
            self._tickets.append(now)
            return True

    def _ticket_wait(self, now: float) -> float:
        while self._tickets and self._tickets[0] <= now - self._window:
            self._tickets.popleft()
        return ticket_wait(list(self._tickets), now, self._limit, self._window)

    def in_window(self) -> tuple[int, int, float]:
        """Requests claimed in the last window, the limit, the window."""
        with self._lock:
            return len(self._recent(self._clock.monotonic())), self._limit, self._window

    def held_for(self) -> float:
        """Seconds a 429's (or 503's) Retry-After still holds every request; 0 when none does."""
        with self._lock:
            return max(0.0, self._held_until - self._clock.monotonic())

    def hold_for(self, seconds: float) -> None:
        with self._lock:
            self._held_until = max(self._held_until, self._clock.monotonic() + seconds)


class BasecampClient:
    def __init__(self, base_url: str, account_id: int, token: str | Tokens, user_agent: str, *,
                 clock: Clock | None = None, post_timeout: float = DEFAULT_POST_TIMEOUT,
                 read_timeout: float = DEFAULT_READ_TIMEOUT, requests_per_window: int = DEFAULT_LIMIT,
                 window_seconds: float = DEFAULT_WINDOW_SECONDS) -> None:
        origin = base_url.rstrip("/")
        if not transport_allowed(origin):
            raise ValueError(f"Basecamp must be reached over https (http only to loopback): {origin}")
        if account_id <= 0:
            raise ValueError("an account id is a positive integer")
        if not user_agent.strip():
            raise ValueError("Basecamp requires a User-Agent naming the app and a contact")
        self._origin = origin
        self.account_id = account_id
        self._tokens: Tokens = StaticToken(token) if isinstance(token, str) else token
        self._clock: Clock = clock or SystemClock()
        self._post_timeout = post_timeout
        self._read_timeout = read_timeout
        self._halt = Halt(self._clock)
        self._pacer = Pacer(self._clock, requests_per_window, window_seconds, self._halt)
        self._wire = Wire(origin, user_agent, self._clock, self._halt)
        self._random = random.Random()  # noqa: S311 -- jitter, not security
        self.last_answer: tuple[int, str] | None = None  # a read's status and Date header (doctor)

    def __repr__(self) -> str:
        return f"BasecampClient({self._origin!r}, account {self.account_id})"

    @property
    def account_url(self) -> str:
        return f"{self._origin}/{self.account_id}"

    def rate_limited_for(self) -> float:
        """Seconds Basecamp's Retry-After still holds this client; not its own pacing, which only
        spaces requests (a full pacing window is a wait of a moment, not a rate limit)."""
        return self._pacer.held_for()

    def figures(self) -> ProcessFigures:
        """Basecamp's answers so far and the budget's use now, for the metrics."""
        sent, limit, window = self._pacer.in_window()
        return ProcessFigures(self._wire.answers(), sent, limit, window, self._pacer.held_for())

    def deadline_in(self, seconds: float) -> float:
        return self._clock.monotonic() + seconds

    def reads_stopped_by(self, stop: threading.Event) -> AbstractContextManager[None]:
        """While it stands, every read (and its waits) ends once ``stop`` is set; creates go on."""
        return self._halt.during(stop)

    def post(self, destination: Destination, body: str, deadline: float | None = None) -> PostOutcome:
        """Create one message at ``destination``: exactly one request, whatever happens."""
        path = self._path_of(destination)
        if not self._pacer.take_turn(deadline):
            return Refused(RefusalCause.not_sent, None, "not sent: the rate-limit wait passes the deadline")
        timeout = self._post_timeout_until(deadline)
        if timeout is None:
            return Refused(RefusalCause.not_sent, None, "not sent: the deadline has passed")
        token = self._tokens.current()
        outcome = self._post_once(path, json.dumps({"content": body}).encode(), timeout, token)
        if isinstance(outcome, Refused) and outcome.status == 401:  # nothing was created
            fresh = self._tokens.after_unauthorized(token)
            if fresh is not None and self._pacer.take_turn(deadline):
                timeout = self._post_timeout_until(deadline)
                if timeout is not None:
                    outcome = self._post_once(path, json.dumps({"content": body}).encode(), timeout, fresh)
        log.info("POST %s -> %s", path, type(outcome).__name__.lower())
        return outcome

    def _post_timeout_until(self, deadline: float | None) -> float | None:
        """The create's timeout within ``deadline``; None once it has passed."""
        if deadline is None:
            return self._post_timeout
        timeout = min(self._post_timeout, deadline - self._clock.monotonic())
        return timeout if timeout > 0 else None

    def _post_once(self, path: str, payload: bytes, timeout: float, token: str) -> PostOutcome:
        sent = self._wire.create_once(path, payload, timeout, token)
        if not isinstance(sent, Answer):
            return sent  # the request never left, or its answer was not read whole
        retry_after = self._held(sent.status, sent.headers.get("Retry-After"))
        return classify_answer(sent.status, sent.body, retry_after)

    def _held(self, status: int, retry_after: str | None) -> float | None:
        """``retry_after`` read; a 429 holds every later request until then (a second if it says nothing)."""
        told = parse_retry_after(retry_after, self._clock.now())
        if status == 429:
            self._pacer.hold_for(told if told is not None else 1.0)
        return told

    def _path_of(self, destination: Destination) -> str:
        prefix = f"/{self.account_id}"
        match destination.kind:
            case MessageKind.boost:
                return f"{prefix}/recordings/{destination.recording_id}/boosts.json"
            case MessageKind.comment:
                return f"{prefix}/recordings/{destination.recording_id}/comments.json"
            case MessageKind.chat_line:
                return f"{prefix}/chats/{destination.recording_id}/lines.json"

    def probe(self, deadline: float) -> None:
        """A cheap read that succeeds only while Basecamp answers this token."""
        self.me(deadline)

    def me(self, deadline: float | None = None) -> Profile:
        """The person the token acts as; ``LastingRefusal`` for a 4xx no retry changes."""
        end = deadline if deadline is not None else self.deadline_in(self._read_timeout)
        answer = self.read(f"{self.account_url}/my/profile.json", end)
        if answer.status == 401:
            raise AuthenticationFailed("Basecamp refused the token (401)")
        if lasting(answer.status):
            raise LastingRefusal(answer.status)
        if answer.status != 200 or not isinstance(answer.body, dict):
            raise BasecampError(f"my/profile.json answered HTTP {answer.status}")
        try:
            body = answer.body
            name = printable(str(body["name"]))  # shown to a person: control characters escaped (core.text)
            return Profile(int(body["id"]), name, str(body.get("attachable_sgid", "")))
        except (KeyError, TypeError, ValueError) as error:
            raise BasecampError("my/profile.json answered without a person") from error

    def list(self, destination: Destination, since: datetime, creator_id: int,
             deadline: float) -> list[ListedMessage]:
        """Every message of ``destination.kind`` by ``creator_id`` there since ``since``."""
        url = self._origin + self._path_of(destination)
        newest_first = destination.kind is MessageKind.chat_line
        if newest_first:
            url += "?" + urlencode({"sort": "created_at", "direction": "desc"})
        found: dict[int, ListedMessage] = {}
        read: set[str] = set()
        for _ in range(MAX_PAGES):
            read.add(url)
            answer = self.read(url, deadline)
            if answer.status in (403, 404):
                raise Unlistable(f"{destination.describe()} cannot be listed: HTTP {answer.status}")
            if answer.status != 200 or not isinstance(answer.body, list):
                raise ListingFailed(f"listing {destination.describe()} answered HTTP {answer.status}")
            reached_back = False
            for item in answer.body:
                message = _listed(item, destination.kind)
                if message.created_at < since:
                    reached_back = True
                elif message.creator_id == creator_id:
                    found[message.id] = message
            following = next_link(answer.headers.get("link"))
            if following is None or (newest_first and reached_back):
                return sorted(found.values(), key=lambda m: (m.created_at, m.id))
            if not same_origin(following, url):
                raise ListingFailed(f"listing {destination.describe()}: a next page on another origin")
            if following in read:
                raise ListingFailed(f"listing {destination.describe()}: the Link leads back to a page read")
            url = following
        reach = f"did not reach back to {since:%Y-%m-%dT%H:%M:%SZ} within {MAX_PAGES} pages"
        raise Unlistable(f"{destination.describe()} {reach}")

    def projects(self, deadline: float) -> frozenset[int]:
        url = f"{self.account_url}/projects.json"
        found: set[int] = set()
        for _ in range(MAX_PAGES):
            answer = self.read(url, deadline)
            if answer.status != 200 or not isinstance(answer.body, list):
                raise ListingFailed(f"projects.json answered HTTP {answer.status}")
            try:
                found.update(int(item["id"]) for item in answer.body)
            except (KeyError, TypeError, ValueError):
                raise ListingFailed("a listed project could not be read") from None
            following = next_link(answer.headers.get("link"))
            if following is None:
                return frozenset(found)
            if not same_origin(following, self._origin):
                raise ListingFailed("projects.json: a next page on another origin")
            url = following
        raise ListingFailed(f"projects.json: more than {MAX_PAGES} pages")

    def poll_events(self, since: int | None, position: str | None, filters: FeedFilters, deadline: float, *,
                    next_url: str | None = None) -> FeedPage:
        answer = self._cursor_page("events.json", filters.query(), deadline, what="the event feed",
                                   since=since, position=position, next_url=next_url)  # fmt: skip
        if answer.status in FEED_REFUSALS:
            raise FeedRefused(read_refusal(answer.status, answer.body))
        return _page(answer, read_page, "the event feed")

    def poll_inbox(self, since: int | None, position: str | None, deadline: float, *,
                   next_url: str | None = None) -> InboxPage:
        """One page of the agent's inbox, always asked with ``core.feed.ASKED_REASONS``: the filter
        set is the position's, so every request of the lane asks with the same one."""
        reasons = (("reasons", ",".join(ASKED_REASONS)),)
        answer = self._cursor_page("inbox.json", reasons, deadline, what="the inbox",
                                   since=since, position=position, next_url=next_url)  # fmt: skip
        if answer.status in INBOX_REFUSALS:
            raise InboxRefused(read_inbox_refusal(answer.status, answer.body))
        return _page(answer, read_inbox_page, "the inbox")

    def _cursor_page(self, resource: str, filters: Sequence[tuple[str, str]], deadline: float, *, what: str,
                     since: int | None, position: str | None, next_url: str | None) -> Answer:
        """A cursor page's answer from ``next_url``, else ``position``, else after ``since`` (None: now)."""
        if next_url is not None:
            if not same_origin(next_url, self._origin):
                raise FeedFailed(f"{what}'s next page is on another origin")
            url = next_url
        else:
            start = "now" if since is None else str(since)
            cursor = ("position", position) if position is not None else ("since", start)
            url = f"{self.account_url}/{resource}?{urlencode([*filters, cursor])}"
        try:
            answer = self.read(url, deadline, yielding=True)
        except ListingFailed as error:
            raise FeedFailed(f"{what} could not be read: {error}") from None
        if answer.status == 401:
            raise AuthenticationFailed("Basecamp refused the token (401)")
        return answer

    def ticket_wait(self) -> float:
        """Seconds before ``stream_ticket`` may be asked: tickets take only their share of the budget."""
        return self._pacer.ticket_wait()

    def stream_ticket(self, deadline: float) -> StreamTicket:
        """The live lane's ticket, a credential (``core.feed``): one POST creating nothing, never retried."""
        path = f"/{self.account_id}/events/stream_ticket.json"
        if not self._pacer.take_ticket():
            raise BasecampError(f"no stream ticket: {self._pacer.ticket_share()} (its share of the budget)")
        if not self._pacer.take_turn(deadline):
            raise BasecampError("no stream ticket: the rate-limit wait passes the deadline")
        remaining = deadline - self._clock.monotonic()
        if remaining <= 0:
            raise BasecampError("no stream ticket: the deadline has passed")
        token = self._tokens.current()
        try:
            answer = self._wire.post_pooled(path, min(self._read_timeout, remaining), token)
        except ListingFailed as error:
            raise BasecampError(f"no stream ticket: {error}") from None
        if answer.status == 401:
            self._tokens.after_unauthorized(token)  # the lane's next connect asks with a fresher one
            raise AuthenticationFailed("Basecamp refused the token (401)")
        self._held(answer.status, answer.headers.get("retry-after"))
        if answer.status not in (200, 201):
            raise BasecampError(f"no stream ticket: HTTP {answer.status}")
        try:
            return read_ticket(answer.body, self._origin)
        except ValueError as error:
            raise BasecampError(f"no stream ticket: {error}") from None

    def read(self, url: str, deadline: float, *, yielding: bool = False) -> Answer:
        """One read, retried per ``core.pacing`` within ``deadline``; a 401 once more with a fresher token."""
        target = request_target(url, self._origin)
        if target is None:
            raise ListingFailed("a URL that is ambiguous or not on the configured origin is not followed")
        attempts = 0
        replayed = False
        while True:
            if not self._pacer.take_turn(deadline, yielding=yielding):
                raise ListingFailed("the deadline passed while waiting for a turn under the rate limit")
            remaining = deadline - self._clock.monotonic()
            if remaining <= 0:
                raise ListingFailed("the deadline passed")
            attempts += 1
            token = self._tokens.current()
            answer = self._wire.get_once(target, min(self._read_timeout, remaining), token)
            self.last_answer = (answer.status, answer.headers.get("date", ""))
            if answer.status == 401 and not replayed and self._tokens.after_unauthorized(token) is not None:
                replayed = True
                attempts -= 1
                continue
            retry_after = answer.headers.get("retry-after")
            self._held(answer.status, retry_after)
            jitter = self._random.uniform(0, 0.1)
            match after_read(answer.status, attempts, retry_after, self._clock.now(), jitter):
                case Final():
                    return answer
                case RetryAfter(seconds):
                    if self._clock.monotonic() + seconds >= deadline:
                        raise ListingFailed(f"HTTP {answer.status}, and the retry would pass the deadline")
                    if not self._halt.pause(seconds):
                        raise ListingFailed(f"HTTP {answer.status}; the read was stopped before its retry")


def _page(answer: Answer, read: Callable[[Any], Result[Page, PageRejected]], what: str) -> Page:
    if answer.status != 200:
        raise FeedFailed(f"{what} answered HTTP {answer.status}")
    page = read(answer.body)
    if isinstance(page, Failure):
        raise FeedFailed(f"{what} answered an unreadable page: {page.failure().reason}")
    return page.unwrap()


def _listed(item: Any, kind: MessageKind) -> ListedMessage:
    """One listed item, or ``ListingFailed``: a listing we cannot read is not a listing."""
    try:
        person = item["booster"] if kind is MessageKind.boost else item["creator"]
        created_at = parse_timestamp(str(item["created_at"]))
        text = message_text(str(item.get("content") or ""))
        return ListedMessage(int(item["id"]), created_at, int(person["id"]), text)
    except (KeyError, TypeError, ValueError) as error:
        raise ListingFailed(f"a listed {kind} could not be read") from error


def check_identity(client: BasecampClient, *, agent_id: int, token_file: str, base_url: str, consequence: str,
                   wrong_person_hint: str = "", unreachable_hint: str = "") -> Profile:
    """The person the token acts as, asked before anything is written or started, when it is the
    configured agent: a connector acting as someone else would post in their name, and its loop
    guard would hide that person's events and let the agent's own in. A refusal Basecamp will repeat
    is ``EXIT_CONFIG`` with what to fix; a Basecamp that cannot answer is ``EXIT_UNAVAILABLE`` (an
    identity is never assumed). Each refusal is one line ending in ``consequence``, never the token."""
    try:
        person = client.me(client.deadline_in(IDENTITY_CHECK_SECONDS))
    except AuthenticationFailed as error:
        refused = f"Basecamp refused the token in {token_file} (401): {consequence}"
        raise UserError(refused, EXIT_CONFIG) from error
    except LastingRefusal as error:
        account = client.account_id
        fix = what_to_fix(error.status, token_file=token_file, account_id=account, base_url=base_url)
        raise UserError(f"{fix}: {consequence}", EXIT_CONFIG) from error
    except BasecampError as error:
        asked = f"could not ask {base_url} who the token in {token_file} acts as ({error})"
        raise UserError(f"{asked}: {consequence}{unreachable_hint}", EXIT_UNAVAILABLE) from error
    if person.id != agent_id:
        acts_as = f"the token in {token_file} acts as person {person.id} ({person.name})"
        not_agent = f"not the configured agent {agent_id}: {consequence}{wrong_person_hint}"
        raise UserError(f"{acts_as}, {not_agent}", EXIT_CONFIG)
    return person
