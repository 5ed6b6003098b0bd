"""The agent's inbox of the stand-in: ``GET /{account}/inbox.json``.

Rules:
1. The inbox hears every event the feed records, braked or not
   (``shell.basecamp.standin.feed`` rule 9). An event addresses each person it mentions, each
   subscriber of what it is on, and each person an assignment adds, never its own performer;
   each (event, person, reason) is one item with its own increasing id.
2. Agents only: any other caller gets a bare 403, no body at all.
3. ``position`` (minted for this account, principal and filter set) wins; else ``since``:
   ``0``, ``now`` (the default) or an item id. The refusals are the feed's.
4. Filters: ``reasons`` (of ``REASONS``), ``types``, ``buckets``; malformed -> 400
   ``invalid_filter``.
5. An item older than ``retention`` is not served; a position behind it is a 410 whose
   ``resume`` is ``since=0`` (no epoch). Items of a project the caller no longer sees are
   dropped at read time.
6. A page is oldest first, at most ``page_size`` items, ``next`` only while more remain; the
   position moves past what the filters skipped."""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from urllib.parse import urlencode

from core.mentions import mentioned_person_ids
from shell.basecamp.standin.exchange import Incoming, JsonObject, Reply, error_reply, json_reply
from shell.basecamp.standin.feed import MAX_BUCKETS, BadFilter, Feed, StandinFeedEvent
from shell.basecamp.standin.positions import PositionSigner
from shell.basecamp.standin.representation import basecamp_time
from shell.basecamp.standin.store import Kind, Store
from shell.basecamp.standin.world import Person, World

FIRST_ADDRESSING_ID = 9_100_000_001
DEFAULT_INBOX_PAGE_SIZE = 100
RETENTION = timedelta(days=30)
REASONS = ("mentioned", "assigned", "subscribed", "watched", "pinged", "boosted")
FILTER_NAMES = ("reasons", "types", "buckets")
MESSAGE_KINDS = {"comment.created": Kind.comment, "chat.line.created": Kind.chat_line}


@dataclass(frozen=True, slots=True)
class Addressing:
    """One addressing of one person by one event, for one reason (rule 1)."""

    addressing_id: int
    person_id: int
    reason: str
    addressed_at: datetime
    event: StandinFeedEvent

    def to_json(self) -> JsonObject:
        return {
            "addressing_id": self.addressing_id,
            "reason": self.reason,
            "addressed_at": basecamp_time(self.addressed_at),
            "event": self.event.to_json(),
        }


@dataclass(frozen=True, slots=True)
class _Filters:
    reasons: frozenset[str]
    types: frozenset[str]
    buckets: frozenset[int]
    raw: tuple[tuple[str, str], ...]

    def digest(self) -> str:
        canonical = {
            "reasons": sorted(self.reasons),
            "types": sorted(self.types),
            "buckets": sorted(self.buckets),
        }
        return hashlib.sha256(json.dumps(canonical, sort_keys=True).encode()).hexdigest()

    def admit(self, item: Addressing) -> bool:
        return (
            (not self.reasons or item.reason in self.reasons)
            and (not self.types or item.event.event_type in self.types)
            and (not self.buckets or item.event.bucket_id in self.buckets)
        )


def _filters(query: Mapping[str, str]) -> _Filters:
    def items(name: str) -> frozenset[str]:
        return frozenset(item.strip() for item in query.get(name, "").split(",") if item.strip())

    reasons, buckets = items("reasons"), items("buckets")
    if not reasons <= set(REASONS):
        raise BadFilter(f"reasons are {', '.join(REASONS)}")
    if not all(bucket.isdigit() for bucket in buckets) or len(buckets) > MAX_BUCKETS:
        raise BadFilter(f"buckets are at most {MAX_BUCKETS} ids")
    raw = tuple((name, query[name]) for name in FILTER_NAMES if query.get(name))
    return _Filters(reasons, items("types"), frozenset(int(bucket) for bucket in buckets), raw)


class _Refused(Exception):
    def __init__(self, reply: Reply) -> None:
        super().__init__("refused")
        self.reply = reply


class Inbox:
    """Every person's addressed items, and the answers of ``inbox.json`` (rules above)."""

    def __init__(
        self, world: World, feed: Feed, store: Store, account_url: str, now: Callable[[], datetime]
    ) -> None:
        self._world = world
        self._feed = feed
        self._store = store
        self._account_url = account_url
        self._now = now
        self.page_size = DEFAULT_INBOX_PAGE_SIZE
        self.retention = RETENTION
        self.agents: set[int] = {world.agent.id}
        self._signer = PositionSigner()
        self._lock = threading.Lock()
        self._items: list[Addressing] = []
        self._next_id = FIRST_ADDRESSING_ID
        feed.listeners.append(self.hear)

    # -- addressing (rule 1) -------------------------------------------------------------------

    def hear(self, event: StandinFeedEvent) -> None:
        for person_id, reason in self._addressed(event):
            if person_id != event.performer_id:
                self.address(event, person_id, reason)

    def _addressed(self, event: StandinFeedEvent) -> list[tuple[int, str]]:
        kind = MESSAGE_KINDS.get(event.event_type)
        if kind is not None:
            message = self._store.message(kind, event.recording_id)
            if message is None:
                return []
            mentioned = [(person, "mentioned") for person in mentioned_person_ids(message.content)]
            subscribed = [
                (person, "subscribed") for person in sorted(self._store.subscribers(message.recording_id))
            ]
            return mentioned + subscribed
        if event.event_type.endswith(".assignment_changed") and event.details is not None:
            return [(int(person), "assigned") for person in event.details.get("added_person_ids", ())]
        return []

    def address(self, event: StandinFeedEvent, person_id: int, reason: str) -> Addressing:
        """Address ``person_id`` by ``event`` for ``reason`` now (a scene may add its own)."""
        if reason not in REASONS:
            raise ValueError(f"a reason is one of {', '.join(REASONS)}")
        with self._lock:
            item = Addressing(self._next_id, person_id, reason, self._now(), event)
            self._next_id += 1
            self._items.append(item)
            return item

    def items(self, person_id: int) -> list[Addressing]:
        with self._lock:
            return [item for item in self._items if item.person_id == person_id]

    # -- inbox.json ------------------------------------------------------------------------------

    def answer(self, request: Incoming, caller: Person) -> Reply:
        if caller.id not in self.agents:
            return Reply(403)  # rule 2: the agent guard's bare head :forbidden
        try:
            filters = _filters(request.query)
        except BadFilter as error:
            return error_reply(400, str(error), reason="invalid_filter")
        digest = filters.digest()
        visible = self._feed.visible_buckets(caller)
        with self._lock:
            retained = self._now() - self.retention
            try:
                after = self._start(request.query, caller, digest, retained)
            except _Refused as refused:
                return refused.reply
            mine = [
                item for item in self._items if item.person_id == caller.id and item.addressing_id > after
            ]
            kept = [item for item in mine if item.addressed_at >= retained]
            wanted = [item for item in kept if filters.admit(item) and item.event.bucket_id in visible]
        page, more = wanted[: self.page_size], len(wanted) > self.page_size
        last = page[-1].addressing_id if more else (mine[-1].addressing_id if mine else after)
        position = self._signer.mint({"a": self._world.account_id, "p": caller.id, "d": digest, "i": last})
        body: JsonObject = {"items": [item.to_json() for item in page], "position": position}
        if more:
            body["next"] = self._url({**dict(filters.raw), "position": position})
        return json_reply(200, body)

    def _start(self, query: Mapping[str, str], caller: Person, digest: str, retained: datetime) -> int:
        """The item id to serve after (rules 3 and 5); ``_Refused`` with the answer otherwise."""
        token = query.get("position")
        if token is not None:
            fields = self._signer.read(token)
            try:
                account, principal = int(fields["a"]), int(fields["p"])  # type: ignore[index]
                found, after = str(fields["d"]), int(fields["i"])  # type: ignore[index]
            except (TypeError, KeyError, ValueError):
                raise _Refused(
                    error_reply(400, "The position is not valid", reason="invalid_position")
                ) from None
            if account != self._world.account_id or principal != caller.id:
                raise _Refused(error_reply(400, "The position is not valid", reason="invalid_position"))
            if found != digest:
                raise _Refused(error_reply(409, "The position was minted for another filter set",
                                           filters_digest=digest, position_digest=found))  # fmt: skip
            if any(item.addressing_id > after and item.addressed_at < retained for item in self._items):
                resume = self._url(
                    {**{name: query[name] for name in FILTER_NAMES if query.get(name)}, "since": "0"}
                )
                raise _Refused(
                    error_reply(410, "The position fell behind the inbox's retention", resume=resume)
                )
            return after
        since = query.get("since", "now").strip()
        if since == "now":
            return self._items[-1].addressing_id if self._items else 0
        if not since.isdigit():
            raise _Refused(error_reply(400, "since is an item id, 0 or now", reason="invalid_since"))
        return int(since)

    def _url(self, query: Mapping[str, str]) -> str:
        return f"{self._account_url}/inbox.json?{urlencode(query)}"
