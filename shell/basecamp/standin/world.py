"""The world a stand-in serves: one account, its people and their tokens, its projects.

Rules:
1. A world is a value built once when the stand-in starts; what people post later lives in the
   store (``shell.basecamp.standin.store``).
2. ``demo``: the agent, two other people, three projects with cards and a Campfire each (the
   third meant to have no route). ``empty``: the agent, one other person, one project with one
   card and one Campfire.
3. Every person has a fresh random token of their own, so a test can post as someone else.
4. Recording ids are large integers from one counter starting at ``FIRST_RECORDING_ID``, which
   the store carries on.
5. ``account_id`` gives a world an account of its own (``bin/connect standin --account``), so two
   people trying the stand-in on one machine serve different pairs (``shell.state.pair_lock``).
6. A person's ``sgid`` decodes (base64, before ``--``) to ``gid://bc3/Person/<id>``, as a
   mention's does."""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import itertools
import secrets
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from core.ids import MAX_ID

FIRST_RECORDING_ID = 1_069_479_000
WORLDS = ("demo", "empty")

CARD = "Kanban::Card"
CAMPFIRE = "Chat::Transcript"
COMMENT = "Comment"
TEXT_LINE = "Chat::Lines::Text"
RICH_TEXT_LINE = "Chat::Lines::RichText"


@dataclass(frozen=True, slots=True)
class Person:
    """Someone in the account, with the bearer token that acts as them."""

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
    """Anything with an id in a project: a card, a Campfire, a comment, a Campfire line."""

    id: int
    bucket_id: int
    type: str
    title: str
    parent_id: int | None = None


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
    """The account as the stand-in serves it. ``people`` are the people other than the agent."""

    name: str
    account_id: int
    account_name: str
    agent: Person
    people: tuple[Person, ...]
    projects: tuple[Project, ...]

    @property
    def token(self) -> str:
        """The agent's token: what the connector authenticates with."""
        return self.agent.token

    @property
    def operator(self) -> Person:
        """The person the agent works for: the account's owner, the first of ``people``
        (``setup --operator`` names them; a mention posted through the control API is theirs)."""
        return self.people[0]

    @property
    def everyone(self) -> tuple[Person, ...]:
        return (self.agent, *self.people)

    def person(self, person_id: int) -> Person | None:
        return next((person for person in self.everyone if person.id == person_id), None)

    def person_with_token(self, token: str) -> Person | None:
        """The person a bearer token acts as, compared in constant time."""
        found = None
        for person in self.everyone:
            if secrets.compare_digest(person.token.encode(), token.encode()):
                found = person
        return found

    def project(self, project_id: int) -> Project | None:
        return next((project for project in self.projects if project.id == project_id), None)

    def recordings(self) -> tuple[Recording, ...]:
        """Every recording the world starts with: cards, then Campfires, project by project."""
        return tuple(
            recording for project in self.projects for recording in (*project.recordings, project.campfire)
        )


def person_sgid(person_id: int) -> str:
    """An attachable sgid that decodes to the person's global id, like Basecamp's."""
    global_id = f"gid://bc3/Person/{person_id}?expires_in".encode()
    digest = hashlib.sha256(global_id).hexdigest()[:40]
    return f"{base64.b64encode(global_id).decode()}--{digest}"


def build_world(
    name: str, make_token: Callable[[], str] | None = None, account_id: int | None = None
) -> World:
    """The world called ``name`` (one of ``WORLDS``); ``account_id``: rule 5."""
    token = make_token or (lambda: secrets.token_urlsafe(24))
    ids = itertools.count(FIRST_RECORDING_ID)
    if name == "demo":
        world = _demo(token, ids)
    elif name == "empty":
        world = _empty(token, ids)
    else:
        raise ValueError(f"unknown world {name!r}: choose one of {', '.join(WORLDS)}")
    if account_id is None:
        return world
    if isinstance(account_id, bool) or not 0 < account_id <= MAX_ID:
        raise ValueError(f"an account id is a positive id up to {MAX_ID}, not {account_id!r}")
    return dataclasses.replace(world, account_id=account_id)


def _person(
    person_id: int, name: str, token: Callable[[], str], *, title: str = "", owner: bool = False
) -> Person:
    email = name.split(maxsplit=1)[0].lower() + "@standin.example"
    return Person(
        id=person_id,
        name=name,
        email_address=email,
        sgid=person_sgid(person_id),
        token=token(),
        title=title,
        admin=owner,
        owner=owner,
    )


def _project(project_id: int, name: str, card_titles: tuple[str, ...], ids: Iterator[int]) -> Project:
    cards = tuple(Recording(next(ids), project_id, CARD, title) for title in card_titles)
    return Project(project_id, name, cards, Recording(next(ids), project_id, CAMPFIRE, "Chat"))


def _demo(token: Callable[[], str], ids: Iterator[int]) -> World:
    return World(
        name="demo",
        account_id=5_550_001,
        account_name="Stand-in Studio",
        agent=_person(1_049_715_901, "Claude Agent", token, title="Coding agent"),
        people=(
            _person(1_049_715_902, "Ada Lovelace", token, owner=True),
            _person(1_049_715_903, "Grace Hopper", token),
        ),
        projects=(
            _project(
                2_085_958_501,
                "Website Launch",
                ("Fix the signup form", "Write the release notes"),
                ids,
            ),
            _project(2_085_958_502, "Mobile App", ("Crash on the settings screen",), ids),
            _project(2_085_958_503, "Archive", ("Old ideas",), ids),
        ),
    )


def _empty(token: Callable[[], str], ids: Iterator[int]) -> World:
    return World(
        name="empty",
        account_id=5_550_002,
        account_name="Empty Account",
        agent=_person(1_049_715_901, "Claude Agent", token, title="Coding agent"),
        people=(_person(1_049_715_902, "Ada Lovelace", token, owner=True),),
        projects=(_project(2_085_958_501, "Sandbox", ("A card",), ids),),
    )
