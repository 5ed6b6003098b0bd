"""The account event feed as intake reads it: filters and their digest, a page, its errors.

Rules:
1. The filters are the checkpoint's identity: ``FeedFilters`` keeps each as a sorted tuple
   without repeats, so two spellings are one value; ``digest()`` is the SHA-256 hex of its
   canonical JSON. Changing a filter starts a new lineage, never resuming another's position.
2. A feed position is a credential-like token: never built, parsed, logged or shown
   (``repr=False``), nor is a ``next`` URL, which carries it.
3. A page is read whole or refused (``read_page``: ids strictly increasing, a position, each
   event a pointer), else ``Failure(PageRejected)`` and nothing of it is recorded.
4. An event is a thin pointer; its ``details`` are kept as given (a JSON object or None).
5. The feed's refusals are a closed set (``read_refusal``), each saying what to do next; a 410
   without an integer ``epoch_after_id`` is ``UnexpectedFeedAnswer``: back off, never guess.
6. ``new_ids``: the ids of a page not already known, in page order, each once."""

from __future__ import annotations

import hashlib
import itertools
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from returns.result import Failure, Result, Success

MAX_BUCKETS = 100


class ActorType(StrEnum):
    agent = "agent"
    person = "person"


@dataclass(frozen=True, slots=True)
class FeedFilters:
    """What intake asks the feed for. ``exclude_performers`` holds ids as text or ``self``."""

    buckets: tuple[int, ...] = ()
    types: tuple[str, ...] = ()
    exclude_performers: tuple[str, ...] = ()
    actor_types: tuple[str, ...] = ()

    @classmethod
    def of(
        cls,
        *,
        buckets: Iterable[int] = (),
        types: Iterable[str] = (),
        exclude_performers: Iterable[str | int] = (),
        actor_types: Iterable[str] = (),
    ) -> FeedFilters:
        """Filters in canonical form (rule 1); ValueError for a value the feed refuses."""
        bucket_ids = tuple(sorted({int(bucket) for bucket in buckets}))
        if len(bucket_ids) > MAX_BUCKETS:
            raise ValueError(f"at most {MAX_BUCKETS} buckets, not {len(bucket_ids)}")
        if any(bucket <= 0 for bucket in bucket_ids):
            raise ValueError("a bucket id is a positive integer")
        actors = tuple(sorted({str(actor) for actor in actor_types}))
        for actor in actors:
            ActorType(actor)  # ValueError for an unknown actor type
        performers = tuple(sorted({str(performer) for performer in exclude_performers}))
        for performer in performers:
            if performer != "self" and not performer.isdigit():
                raise ValueError(f"a performer is an id or 'self', not {performer!r}")
        kinds = tuple(sorted({str(kind) for kind in types}))
        if any(not kind or "," in kind for kind in kinds):
            raise ValueError("an event type is a non-empty name without commas")
        return cls(bucket_ids, kinds, performers, actors)

    def query(self) -> tuple[tuple[str, str], ...]:
        """The filters as query parameters (comma-separated lists; empty ones left out)."""
        pairs = (
            ("buckets", ",".join(str(bucket) for bucket in self.buckets)),
            ("types", ",".join(self.types)),
            ("exclude_performers", ",".join(self.exclude_performers)),
            ("actor_types", ",".join(self.actor_types)),
        )
        return tuple((name, value) for name, value in pairs if value)

    def digest(self) -> str:
        """The checkpoint identity of these filters (rule 1)."""
        canonical = json.dumps(
            {
                "buckets": list(self.buckets),
                "types": list(self.types),
                "exclude_performers": list(self.exclude_performers),
                "actor_types": list(self.actor_types),
            },
            sort_keys=True,
            separators=(",", ":"),
        )
        return hashlib.sha256(canonical.encode()).hexdigest()


@dataclass(frozen=True, slots=True)
class FeedEvent:
    """One pointer from the feed."""

    id: int
    kind: str
    action: str
    event_type: str
    bucket_id: int
    creator_id: int
    performed_by_id: int | None
    recording_id: int
    created_at: str
    details: Mapping[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class FeedPage:
    """A page of the feed. ``position`` and ``next_url`` never print (rule 2)."""

    events: tuple[FeedEvent, ...]
    position: str = field(repr=False)
    next_url: str | None = field(default=None, repr=False)

    @property
    def last_id(self) -> int | None:
        return self.events[-1].id if self.events else None


@dataclass(frozen=True, slots=True)
class PageRejected:
    """Why a page cannot be recorded (no token or URL in ``reason``)."""

    reason: str


def _integer(value: object, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"an event's {name} is an integer")
    return value


def read_event(value: object) -> FeedEvent:
    """One event of a page (rules 3 and 4); ValueError when it is not one."""
    if not isinstance(value, dict):
        raise ValueError("an event is a JSON object")
    performed_by = value.get("performed_by_id")
    details = value.get("details")
    if details is not None and not isinstance(details, dict):
        raise ValueError("an event's details are a JSON object")
    text = {name: value.get(name) for name in ("kind", "action", "event_type", "created_at")}
    for name, found in text.items():
        if not isinstance(found, str):
            raise ValueError(f"an event's {name} is a string")
    return FeedEvent(
        id=_integer(value.get("id"), "id"),
        kind=str(text["kind"]),
        action=str(text["action"]),
        event_type=str(text["event_type"]),
        bucket_id=_integer(value.get("bucket_id"), "bucket_id"),
        creator_id=_integer(value.get("creator_id"), "creator_id"),
        performed_by_id=None if performed_by is None else _integer(performed_by, "performed_by_id"),
        recording_id=_integer(value.get("recording_id"), "recording_id"),
        created_at=str(text["created_at"]),
        details=details,
    )


def read_envelope(
    body: object, name: str, what: str
) -> Result[tuple[list[object], str, str | None], PageRejected]:
    """A cursor page's envelope (rule 3), the feed's and the inbox's alike: an object with a list
    under ``name``, a non-empty ``position``, ``next`` a string when present."""
    if not isinstance(body, dict):
        return Failure(PageRejected(f"{what} is not a JSON object"))
    listed, position, next_url = body.get(name), body.get("position"), body.get("next")
    if not isinstance(listed, list):
        return Failure(PageRejected(f"{what} has no list of {name}"))
    if not isinstance(position, str) or not position:
        return Failure(PageRejected(f"{what} has no position"))
    if next_url is not None and (not isinstance(next_url, str) or not next_url):
        return Failure(PageRejected(f"{what}'s next is not a URL"))
    return Success((listed, position, next_url))


def read_page(body: object) -> Result[FeedPage, PageRejected]:
    """A 200 body as a page, or why it cannot be recorded (rule 3)."""
    envelope = read_envelope(body, "events", "the page")
    if isinstance(envelope, Failure):
        return Failure(envelope.failure())
    raw_events, position, next_url = envelope.unwrap()
    try:
        events = tuple(read_event(item) for item in raw_events)
    except ValueError as error:
        return Failure(PageRejected(str(error)))
    ids = [event.id for event in events]
    if any(later <= earlier for earlier, later in itertools.pairwise(ids)):
        return Failure(PageRejected("the page's event ids are not strictly increasing"))
    if any(event_id <= 0 for event_id in ids):
        return Failure(PageRejected("an event id is a positive integer"))
    return Success(FeedPage(events, position, next_url))


# Refusals (rule 5).


@dataclass(frozen=True, slots=True)
class InvalidPosition:
    """400 ``invalid_position``: drop the position, resume with ``since``."""


@dataclass(frozen=True, slots=True)
class InvalidFilter:
    """400 for a filter: the filters must be fixed; retrying will not help."""

    message: str


@dataclass(frozen=True, slots=True)
class FiltersChanged:
    """409: the position was minted for another filter set."""


@dataclass(frozen=True, slots=True)
class EpochPassed:
    """410: the position predates the feed's epoch; resume after ``epoch_after_id``."""

    epoch_after_id: int


@dataclass(frozen=True, slots=True)
class UnexpectedFeedAnswer:
    """Any other answer: back off and try again later."""

    status: int


FeedRefusal = InvalidPosition | InvalidFilter | FiltersChanged | EpochPassed | UnexpectedFeedAnswer


def read_refusal(status: int, body: object) -> FeedRefusal:
    """What a non-200 answer of the feed means (rule 5)."""
    fields = body if isinstance(body, dict) else {}
    match status:
        case 400 if fields.get("reason") == "invalid_position":
            return InvalidPosition()
        case 400:
            return InvalidFilter(str(fields.get("error", "invalid filter"))[:200])
        case 409:
            return FiltersChanged()
        case 410:
            after = fields.get("epoch_after_id")
            if isinstance(after, int) and not isinstance(after, bool) and after >= 0:
                return EpochPassed(after)
            return UnexpectedFeedAnswer(status)
        case _:
            return UnexpectedFeedAnswer(status)


def new_ids(page_ids: Iterable[int], known: Iterable[int]) -> tuple[int, ...]:
    """The ids of a page not in ``known``, in page order, each once (rule 6)."""
    seen = set(known)
    fresh: list[int] = []
    for event_id in page_ids:
        if event_id not in seen:
            seen.add(event_id)
            fresh.append(event_id)
    return tuple(fresh)
