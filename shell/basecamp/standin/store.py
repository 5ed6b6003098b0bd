"""What people post to the stand-in: comments, boosts and Campfire lines, kept in memory.

Rules:
1. One lock guards everything; every method is safe from any handler thread.
2. Ids come from one increasing counter shared by every kind, carried on from the world's
   recordings, so an id names one thing and a later thing has a larger id.
3. A comment and a Campfire line are recordings too (they can be boosted); a boost is not.
4. Where each kind may be posted: a comment on a commentable recording (a card, a message,
   a to-do...; never a comment, a Campfire or a line), a boost on any recording but a
   Campfire, a Campfire line in a Campfire.
5. A message may be hidden from listings until ``visible_at`` (the ``lag`` fault); reading
   it by id finds it regardless.
6. Listings are oldest first: by ``created_at``, then by id.
"""

from __future__ import annotations

import html
import re
import threading
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from shell.basecamp.standin.world import (
    CAMPFIRE,
    COMMENT,
    RICH_TEXT_LINE,
    TEXT_LINE,
    Recording,
    World,
)

NOT_COMMENTABLE = frozenset({COMMENT, CAMPFIRE, TEXT_LINE, RICH_TEXT_LINE})


class Kind(StrEnum):
    """The kinds of message the stand-in keeps."""

    comment = "comment"
    boost = "boost"
    chat_line = "chat_line"


@dataclass(frozen=True, slots=True)
class Message:
    """A posted comment, boost or line. ``recording_id`` is the Campfire for a line."""

    kind: Kind
    id: int
    recording_id: int
    bucket_id: int
    creator_id: int
    content: str
    created_at: datetime
    visible_at: datetime
    rich_text: bool = False


def accepts(kind: Kind, recording: Recording) -> bool:
    """Whether a message of ``kind`` may be posted on ``recording`` (rule 4)."""
    if kind is Kind.comment:
        return recording.type not in NOT_COMMENTABLE
    if kind is Kind.boost:
        return recording.type != CAMPFIRE
    return recording.type == CAMPFIRE


def plain_text(content: str) -> str:
    """Rich text without its markup: what Basecamp shows as a rich line's title."""
    return " ".join(html.unescape(re.sub(r"<[^>]*>", " ", content)).split())


class Store:
    """Messages and the recordings they are posted on."""

    def __init__(self, world: World) -> None:
        self._lock = threading.Lock()
        self._recordings = {recording.id: recording for recording in world.recordings()}
        self._next_id = max(self._recordings, default=0) + 1
        self._messages: dict[Kind, dict[int, Message]] = {kind: {} for kind in Kind}
        self._subscribers: dict[int, set[int]] = {}
        self._assignees: dict[int, set[int]] = {}

    def subscribe(self, person_id: int, recording_id: int) -> None:
        """``person_id`` is subscribed to ``recording_id`` from now on."""
        with self._lock:
            self._subscribers.setdefault(recording_id, set()).add(person_id)

    def subscribers(self, recording_id: int) -> frozenset[int]:
        with self._lock:
            return frozenset(self._subscribers.get(recording_id, ()))

    def assign(self, recording_id: int, added: set[int], removed: set[int]) -> None:
        """Change who is assigned to ``recording_id``."""
        with self._lock:
            current = self._assignees.setdefault(recording_id, set())
            current |= added
            current -= removed

    def assignees(self, recording_id: int) -> frozenset[int]:
        with self._lock:
            return frozenset(self._assignees.get(recording_id, ()))

    def recording(self, recording_id: int) -> Recording | None:
        with self._lock:
            return self._recordings.get(recording_id)

    def post(
        self,
        kind: Kind,
        on: Recording,
        creator_id: int,
        content: str,
        *,
        created_at: datetime,
        visible_at: datetime | None = None,
        rich_text: bool = False,
    ) -> Message:
        """Keep a new message on ``on``; the caller has checked ``accepts(kind, on)``."""
        with self._lock:
            message = Message(
                kind=kind,
                id=self._next_id,
                recording_id=on.id,
                bucket_id=on.bucket_id,
                creator_id=creator_id,
                content=content,
                created_at=created_at,
                visible_at=visible_at or created_at,
                rich_text=rich_text,
            )
            self._next_id += 1
            self._messages[kind][message.id] = message
            if kind is Kind.comment:
                title = f"Re: {on.title}"
                self._recordings[message.id] = Recording(message.id, on.bucket_id, COMMENT, title, on.id)
            elif kind is Kind.chat_line:
                line_type = RICH_TEXT_LINE if rich_text else TEXT_LINE
                title = plain_text(content) if rich_text else content
                self._recordings[message.id] = Recording(message.id, on.bucket_id, line_type, title, on.id)
            return message

    def message(self, kind: Kind, message_id: int) -> Message | None:
        with self._lock:
            return self._messages[kind].get(message_id)

    def messages(self, kind: Kind, recording_id: int, visible_at: datetime | None = None) -> list[Message]:
        """Messages of ``kind`` on a recording, oldest first; only those visible at
        ``visible_at`` when it is given."""
        with self._lock:
            found = [
                message
                for message in self._messages[kind].values()
                if message.recording_id == recording_id
                and (visible_at is None or message.visible_at <= visible_at)
            ]
        return sorted(found, key=lambda message: (message.created_at, message.id))
