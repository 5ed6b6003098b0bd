"""A Basecamp with behaviour, in process: messages are stored, posts and listings scripted.

Not a mock: it keeps what was created and answers listings from it, so the outbox's decisions
are checked against what a real destination would hold. Every post is counted, landed or not.
"""

from __future__ import annotations

import builtins
import itertools
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from enum import StrEnum

from core.destinations import Destination, ListedMessage
from core.posting import Created, PostOutcome, RefusalCause, Refused, Uncertain, UncertainCause
from core.text import message_text
from shell.basecamp.errors import ListingFailed, Unlistable
from shell.clock import Clock

AGENT_ID = 4_242
SOMEONE_ELSE = 7_777


class Post(StrEnum):
    """What the next post does."""

    land = "land"
    refuse = "refuse"
    lost_after_landing = "lost_after_landing"  # created; the answer never arrives
    lost_before_landing = "lost_before_landing"  # not created; the answer never arrives
    not_connected = "not_connected"
    rate_limited = "rate_limited"
    unauthorized = "unauthorized"  # the token refused (401), after the client's one refresh


class Listing(StrEnum):
    """What the next listing does."""

    answer = "answer"
    fail = "fail"
    unlistable = "unlistable"


@dataclass
class Stored:
    message: ListedMessage
    visible_at: datetime


@dataclass
class FakeBasecamp:
    clock: Clock
    posts: list[Post] = field(default_factory=list)
    listings: list[Listing] = field(default_factory=list)
    lag_seconds: float = 0.0
    before_post: Callable[[Destination, str], None] | None = None
    stored: dict[Destination, list[Stored]] = field(default_factory=dict)
    calls: list[tuple[str, Destination | None]] = field(default_factory=list)
    held_until: float = 0.0
    reachable: bool = True
    _ids: itertools.count[int] = field(default_factory=lambda: itertools.count(1_069_479_000))
    _lock: threading.Lock = field(default_factory=threading.Lock)

    # -- the Poster protocol ---------------------------------------------------------------

    def post(self, destination: Destination, body: str, deadline: float | None = None) -> PostOutcome:
        if self.before_post is not None:
            self.before_post(destination, body)
        with self._lock:
            self.calls.append(("post", destination))
            behaviour = self.posts.pop(0) if self.posts else Post.land
            match behaviour:
                case Post.land:
                    return Created(self._store(destination, body, AGENT_ID))
                case Post.lost_after_landing:
                    self._store(destination, body, AGENT_ID)
                    return Uncertain(UncertainCause.connection_lost, None, "lost after landing")
                case Post.lost_before_landing:
                    return Uncertain(UncertainCause.timeout, None, "lost before landing")
                case Post.refuse:
                    return Refused(RefusalCause.answered, 422, "refused")
                case Post.not_connected:
                    return Refused(RefusalCause.not_connected, None, "could not connect")
                case Post.rate_limited:
                    self.held_until = self.clock.monotonic() + 30
                    return Refused(RefusalCause.answered, 429, "rate limited", 30.0)
                case Post.unauthorized:
                    return Refused(RefusalCause.answered, 401, "HTTP 401")

    def list(
        self, destination: Destination, since: datetime, creator_id: int, deadline: float
    ) -> list[ListedMessage]:
        with self._lock:
            self.calls.append(("list", destination))
            behaviour = self.listings.pop(0) if self.listings else Listing.answer
            if behaviour is Listing.fail:
                raise ListingFailed("the listing failed")
            if behaviour is Listing.unlistable:
                raise Unlistable("the destination cannot be listed")
            now = self.clock.now()
            return [
                stored.message
                for stored in self.stored.get(destination, [])
                if stored.visible_at <= now
                and stored.message.creator_id == creator_id
                and stored.message.created_at >= since
            ]

    def rate_limited_for(self) -> float:
        return max(0.0, self.held_until - self.clock.monotonic())

    def probe(self, deadline: float) -> None:
        with self._lock:
            self.calls.append(("probe", None))
            if not self.reachable:
                raise ListingFailed("unreachable")

    # -- for tests -------------------------------------------------------------------------

    def seed(self, destination: Destination, text: str, creator_id: int = AGENT_ID) -> int:
        with self._lock:
            return self._store(destination, text, creator_id)

    def post_count(self) -> int:
        return sum(1 for name, _ in self.calls if name == "post")

    def list_count(self) -> int:
        return sum(1 for name, _ in self.calls if name == "list")

    def messages_at(self, destination: Destination) -> builtins.list[ListedMessage]:
        return [stored.message for stored in self.stored.get(destination, [])]

    def _store(self, destination: Destination, body: str, creator_id: int) -> int:
        identifier = next(self._ids)
        now = self.clock.now()
        message = ListedMessage(identifier, now, creator_id, message_text(body))
        self.stored.setdefault(destination, []).append(
            Stored(message, now + timedelta(seconds=self.lag_seconds))
        )
        return identifier
