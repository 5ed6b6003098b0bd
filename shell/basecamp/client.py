"""The Basecamp HTTP client: one create is one request; a listing is whole or an error.

It decides what is asked, when and how often; ``shell.basecamp.wire`` makes each request once,
and a failed read raises one of ``shell.basecamp.errors``.

Rules:
1. A create (``post``) is exactly one request on a connection of its own, so the client knows
   which side of the line a failure fell on (``core.posting``: ``Refused`` or ``Uncertain``). No
   retry (but rule 9's after a 401), no redirect, no pooled connection.
2. A listing is exhaustive or raises (``Unlistable``, ``ListingFailed``): absence from a short
   listing would read as "never posted".
3. Reads retry per ``core.pacing``, never past the caller's deadline.
4. Every request waits its turn in one ``Pacer``; a 429 holds every later request until its
   Retry-After; a feed poll yields its turn to a backlog, within a bound.
5. The token never appears in a log, an exception or a repr; logs carry method, path without
   query, and status, never a body (``wire`` rule 4).
6. https is required except to a loopback host.
7. ``poll_events`` reads one feed page a call; its position, query string and ``next`` URL are
   credentials. A refusal is ``FeedRefused`` with ``core.feed``'s reading; the inbox
   (``poll_inbox``) is read the same way, refused as ``InboxRefused``.
8. A live-lane ticket (``stream_ticket``) is one POST that creates nothing, never retried; the
   ticket and its URL are credentials (``core.feed``).
9. The token comes from ``shell.basecamp.tokens`` at each request. A 401 is refused before
   anything was done, so its request (a create too) is made once more if a fresher token exists.
10. No answer is read past ``wire.MAX_ANSWER_BYTES``: more is a failed read, or for a create
   ``Uncertain``. A listing whose ``Link`` leads back to a page it read fails at once.
11. ``me`` raises ``LastingRefusal`` for a 4xx no retry changes (``core.pacing``).
12. A URL Basecamp hands back is followed only when unambiguous and on the configured origin
   (``core.links`` rules 4-5), sending only path and query over a connection bound to that
   origin (``wire`` rule 5): the token never travels to another host."""

from __future__ import annotations

import json
import logging
import random
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from urllib.parse import urlencode

import urllib3
from returns.result import Failure

from core.destinations import Destination, ListedMessage, MessageKind
from core.feed import FeedFilters, FeedPage, InboxPage, StreamTicket, read_page, read_refusal, read_ticket
from core.links import next_link, request_target, same_origin, transport_allowed
from core.pacing import (
    DEFAULT_LIMIT,
    DEFAULT_WINDOW_SECONDS,
    Final,
    RetryAfter,
    after_read,
    lasting,
    parse_retry_after,
)
from core.posting import PostOutcome, RefusalCause, Refused, classify_answer
from core.text import message_text, printable
from core.timestamps import parse_timestamp
from shell.basecamp import cursor_reads
from shell.basecamp.errors import (
    AuthenticationFailed,
    BasecampError,
    FeedFailed,
    FeedRefused,
    LastingRefusal,
    ListingFailed,
    Unlistable,
)
from shell.basecamp.pacer import Pacer
from shell.basecamp.tokens import StaticToken, Tokens
from shell.basecamp.wire import Answer, AnswerTooLarge, Wire, bounded_body, decode
from shell.clock import Clock, SystemClock

log = logging.getLogger("connector.basecamp")

MAX_PAGES = 200
DEFAULT_POST_TIMEOUT = 60.0
DEFAULT_READ_TIMEOUT = 30.0


@dataclass(frozen=True, slots=True)
class Profile:
    """The authenticated person, as ``my/profile.json`` answers."""

    id: int
    name: str
    attachable_sgid: str


class BasecampClient:
    """The agent's client for one Basecamp account."""

    def __init__(
        self,
        base_url: str,
        account_id: int,
        token: str | Tokens,
        user_agent: str,
        *,
        clock: Clock | None = None,
        post_timeout: float = DEFAULT_POST_TIMEOUT,
        read_timeout: float = DEFAULT_READ_TIMEOUT,
        requests_per_window: int = DEFAULT_LIMIT,
        window_seconds: float = DEFAULT_WINDOW_SECONDS,
    ) -> None:
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
        self._pacer = Pacer(self._clock, requests_per_window, window_seconds)
        self._wire = Wire(origin, user_agent, self._clock)
        self._random = random.Random()  # noqa: S311 -- jitter, not security
        self.last_read_ok_at: float | None = None
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

    def deadline_in(self, seconds: float) -> float:
        """A deadline ``seconds`` from now, on this client's monotonic clock."""
        return self._clock.monotonic() + seconds

    # -- creates ---------------------------------------------------------------------------

    def post(self, destination: Destination, body: str, deadline: float | None = None) -> PostOutcome:
        """Create one message at ``destination``: exactly one request, whatever happens."""
        path = self._path_of(destination)
        if not self._pacer.take_turn(deadline):
            return Refused(RefusalCause.not_sent, None, "not sent: the rate-limit wait passes the deadline")
        timeout = self._post_timeout
        if deadline is not None:
            timeout = min(timeout, deadline - self._clock.monotonic())
            if timeout <= 0:
                return Refused(RefusalCause.not_sent, None, "not sent: the deadline has passed")
        token = self._tokens.current()
        outcome = self._post_once(path, json.dumps({"content": body}).encode(), timeout, token)
        if isinstance(outcome, Refused) and outcome.status == 401:  # nothing was created (rule 8)
            outcome = self._after_unauthorized(path, body, deadline, token, outcome)
        log.info("POST %s -> %s", path, type(outcome).__name__.lower())
        return outcome

    def _post_once(self, path: str, payload: bytes, timeout: float, token: str) -> PostOutcome:
        sent = self._wire.create_once(path, payload, timeout, token)
        if not isinstance(sent, Answer):
            return sent  # the request never left, or its answer was not read whole
        retry_after = parse_retry_after(sent.headers.get("Retry-After"), self._clock.now())
        if sent.status == 429:
            self._pacer.hold_for(retry_after if retry_after is not None else 1.0)
        return classify_answer(sent.status, sent.body, retry_after)

    def _after_unauthorized(
        self, path: str, body: str, deadline: float | None, refused_token: str, refused: PostOutcome
    ) -> PostOutcome:
        """Rule 8: once more with a fresher token, if the token source has one and time is left."""
        fresh = self._tokens.after_unauthorized(refused_token)
        if fresh is None or not self._pacer.take_turn(deadline):
            return refused
        timeout = self._post_timeout
        if deadline is not None:
            timeout = min(timeout, deadline - self._clock.monotonic())
            if timeout <= 0:
                return refused
        return self._post_once(path, json.dumps({"content": body}).encode(), timeout, fresh)

    def _path_of(self, destination: Destination) -> str:
        prefix = f"/{self.account_id}"
        match destination.kind:
            case MessageKind.boost:
                return f"{prefix}/recordings/{destination.recording_id}/boosts.json"
            case MessageKind.comment:
                return f"{prefix}/recordings/{destination.recording_id}/comments.json"
            case MessageKind.chat_line:
                return f"{prefix}/chats/{destination.recording_id}/lines.json"

    # -- reads -----------------------------------------------------------------------------

    def probe(self, deadline: float) -> None:
        """A cheap read that succeeds only while Basecamp answers this token."""
        self.me(deadline)

    def me(self, deadline: float | None = None) -> Profile:
        """The person the token acts as."""
        end = deadline if deadline is not None else self.deadline_in(self._read_timeout)
        answer = self.read(f"{self.account_url}/my/profile.json", end)
        if answer.status == 401:
            raise AuthenticationFailed("Basecamp refused the token (401)")
        if lasting(answer.status):
            raise LastingRefusal(answer.status)
        if answer.status != 200 or not isinstance(answer.body, dict):
            raise BasecampError(f"my/profile.json answered HTTP {answer.status}")
        try:
            return Profile(  # a name is shown to a person: its control characters escaped (core.text)
                int(answer.body["id"]), printable(str(answer.body["name"])),
                str(answer.body.get("attachable_sgid", "")),
            )  # fmt: skip
        except (KeyError, TypeError, ValueError) as error:
            raise BasecampError("my/profile.json answered without a person") from error

    def list(
        self, destination: Destination, since: datetime, creator_id: int, deadline: float
    ) -> list[ListedMessage]:
        """Every message of ``destination.kind`` by ``creator_id`` there since ``since``.

        Exhaustive or an exception: ``Unlistable`` or ``ListingFailed``.
        """
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
            if newest_first and reached_back:
                return sorted(found.values(), key=lambda m: (m.created_at, m.id))
            following = next_link(answer.headers.get("link"))
            if following is None:
                return sorted(found.values(), key=lambda m: (m.created_at, m.id))
            if not same_origin(following, url):
                raise ListingFailed(f"listing {destination.describe()}: a next page on another origin")
            if following in read:
                raise ListingFailed(f"listing {destination.describe()}: the Link leads back to a page read")
            url = following
        raise Unlistable(
            f"{destination.describe()} did not reach back to {since:%Y-%m-%dT%H:%M:%SZ}"
            f" within {MAX_PAGES} pages"
        )

    def projects(self, deadline: float) -> frozenset[int]:
        """The ids of every project the agent is a member of (``projects.json``, every page)."""
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

    def poll_events(
        self,
        since: int | None,
        position: str | None,
        filters: FeedFilters,
        deadline: float,
        *,
        next_url: str | None = None,
    ) -> FeedPage:
        """One page of the account event feed (rule 7).

        From ``next_url`` (a previous page's ``next``) when given; else from ``position``;
        else after event ``since`` (None: from now). Raises ``FeedRefused`` (400, 409,
        410), ``AuthenticationFailed`` (401) or ``FeedFailed``.
        """
        answer = cursor_reads.read_cursor(self, self._origin, "events.json", filters.query(), deadline,
                                          since=since, position=position, next_url=next_url,
                                          what="the event feed")  # fmt: skip
        if answer.status in (400, 409, 410):
            raise FeedRefused(read_refusal(answer.status, answer.body))
        if answer.status != 200:
            raise FeedFailed(f"the event feed answered HTTP {answer.status}")
        page = read_page(answer.body)
        if isinstance(page, Failure):
            raise FeedFailed(f"the event feed answered an unreadable page: {page.failure().reason}")
        return page.unwrap()

    def poll_inbox(
        self, since: int | None, position: str | None, deadline: float, *, next_url: str | None = None
    ) -> InboxPage:
        """One page of the agent's inbox (rule 7): ``shell.basecamp.cursor_reads.poll_inbox``."""
        return cursor_reads.poll_inbox(self, self._origin, since, position, deadline, next_url=next_url)

    def stream_ticket(self, deadline: float) -> StreamTicket:
        """A fresh ticket for the live lane (rule 8): one request, never retried here."""
        path = f"/{self.account_id}/events/stream_ticket.json"
        if not self._pacer.take_turn(deadline):
            raise BasecampError("no stream ticket: the rate-limit wait passes the deadline")
        remaining = deadline - self._clock.monotonic()
        if remaining <= 0:
            raise BasecampError("no stream ticket: the deadline has passed")
        token = self._tokens.current()
        try:
            response = self._wire.post_pooled(path, min(self._read_timeout, remaining), token)
            raw = bounded_body(response)
        except AnswerTooLarge as error:
            raise BasecampError(f"no stream ticket: {error}") from None
        except (urllib3.exceptions.HTTPError, OSError) as error:
            raise BasecampError(f"no stream ticket: {type(error).__name__}") from None
        log.info("POST %s -> %d", path, response.status)
        if response.status == 401:
            self._tokens.after_unauthorized(token)  # the lane's next connect asks with a fresher one
            raise AuthenticationFailed("Basecamp refused the token (401)")
        if response.status == 429:
            told = parse_retry_after(response.headers.get("Retry-After"), self._clock.now())
            self._pacer.hold_for(told if told is not None else 1.0)
        if response.status not in (200, 201):
            raise BasecampError(f"no stream ticket: HTTP {response.status}")
        try:
            return read_ticket(decode(raw), self._origin)
        except ValueError as error:
            raise BasecampError(f"no stream ticket: {error}") from None

    def read(self, url: str, deadline: float, *, yielding: bool = False) -> Answer:
        """One read, retried per ``core.pacing`` within ``deadline``; a ``yielding`` one (a feed
        poll) lets a backlog go first (rule 4). Only ``url``'s path and query are sent, on the
        configured origin's connection; an ambiguous URL or another origin's is never asked (rule 12)."""
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
                replayed = True  # once, with the refreshed token (rule 8)
                attempts -= 1
                continue
            retry_after = answer.headers.get("retry-after")
            if answer.status == 429:
                told = parse_retry_after(retry_after, self._clock.now())
                self._pacer.hold_for(told if told is not None else 1.0)
            decision = after_read(
                answer.status, attempts, retry_after, self._clock.now(), self._random.uniform(0, 0.1)
            )
            match decision:
                case Final():
                    if 200 <= answer.status < 300:
                        self.last_read_ok_at = self._clock.monotonic()
                    return answer
                case RetryAfter(seconds):
                    if self._clock.monotonic() + seconds >= deadline:
                        raise ListingFailed(f"HTTP {answer.status}, and the retry would pass the deadline")
                    self._clock.sleep(seconds)


def _listed(item: Any, kind: MessageKind) -> ListedMessage:
    """One listed item, or ``ListingFailed``: a listing we cannot read is not a listing."""
    try:
        person = item["booster"] if kind is MessageKind.boost else item["creator"]
        return ListedMessage(
            id=int(item["id"]),
            created_at=parse_timestamp(str(item["created_at"])),
            creator_id=int(person["id"]),
            text=message_text(str(item.get("content") or "")),
        )
    except (KeyError, TypeError, ValueError) as error:
        raise ListingFailed(f"a listed {kind} could not be read") from error
