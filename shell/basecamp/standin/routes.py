"""Which endpoint a request path names.

Rules:
1. Every route lives under ``/{account_id}/``; another account's path names nothing.
2. Each route answers in its flat form (``/ACCOUNT/recordings/1/comments.json``) and in its
   legacy bucket form (``/ACCOUNT/buckets/2/recordings/1/comments.json``), except
   ``my/profile``, ``chats`` (the account's Campfires), ``events`` (the account's event
   feed, ``shell.basecamp.standin.feed``), ``inbox`` (the agent's inbox,
   ``shell.basecamp.standin.inbox``) and ``events/stream_ticket`` (POST only: its live
   lane, ``shell.basecamp.standin.live_stream``) and ``projects`` (the caller's projects),
   which have no bucket form.
3. The ``.json`` suffix may be left off (the OpenAPI document's single-item paths have none).
4. Parsing is pure: it does not know whether the ids name anything.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum


class Endpoint(StrEnum):
    profile = "profile"
    comments = "comments"
    comment = "comment"
    boosts = "boosts"
    boost = "boost"
    chats = "chats"
    chat = "chat"
    lines = "lines"
    line = "line"
    events = "events"
    inbox = "inbox"
    stream_ticket = "stream_ticket"
    projects = "projects"
    card = "card"
    subscription = "subscription"
    recording_events = "recording_events"


COLLECTIONS = frozenset({Endpoint.comments, Endpoint.boosts, Endpoint.lines})
ACCOUNT_WIDE = frozenset(
    {
        Endpoint.profile,
        Endpoint.chats,
        Endpoint.events,
        Endpoint.inbox,
        Endpoint.stream_ticket,
        Endpoint.projects,
    }
)

_PATTERNS: tuple[tuple[Endpoint, re.Pattern[str]], ...] = tuple(
    (endpoint, re.compile(pattern + r"(?:\.json)?"))
    for endpoint, pattern in (
        (Endpoint.profile, r"my/profile"),
        (Endpoint.comments, r"recordings/(\d+)/comments"),
        (Endpoint.comment, r"comments/(\d+)"),
        (Endpoint.boosts, r"recordings/(\d+)/boosts"),
        (Endpoint.boost, r"boosts/(\d+)"),
        (Endpoint.chats, r"chats"),
        (Endpoint.chat, r"chats/(\d+)"),
        (Endpoint.lines, r"chats/(\d+)/lines"),
        (Endpoint.line, r"chats/(\d+)/lines/(\d+)"),
        (Endpoint.events, r"events"),
        (Endpoint.inbox, r"inbox"),
        (Endpoint.stream_ticket, r"events/stream_ticket"),
        (Endpoint.projects, r"projects"),
        (Endpoint.card, r"card_tables/cards/(\d+)"),
        (Endpoint.subscription, r"recordings/(\d+)/subscription"),
        (Endpoint.recording_events, r"recordings/(\d+)/events"),
    )
)
_ACCOUNT = re.compile(r"/(\d+)/(?:buckets/(\d+)/)?(.*)")


@dataclass(frozen=True, slots=True)
class EndpointMatch:
    """An endpoint and its ids. ``ids`` are the path's numbers in order: the recording or
    Campfire, then the line; or the single comment or boost."""

    endpoint: Endpoint
    bucket_id: int | None
    ids: tuple[int, ...]

    def methods(self) -> frozenset[str]:
        if self.endpoint is Endpoint.stream_ticket:
            return frozenset({"POST"})
        return frozenset({"GET", "POST"}) if self.endpoint in COLLECTIONS else frozenset({"GET"})


def parse_route(path: str, account_id: int) -> EndpointMatch | None:
    """The route ``path`` names in account ``account_id``, or None."""
    account = _ACCOUNT.fullmatch(path)
    if account is None or int(account.group(1)) != account_id:
        return None
    bucket = account.group(2)
    for endpoint, pattern in _PATTERNS:
        found = pattern.fullmatch(account.group(3))
        if found is None:
            continue
        if bucket is not None and endpoint in ACCOUNT_WIDE:
            return None
        ids = tuple(int(number) for number in found.groups())
        return EndpointMatch(endpoint, int(bucket) if bucket is not None else None, ids)
    return None
