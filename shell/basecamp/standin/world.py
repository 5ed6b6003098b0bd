"""The world a stand-in serves -- one account, the agent and the people beside it, projects with
cards and a Campfire each -- and the store of what is posted in it later.

Every person has a random token of their own, so a test can post as someone else; ``account_id``
gives a world an account of its own, so two stand-ins on one machine serve different (account,
agent) pairs. Ids come from one increasing counter, carried on from the world's recordings. A
comment and a line are recordings too (they can be boosted); a boost is not. A message may be
hidden from listings until ``visible_at`` (the ``lag`` fault); read by its id it is found at once.
"""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import html
import itertools
import re
import secrets
import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from core.ids import MAX_ID

FIRST_RECORDING_ID = 1_069_479_000
WORLDS = ("demo", "empty")
CARD, CAMPFIRE, COMMENT = "Kanban::Card", "Chat::Transcript", "Comment"
TEXT_LINE, RICH_TEXT_LINE = "Chat::Lines::Text", "Chat::Lines::RichText"
NOT_COMMENTABLE = frozenset({COMMENT, CAMPFIRE, TEXT_LINE, RICH_TEXT_LINE})
FOLDERS = {CARD: "card_tables/cards", CAMPFIRE: "chats", COMMENT: "comments"}


@dataclass(frozen=True, slots=True)
class Person:
    id: int
    name: str
    email_address: str
    sgid: str
    token: str
    title: str = ""
    admin: bool = False
    owner: bool = False


@dataclass(frozen=True, slots=True)
class Recording:
    """Anything with an id in a project: a card, a Campfire, a comment, a Campfire line. A card
    placed later names its ``creator_id`` and ``content`` (the world's own are the operator's)."""

    id: int
    bucket_id: int
    type: str
    title: str
    parent_id: int | None = None
    creator_id: int | None = None
    content: str = ""

    @property
    def path(self) -> str:
        """Its resource's path in its bucket, without ``.json``."""
        if self.type.startswith("Chat::Lines::"):
            return f"chats/{self.parent_id}/lines/{self.id}"
        return f"{FOLDERS.get(self.type, 'recordings')}/{self.id}"


@dataclass(frozen=True, slots=True)
class Project:
    """A project (Basecamp's "bucket") with its cards and its Campfire."""

    id: int
    name: str
    recordings: tuple[Recording, ...]
    campfire: Recording

    @property
    def recording_ids(self) -> tuple[int, ...]:
        return tuple(recording.id for recording in self.recordings)

    @property
    def campfire_id(self) -> int:
        return self.campfire.id


@dataclass(frozen=True, slots=True)
class World:
    """The account as the stand-in serves it; ``people`` are those beside the agent, and the
    first of them, the account's owner, is the operator the agent works for."""

    account_id: int
    account_name: str
    agent: Person
    people: tuple[Person, ...]
    projects: tuple[Project, ...]

    @property
    def token(self) -> str:
        return self.agent.token

    @property
    def operator(self) -> Person:
        return self.people[0]

    @property
    def everyone(self) -> tuple[Person, ...]:
        return (self.agent, *self.people)

    def person(self, person_id: int) -> Person | None:
        return next((person for person in self.everyone if person.id == person_id), None)

    def person_with_token(self, token: str) -> Person | None:
        """Compared in constant time with every person's."""
        given = token.encode()
        found = [person for person in self.everyone if secrets.compare_digest(person.token.encode(), given)]
        return found[-1] if found else None

    def project(self, project_id: int) -> Project | None:
        return next((project for project in self.projects if project.id == project_id), None)


def person_sgid(person_id: int) -> str:
    """An attachable sgid that decodes (base64, before ``--``) to ``gid://bc3/Person/<id>``, as
    Basecamp's and a mention's do."""
    global_id = f"gid://bc3/Person/{person_id}?expires_in".encode()
    return f"{base64.b64encode(global_id).decode()}--{hashlib.sha256(global_id).hexdigest()[:40]}"


def build_world(name: str, make_token: Callable[[], str] | None = None,
                account_id: int | None = None) -> World:
    """``make_token``: a restart keeps its tokens."""
    if name not in WORLDS:
        raise ValueError(f"unknown world {name!r}: choose one of {', '.join(WORLDS)}")
    token = make_token or (lambda: secrets.token_urlsafe(24))
    ids = itertools.count(FIRST_RECORDING_ID)

    def person(person_id: int, name: str, *, title: str = "", owner: bool = False) -> Person:
        email = name.split(maxsplit=1)[0].lower() + "@standin.example"
        return Person(person_id, name, email, person_sgid(person_id), token(), title, owner, owner)

    def project(project_id: int, name: str, *card_titles: str) -> Project:
        cards = tuple(Recording(next(ids), project_id, CARD, title) for title in card_titles)
        return Project(project_id, name, cards, Recording(next(ids), project_id, CAMPFIRE, "Chat"))

    agent = person(1_049_715_901, "Claude Agent", title="Coding agent")
    ada = person(1_049_715_902, "Ada Lovelace", owner=True)
    if name == "empty":
        sandbox = project(2_085_958_501, "Sandbox", "A card")
        world = World(5_550_002, "Empty Account", agent, (ada,), (sandbox,))
    else:
        people = (ada, person(1_049_715_903, "Grace Hopper"))
        world = World(5_550_001, "Stand-in Studio", agent, people, (
            project(2_085_958_501, "Website Launch", "Fix the signup form", "Write the release notes"),
            project(2_085_958_502, "Mobile App", "Crash on the settings screen"),
            project(2_085_958_503, "Archive", "Old ideas"),
        ))  # fmt: skip
    if account_id is None:
        return world
    if isinstance(account_id, bool) or not 0 < account_id <= MAX_ID:
        raise ValueError(f"an account id is a positive id up to {MAX_ID}, not {account_id!r}")
    return dataclasses.replace(world, account_id=account_id)


class Kind(StrEnum):
    comment = "comment"
    boost = "boost"
    chat_line = "chat_line"

    def accepts(self, recording: Recording) -> bool:
        if self is Kind.comment:
            return recording.type not in NOT_COMMENTABLE
        if self is Kind.boost:
            return recording.type != CAMPFIRE
        return recording.type == CAMPFIRE


@dataclass(frozen=True, slots=True)
class Message:
    """A posted comment, boost or line; ``recording_id`` is the Campfire for a line."""

    kind: Kind
    id: int
    recording_id: int
    bucket_id: int
    creator_id: int
    content: str
    created_at: datetime
    visible_at: datetime


def plain_text(content: str) -> str:
    """Rich text without its markup: what Basecamp shows as a rich line's title."""
    return " ".join(html.unescape(re.sub(r"<[^>]*>", " ", content)).split())


class Store:
    """Messages, the recordings they are posted on, and the people joined to a recording (its
    ``subscribers``, a card's ``assignees``)."""

    def __init__(self, world: World) -> None:
        self._lock = threading.Lock()
        self._recordings = {recording.id: recording for project in world.projects
                            for recording in (*project.recordings, project.campfire)}
        self._ids = itertools.count(max(self._recordings, default=0) + 1)
        self._messages: dict[Kind, dict[int, Message]] = {kind: {} for kind in Kind}
        self._joined: dict[tuple[str, int], set[int]] = {}

    def join(self, relation: str, recording_id: int, person_id: int) -> None:
        with self._lock:
            self._joined.setdefault((relation, recording_id), set()).add(person_id)

    def joined(self, relation: str, recording_id: int) -> list[int]:
        with self._lock:
            return sorted(self._joined.get((relation, recording_id), ()))

    def recording(self, recording_id: int) -> Recording | None:
        with self._lock:
            return self._recordings.get(recording_id)

    def post(self, kind: Kind, on: Recording, creator_id: int, content: str, *, created_at: datetime,
             visible_at: datetime | None = None, rich_text: bool = False) -> Message:  # fmt: skip
        """Keep a new message on ``on``; the caller has checked ``kind.accepts(on)``."""
        line = (RICH_TEXT_LINE, plain_text(content)) if rich_text else (TEXT_LINE, content)
        shape = {Kind.comment: (COMMENT, f"Re: {on.title}"), Kind.chat_line: line}.get(kind)
        visible = visible_at or created_at
        with self._lock:
            message_id = next(self._ids)
            if shape is not None:
                self._recordings[message_id] = Recording(message_id, on.bucket_id, *shape, on.id)
            message = Message(kind, message_id, on.id, on.bucket_id, creator_id, content, created_at, visible)
            self._messages[kind][message_id] = message
            return message

    def add_card(self, bucket_id: int, title: str, creator_id: int, content: str) -> Recording:
        with self._lock:
            card = Recording(next(self._ids), bucket_id, CARD, title, creator_id=creator_id, content=content)
            self._recordings[card.id] = card
            return card

    def message(self, kind: Kind, message_id: int) -> Message | None:
        with self._lock:
            return self._messages[kind].get(message_id)

    def messages(self, kind: Kind, recording_id: int, visible_at: datetime | None = None) -> list[Message]:
        """Oldest first; only those visible at ``visible_at`` when it is given."""
        with self._lock:
            kept = list(self._messages[kind].values())
        found = [message for message in kept if message.recording_id == recording_id
                 and (visible_at is None or message.visible_at <= visible_at)]
        return sorted(found, key=lambda message: (message.created_at, message.id))
