"""The account event feed of the stand-in: ``GET /{account}/events.json``.

Rules:
1. Every comment and Campfire line kept (posted or seeded) appends a ``StandinFeedEvent``; a
   scene may append others. Ids come from the feed's own increasing counter.
2. Where to start: ``position`` wins; else ``since``: an id to start after, ``0`` for all
   history, or ``now`` (the default). A malformed one is a 400 ``invalid_since``.
3. Filters are comma-separated lists (``buckets``, ``types``, ``creators``, ``performers``,
   ``exclude_performers``, ``actor_types``); a malformed one is a 400 ``invalid_filter``. An
   event's performer is ``performed_by_id`` when set, else its creator.
4. The position is opaque signed JSON (account, filter digest, last id, epoch). One it did not
   mint, or another account's, is a 400 ``invalid_position``; another filter set's a 409; one
   from before ``begin_epoch`` a 410 with ``epoch_after_id`` and ``resume``.
5. A page is oldest first, at most ``page_size`` events, with ``next`` only while more remain;
   its position moves past events the filters skipped.
6. Only events at least ``delay`` seconds old are served, in id order: a younger one holds back
   every later one.
7. The live lane sees every event the moment it is recorded: the delay is the poll lane's alone.
8. The agent is a member of every project until ``withhold`` (again after ``grant``); a read
   serves only the caller's projects as they are then, and the cable snapshots them when it
   subscribes, as Basecamp's does.
9. An event recorded while ``brake_next`` has some to brake keeps its id but is served neither
   by ``events.json`` nor the live lane, as Basecamp's rate ceiling does; ``listeners`` (the
   inbox) hear every event."""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any
from urllib.parse import urlencode

from shell.basecamp.standin.bounds import seconds
from shell.basecamp.standin.exchange import Incoming, JsonObject, Reply, error_reply, json_reply
from shell.basecamp.standin.positions import PositionSigner
from shell.basecamp.standin.representation import basecamp_time
from shell.basecamp.standin.store import Kind, Message
from shell.basecamp.standin.world import Person, World

FIRST_EVENT_ID = 7_000_000_001
DEFAULT_FEED_PAGE_SIZE = 100
MAX_BUCKETS = 100
ACTOR_TYPES = frozenset({"agent", "person"})
FILTER_NAMES = ("buckets", "types", "creators", "performers", "exclude_performers", "actor_types")


@dataclass(frozen=True, slots=True)
class StandinFeedEvent:
    """One event of the feed (rule 1)."""

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
        return {
            "id": self.id,
            "kind": self.kind,
            "action": self.action,
            "event_type": self.event_type,
            "bucket_id": self.bucket_id,
            "creator_id": self.creator_id,
            "performed_by_id": self.performed_by_id,
            "recording_id": self.recording_id,
            "created_at": basecamp_time(self.created_at),
            "details": dict(self.details) if self.details is not None else None,
        }


class BadFilter(ValueError):
    """A filter the feed refuses (400 ``invalid_filter``)."""


@dataclass(frozen=True, slots=True)
class Filters:
    """The filters of one request, resolved (``self`` -> the caller's id) and canonical."""

    buckets: frozenset[int] = frozenset()
    types: frozenset[str] = frozenset()
    creators: frozenset[int] = frozenset()
    performers: frozenset[int] = frozenset()
    exclude_performers: frozenset[int] = frozenset()
    actor_types: frozenset[str] = frozenset()
    raw: tuple[tuple[str, str], ...] = field(default=(), compare=False)

    def digest(self) -> str:
        canonical = {
            "buckets": sorted(self.buckets),
            "types": sorted(self.types),
            "creators": sorted(self.creators),
            "performers": sorted(self.performers),
            "exclude_performers": sorted(self.exclude_performers),
            "actor_types": sorted(self.actor_types),
        }
        return hashlib.sha256(json.dumps(canonical, sort_keys=True).encode()).hexdigest()

    def admit(self, event: StandinFeedEvent, agent_id: int) -> bool:
        performer = event.performer_id
        actor = "agent" if performer == agent_id else "person"
        return (
            (not self.buckets or event.bucket_id in self.buckets)
            and (not self.types or event.event_type in self.types)
            and (not self.creators or event.creator_id in self.creators)
            and (not self.performers or performer in self.performers)
            and performer not in self.exclude_performers
            and (not self.actor_types or actor in self.actor_types)
        )


def _items(query: Mapping[str, str], name: str) -> list[str]:
    return [item.strip() for item in query.get(name, "").split(",") if item.strip()]


def _ids(query: Mapping[str, str], name: str, caller: Person | None = None) -> frozenset[int]:
    found: set[int] = set()
    for item in _items(query, name):
        if item == "self" and caller is not None:
            found.add(caller.id)
        elif item.isdigit():
            found.add(int(item))
        else:
            raise BadFilter(f"{name} takes ids, not {item!r}")
    return frozenset(found)


def parse_filters(query: Mapping[str, str], caller: Person) -> Filters:
    """The request's filters (rule 3); ``BadFilter`` when one is malformed."""
    buckets = _ids(query, "buckets")
    if len(buckets) > MAX_BUCKETS:
        raise BadFilter(f"at most {MAX_BUCKETS} buckets")
    actor_types = frozenset(_items(query, "actor_types"))
    if not actor_types <= ACTOR_TYPES:
        raise BadFilter("actor_types are agent and person")
    return Filters(
        buckets=buckets,
        types=frozenset(_items(query, "types")),
        creators=_ids(query, "creators"),
        performers=_ids(query, "performers", caller),
        exclude_performers=_ids(query, "exclude_performers", caller),
        actor_types=actor_types,
        raw=tuple((name, query[name]) for name in FILTER_NAMES if query.get(name)),
    )


@dataclass(frozen=True, slots=True)
class _Position:
    account_id: int
    digest: str
    after: int
    epoch: int


class _PositionRefused(Exception):
    def __init__(self, reply: Reply) -> None:
        super().__init__("position refused")
        self.reply = reply


class Feed:
    """The account's events, and the answers of ``events.json``."""

    def __init__(
        self,
        world: World,
        account_url: str,
        now: Callable[[], datetime],
        *,
        page_size: int = DEFAULT_FEED_PAGE_SIZE,
        delay: float = 0.0,
    ) -> None:
        if page_size < 1:
            raise ValueError(f"a feed page holds at least one event, not {page_size}")
        delay = seconds(delay, "the feed's delay")
        self._world = world
        self._account_url = account_url
        self._now = now
        self.page_size = page_size
        self.delay = delay
        self._signer = PositionSigner()
        self._lock = threading.Lock()
        self._recorded = threading.Condition(self._lock)
        self._events: list[StandinFeedEvent] = []
        self._next_id = FIRST_EVENT_ID
        self._epoch = 0
        self._epoch_after_id = 0
        self._withheld: set[int] = set()
        self._braked: set[int] = set()
        self._braking = 0
        self.listeners: list[Callable[[StandinFeedEvent], None]] = []

    # -- what happens ------------------------------------------------------------------------

    def record(
        self,
        event_type: str,
        *,
        bucket_id: int,
        creator_id: int,
        recording_id: int,
        created_at: datetime,
        performed_by_id: int | None = None,
        details: Mapping[str, Any] | None = None,
    ) -> StandinFeedEvent:
        """Append an event; ``kind`` and ``action`` come from ``event_type`` (``a.b.action``)."""
        kind, _, action = event_type.rpartition(".")
        with self._lock:
            event = StandinFeedEvent(
                id=self._next_id,
                kind=kind.replace(".", "_"),
                action=action,
                event_type=event_type,
                bucket_id=bucket_id,
                creator_id=creator_id,
                recording_id=recording_id,
                created_at=created_at,
                performed_by_id=performed_by_id,
                details=details,
            )
            self._next_id += 1
            self._events.append(event)
            if self._braking:
                self._braking -= 1
                self._braked.add(event.id)
            self._recorded.notify_all()
        for listener in self.listeners:
            listener(event)
        return event

    def brake_next(self, count: int = 1) -> None:
        """The next ``count`` events recorded are braked (rule 9)."""
        if count < 0:
            raise ValueError(f"a count of events is not negative: {count}")
        with self._lock:
            self._braking += count

    def braked(self, event_id: int) -> bool:
        with self._lock:
            return event_id in self._braked

    def record_message(self, message: Message) -> StandinFeedEvent | None:
        """The event a kept message makes (rule 1); None for a boost (no event)."""
        event_types = {Kind.comment: "comment.created", Kind.chat_line: "chat.line.created"}
        event_type = event_types.get(message.kind)
        if event_type is None:
            return None
        return self.record(
            event_type,
            bucket_id=message.bucket_id,
            creator_id=message.creator_id,
            recording_id=message.id,
            created_at=message.created_at,
            details={"parent_recording_id": message.recording_id},
        )

    def events(self) -> list[StandinFeedEvent]:
        with self._lock:
            return list(self._events)

    def withhold(self, project_id: int) -> None:
        """The agent is no member of ``project_id`` (rule 8)."""
        with self._lock:
            self._withheld.add(project_id)

    def grant(self, project_id: int) -> None:
        with self._lock:
            self._withheld.discard(project_id)

    def visible_buckets(self, person: Person) -> frozenset[int]:
        """The projects ``person`` is a member of, now (rule 8)."""
        with self._lock:
            return self._visible_now(person)

    def newest_id(self) -> int:
        with self._lock:
            return self._newest_id()

    def wait_after(self, after: int, timeout: float) -> list[StandinFeedEvent]:
        """The events after id ``after`` at once, without the poll lane's delay (rule 7);
        when there is none yet, waits up to ``timeout`` seconds for one to be recorded."""
        with self._recorded:
            served = self._served_after(after)
            if not served:
                self._recorded.wait(max(0.0, timeout))
                served = self._served_after(after)
            return served

    def _served_after(self, after: int) -> list[StandinFeedEvent]:
        return [event for event in self._events if event.id > after and event.id not in self._braked]

    def event_about(self, recording_id: int) -> StandinFeedEvent | None:
        """The latest event whose recording is ``recording_id``."""
        with self._lock:
            return next(
                (event for event in reversed(self._events) if event.recording_id == recording_id), None
            )

    def begin_epoch(self, epoch_after_id: int | None = None) -> int:
        """Start a new epoch: every position minted before answers 410 with
        ``epoch_after_id`` (default: the newest event's id). Returns it."""
        with self._lock:
            after = epoch_after_id if epoch_after_id is not None else self._newest_id()
            self._epoch += 1
            self._epoch_after_id = after
            return after

    # -- events.json -----------------------------------------------------------------------------

    def answer(self, request: Incoming, caller: Person) -> Reply:
        try:
            filters = parse_filters(request.query, caller)
        except BadFilter as error:
            return error_reply(400, str(error), reason="invalid_filter")
        digest = filters.digest()
        with self._lock:
            try:
                after = self._start(request.query, digest)
            except _PositionRefused as refused:
                if refused.reply.status == 410:
                    return self._gone(filters)
                return refused.reply
            except ValueError:
                return error_reply(400, "since is an event id, 0 or now", reason="invalid_since")
            return self._page(filters, digest, after, self._visible_now(caller))

    def _visible_now(self, caller: Person) -> frozenset[int]:
        every = {project.id for project in self._world.projects}
        return frozenset(every - (self._withheld if caller.id == self._world.agent.id else set()))

    def _newest_id(self) -> int:
        return self._events[-1].id if self._events else 0

    def _start(self, query: Mapping[str, str], digest: str) -> int:
        position = query.get("position")
        if position is not None:
            found = self._read_position(position)
            if found.digest != digest:
                raise _PositionRefused(
                    error_reply(
                        409,
                        "The position was minted for another filter set",
                        filters_digest=digest,
                        position_digest=found.digest,
                    )
                )
            if found.epoch < self._epoch:
                raise _PositionRefused(Reply(410))
            return found.after
        since = query.get("since", "now").strip()
        if since == "now":
            return self._newest_id()
        if not since.isdigit():
            raise ValueError(since)
        return int(since)

    def _page(self, filters: Filters, digest: str, after: int, visible: frozenset[int]) -> Reply:
        agent_id = self._world.agent.id
        cutoff = self._now() - timedelta(seconds=self.delay)
        ready: list[StandinFeedEvent] = []
        for event in self._events:
            if event.id <= after or event.id in self._braked:
                continue
            if event.created_at > cutoff:
                break  # rule 6: a younger event holds back every later one
            ready.append(event)
        admitted = [event for event in ready if filters.admit(event, agent_id) and event.bucket_id in visible]
        page = admitted[: self.page_size]
        more = len(admitted) > self.page_size
        # rule 5: a last page moves past what the filters skipped
        last = page[-1].id if more else (ready[-1].id if ready else after)
        position = self._mint(_Position(self._world.account_id, digest, last, self._epoch))
        body: JsonObject = {"events": [event.to_json() for event in page], "position": position}
        if more:
            body["next"] = self._url({**dict(filters.raw), "position": position})
        return json_reply(200, body)

    def _gone(self, filters: Filters) -> Reply:
        resume = self._url({**dict(filters.raw), "since": str(self._epoch_after_id)})
        return error_reply(
            410,
            "The position predates the feed's epoch",
            epoch_after_id=self._epoch_after_id,
            resume=resume,
        )

    def _url(self, query: Mapping[str, str]) -> str:
        return f"{self._account_url}/events.json?{urlencode(query)}"

    # -- positions (rule 4) ----------------------------------------------------------------------

    def _mint(self, position: _Position) -> str:
        return self._signer.mint(
            {"a": position.account_id, "d": position.digest, "i": position.after, "e": position.epoch}
        )

    def _read_position(self, token: str) -> _Position:
        invalid = _PositionRefused(error_reply(400, "The position is not valid", reason="invalid_position"))
        fields = self._signer.read(token)
        if fields is None:
            raise invalid
        try:
            position = _Position(int(fields["a"]), str(fields["d"]), int(fields["i"]), int(fields["e"]))
        except (ValueError, KeyError, TypeError):
            raise invalid from None
        if position.account_id != self._world.account_id:
            raise invalid
        return position
