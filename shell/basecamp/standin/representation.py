"""The JSON the stand-in answers with: people, comments, boosts, Campfires and their lines.

Rules:
1. Shapes follow Basecamp's OpenAPI document (``Person``, ``Comment``, ``Boost``,
   ``CampfireLine``, ``Campfire``): every required field is present, every value has the
   declared type (a string is never ``null``).
2. Times are ISO-8601 UTC with milliseconds: ``2026-03-23T22:24:02.130Z``.
3. A comment's title is ``Re: <parent title>``; a line's is its text (without markup when it
   is rich text); its ``type`` says which (``Chat::Lines::Text``/``Chat::Lines::RichText``).
4. A listed boost has ``id, content, created_at, booster``; a boost read alone or just
   created also carries the ``recording`` it boosts.
5. Boost counts count the boosts a listing would show.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from shell.basecamp.standin.exchange import JsonObject
from shell.basecamp.standin.store import Kind, Message, Store
from shell.basecamp.standin.urls import Urls
from shell.basecamp.standin.world import Person, Recording, World

if TYPE_CHECKING:  # feed imports this module for basecamp_time
    from shell.basecamp.standin.feed import StandinFeedEvent

WORLD_CREATED_AT = "2026-01-05T09:00:00.000Z"


def basecamp_time(moment: datetime) -> str:
    """``2026-03-23T22:24:02.130Z``: UTC, milliseconds, a ``Z``."""
    if moment.tzinfo is None:
        raise ValueError("a naive datetime has no zone; Basecamp times are UTC")
    utc = moment.astimezone(UTC)
    return utc.strftime("%Y-%m-%dT%H:%M:%S.") + f"{utc.microsecond // 1000:03d}Z"


class Renderer:
    """Turns the world and the store's messages into Basecamp's JSON."""

    def __init__(self, world: World, store: Store, urls: Urls, now: Callable[[], datetime]) -> None:
        self._world = world
        self._store = store
        self._urls = urls
        self._now = now

    def person(self, person: Person) -> JsonObject:
        return {
            "id": person.id,
            "attachable_sgid": person.sgid,
            "name": person.name,
            "email_address": person.email_address,
            "personable_type": "User",
            "title": person.title,
            "bio": "",
            "location": "",
            "created_at": WORLD_CREATED_AT,
            "updated_at": WORLD_CREATED_AT,
            "admin": person.admin,
            "owner": person.owner,
            "client": False,
            "employee": True,
            "time_zone": "Etc/UTC",
            "avatar_url": self._urls.avatar(person.id),
            "company": {"id": 1_033_447_001, "name": self._world.account_name},
            "can_ping": True,
            "can_manage_projects": person.admin,
            "can_manage_people": person.admin,
            "can_access_timesheet": person.admin,
            "can_access_hill_charts": True,
        }

    def comment(self, message: Message) -> JsonObject:
        recording, parent = self._recording_and_parent(message.id)
        return {
            **self._envelope(recording, parent, message),
            "content": message.content,
            "content_attachments": [],
        }

    def line(self, message: Message) -> JsonObject:
        recording, parent = self._recording_and_parent(message.id)
        return {**self._envelope(recording, parent, message), "content": message.content}

    def boost(self, message: Message, *, with_recording: bool) -> JsonObject:
        shown: JsonObject = {
            "id": message.id,
            "content": message.content,
            "created_at": basecamp_time(message.created_at),
            "booster": self._creator(message.creator_id),
        }
        if with_recording:
            recording = self._recording(message.recording_id)
            parent = self._store.recording(recording.parent_id) if recording.parent_id else None
            shown["recording"] = self.parent(recording, parent)
        return shown

    def campfire(self, campfire: Recording) -> JsonObject:
        return {
            "id": campfire.id,
            "status": "active",
            "visible_to_clients": False,
            "created_at": WORLD_CREATED_AT,
            "updated_at": WORLD_CREATED_AT,
            "title": campfire.title,
            "inherits_status": True,
            "type": campfire.type,
            "url": self._urls.api(campfire),
            "app_url": self._urls.app(campfire),
            "position": 1,
            "bucket": self.bucket(campfire.bucket_id),
            "creator": self.person(self._owner()),
            "topic": campfire.title,
            "lines_url": self._urls.lines(campfire),
            "files_url": self._urls.files(campfire),
        }

    def card(self, card: Recording) -> JsonObject:
        """A card (``Card``): it was made by the account's owner when the world began."""
        assignees = [self._creator(person_id) for person_id in sorted(self._store.assignees(card.id))]
        comments = self._store.messages(Kind.comment, card.id)
        boosts = self._store.messages(Kind.boost, card.id, self._now())
        column = f"{self._urls.account_url}/buckets/{card.bucket_id}/card_tables/columns/{card.bucket_id}"
        return {
            "id": card.id,
            "status": "active",
            "visible_to_clients": False,
            "created_at": WORLD_CREATED_AT,
            "updated_at": WORLD_CREATED_AT,
            "title": card.title,
            "inherits_status": True,
            "type": card.type,
            "url": self._urls.api(card),
            "app_url": self._urls.app(card),
            "subscription_url": self._urls.subscription(card),
            "position": 1,
            "content": "",
            "description": "",
            "description_attachments": [],
            "due_on": None,
            "completed": False,
            "comments_count": len(comments),
            "comments_url": f"{self._urls.api(card).removesuffix('.json')}/comments.json",
            "parent": {
                "id": card.bucket_id,
                "title": "Card Table",
                "type": "Kanban::Column",
                "url": f"{column}.json",
                "app_url": column,
            },
            "bucket": self.bucket(card.bucket_id),
            "creator": self.person(self._owner()),
            "assignees": assignees,
            "completion_subscribers": [],
            "steps": [],
            "boosts_count": len(boosts),
            "boosts_url": self._urls.boosts(card),
        }

    def subscription(self, recording: Recording, viewer: Person) -> JsonObject:
        """``Subscription``: whether the viewer is subscribed, and who is."""
        subscribers = sorted(self._store.subscribers(recording.id))
        return {
            "subscribed": viewer.id in subscribers,
            "count": len(subscribers),
            "url": self._urls.subscription(recording),
            "subscribers": [self._creator(person_id) for person_id in subscribers],
        }

    def recording_event(self, event: StandinFeedEvent) -> JsonObject:
        """``Event``: one entry of a recording's events."""
        return {
            "id": event.id,
            "recording_id": event.recording_id,
            "action": event.action,
            "details": dict(event.details or {}),
            "created_at": basecamp_time(event.created_at),
            "creator": self._creator(event.creator_id),
        }

    def message(self, message: Message, *, alone: bool = True) -> JsonObject:
        """Any message, as a single read of it answers (``alone``) or as a listing shows it."""
        if message.kind is Kind.comment:
            return self.comment(message)
        if message.kind is Kind.chat_line:
            return self.line(message)
        return self.boost(message, with_recording=alone)

    def parent(self, recording: Recording, parent: Recording | None = None) -> JsonObject:
        return {
            "id": recording.id,
            "title": recording.title,
            "type": recording.type,
            "url": self._urls.api(recording),
            "app_url": self._urls.app(recording, parent),
        }

    def bucket(self, bucket_id: int) -> JsonObject:
        project = self._world.project(bucket_id)
        return {"id": bucket_id, "name": project.name if project else "", "type": "Project"}

    def _envelope(self, recording: Recording, parent: Recording, message: Message) -> JsonObject:
        stamp = basecamp_time(message.created_at)
        grandparent = self._store.recording(parent.parent_id) if parent.parent_id else None
        boosts = self._store.messages(Kind.boost, recording.id, self._now())
        return {
            "id": recording.id,
            "status": "active",
            "visible_to_clients": False,
            "created_at": stamp,
            "updated_at": stamp,
            "title": recording.title,
            "inherits_status": True,
            "type": recording.type,
            "url": self._urls.api(recording),
            "app_url": self._urls.app(recording, parent),
            "boosts_count": len(boosts),
            "boosts_url": self._urls.boosts(recording),
            "parent": self.parent(parent, grandparent),
            "bucket": self.bucket(recording.bucket_id),
            "creator": self._creator(message.creator_id),
        }

    def _owner(self) -> Person:
        return next((person for person in self._world.everyone if person.owner), self._world.agent)

    def _creator(self, person_id: int) -> JsonObject:
        person = self._world.person(person_id)
        if person is None:
            raise LookupError(f"no person {person_id} in the world")
        return self.person(person)

    def _recording(self, recording_id: int) -> Recording:
        recording = self._store.recording(recording_id)
        if recording is None:
            raise LookupError(f"no recording {recording_id} in the store")
        return recording

    def _recording_and_parent(self, recording_id: int) -> tuple[Recording, Recording]:
        recording = self._recording(recording_id)
        if recording.parent_id is None:
            raise LookupError(f"recording {recording_id} has no parent")
        return recording, self._recording(recording.parent_id)
