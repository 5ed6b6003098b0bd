"""Admission's reads: the recording summary a verdict is decided from, and one message read alone,
for a person's check of a receipt (``core.adoption.check_receipt``). What is read follows the event's type:
the recording, the agent's subscription where it matters, for an assignment the people this event
added (None without its details), and for a comment its parent's creator, whose title a comment's
is (None when the parent's type has no typed read or its read failed). Every read is the client's
(paced, retried, within the deadline), and what Basecamp answers never raises here: it is a
``ReadFailure`` whose kind says whether waiting helps (``not_found``, ``forbidden`` and
``unauthorized`` end at once; a 429 or 503 the retries could not outlast is ``throttled``, with
when to try again). Content is carried in the summary, never logged."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import replace
from datetime import timedelta
from typing import Any, TypeVar

from core.admission import (
    CHAT_LINE_CREATED,
    COMMENT_CREATED,
    Author,
    ReadFailure,
    ReadFailureKind,
    RecordingStatus,
    RecordingSummary,
    mentioned_in,
)
from core.adoption import ReadMessage
from core.destinations import Destination, MessageKind
from core.timestamps import parse_timestamp
from shell.basecamp.client import BasecampClient
from shell.basecamp.errors import ListingFailed
from shell.basecamp.wire import Answer
from shell.clock import Clock, SystemClock

CAMPFIRE_TYPE = "Chat::Transcript"
_FALLBACK_THROTTLE_SECONDS = 60.0
_TYPED_PATHS: Mapping[str, str] = {"card": "card_tables/cards", "todo": "todos", "message": "messages"}
_PATHS_BY_TYPE: Mapping[str, str] = {  # a comment's parent, by the type its ``parent`` names
    "Kanban::Card": _TYPED_PATHS["card"], "Todo": _TYPED_PATHS["todo"], "Message": _TYPED_PATHS["message"],
}
_STATUSES: Mapping[str, RecordingStatus] = {
    "active": RecordingStatus.active,
    "archived": RecordingStatus.active,  # archived is still the recording a person wrote
    "drafted": RecordingStatus.drafted,
    "trashed": RecordingStatus.trashed,
}


class _Failed(Exception):  # caught at the public methods' edge
    def __init__(self, failure: ReadFailure) -> None:
        super().__init__(str(failure.kind))
        self.failure = failure


JsonObject = dict[str, Any]
Body = TypeVar("Body")


class SummaryReads:
    def __init__(self, client: BasecampClient, agent_id: int, clock: Clock | None = None) -> None:
        self._client = client
        self._agent_id = agent_id
        self._clock: Clock = clock or SystemClock()

    def deadline_in(self, seconds: float) -> float:
        return self._client.deadline_in(seconds)

    def summary(self, bucket_id: int, recording_id: int, event_type: str, deadline: float, *,
                event_id: int | None = None) -> RecordingSummary | ReadFailure:
        try:
            return self._summary(bucket_id, recording_id, event_type, deadline, event_id)
        except _Failed as failed:
            return failed.failure

    def _summary(self, bucket_id: int, recording_id: int, event_type: str, deadline: float,
                 event_id: int | None) -> RecordingSummary:
        kind, _, action = event_type.rpartition(".")
        if event_type == COMMENT_CREATED:
            summary = _summarize(self._answer(f"comments/{recording_id}", deadline, dict), bucket_id)
            if summary.parent_id is not None and summary.parent_id > 0:
                parent = summary.parent_id
                summary = replace(summary, subscribed=self._subscribed(parent, deadline),
                                  title_author=self._creator(summary.parent_type, parent, deadline))
            return summary
        if event_type == CHAT_LINE_CREATED:
            return self._line(bucket_id, recording_id, deadline)
        path = _TYPED_PATHS.get(kind)
        if path is None:
            raise _Failed(ReadFailure(ReadFailureKind.unroutable))
        summary = _summarize(self._answer(f"{path}/{recording_id}", deadline, dict), bucket_id)
        if action == "assignment_changed":
            added = None if event_id is None else self._added(recording_id, event_id, deadline)
            summary = replace(summary, added_person_ids=added)
        elif action == "completed":
            summary = replace(summary, subscribed=self._subscribed(recording_id, deadline))
        return summary

    def message(self, destination: Destination, message_id: int,
                deadline: float) -> ReadMessage | ReadFailure:
        match destination.kind:
            case MessageKind.comment:
                path, person, place = f"comments/{message_id}", "creator", "parent"
            case MessageKind.chat_line:
                line = f"chats/{destination.recording_id}/lines/{message_id}"
                path, person, place = line, "creator", "parent"
            case MessageKind.boost:
                path, person, place = f"boosts/{message_id}", "booster", "recording"
        try:
            return _read_message(self._answer(path, deadline, dict), person, place)
        except _Failed as failed:
            return failed.failure

    def _line(self, bucket_id: int, line_id: int, deadline: float) -> RecordingSummary:
        campfires = self._answer("chats", deadline, list)
        for campfire in campfires:
            if not isinstance(campfire, dict) or campfire.get("type") != CAMPFIRE_TYPE:
                continue
            bucket = campfire.get("bucket")
            if not isinstance(bucket, dict) or bucket.get("id") != bucket_id:
                continue
            try:
                body = self._answer(f"chats/{campfire.get('id')}/lines/{line_id}", deadline, dict)
            except _Failed as failed:
                if failed.failure.kind is ReadFailureKind.not_found:
                    continue
                raise
            summary = _summarize(body, bucket_id)
            return replace(summary, campfire_id=summary.parent_id)
        raise _Failed(ReadFailure(ReadFailureKind.unresolved))

    def _subscribed(self, recording_id: int, deadline: float) -> bool:
        body = self._answer(f"recordings/{recording_id}/subscription", deadline, dict)
        subscribed = body.get("subscribed")
        if not isinstance(subscribed, bool):
            raise _Failed(ReadFailure(ReadFailureKind.failed))
        return subscribed

    def _creator(self, recording_type: str, recording_id: int, deadline: float) -> Author | None:
        """Who wrote a recording, read by its type; None when that could not be read."""
        path = _PATHS_BY_TYPE.get(recording_type)
        if path is None:
            return None
        try:
            return _author(self._answer(f"{path}/{recording_id}", deadline, dict))
        except _Failed:
            return None

    def _added(self, recording_id: int, event_id: int, deadline: float) -> frozenset[int] | None:
        events = self._answer(f"recordings/{recording_id}/events", deadline, list)
        for event in events:
            if isinstance(event, dict) and event.get("id") == event_id:
                details = event.get("details")
                added = details.get("added_person_ids") if isinstance(details, dict) else None
                if not isinstance(added, list) or not all(_is_id(person) for person in added):
                    return None
                return frozenset(int(person) for person in added)
        return None  # not on the first page (newest first): the delta is unverified

    def _answer(self, path: str, deadline: float, kind: type[Body]) -> Body:
        url = f"{self._client.account_url}/{path}.json"
        try:
            answer: Answer = self._client.read(url, deadline)
        except ListingFailed as error:
            if str(error).startswith(("HTTP 429", "HTTP 503")):
                raise _Failed(self._throttled()) from None
            raise _Failed(ReadFailure(ReadFailureKind.failed)) from None
        if answer.status == 401:
            raise _Failed(ReadFailure(ReadFailureKind.unauthorized))
        if answer.status == 403:
            raise _Failed(ReadFailure(ReadFailureKind.forbidden))
        if answer.status == 404:
            raise _Failed(ReadFailure(ReadFailureKind.not_found))
        if answer.status in (429, 503):
            raise _Failed(self._throttled())
        if answer.status != 200 or not isinstance(answer.body, kind):
            raise _Failed(ReadFailure(ReadFailureKind.failed))
        return answer.body

    def _throttled(self) -> ReadFailure:
        wait = self._client.rate_limited_for()
        seconds = math.ceil(wait) if wait > 0 else _FALLBACK_THROTTLE_SECONDS
        return ReadFailure(ReadFailureKind.throttled, self._clock.now() + timedelta(seconds=seconds))


def _is_id(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


def _read_message(body: JsonObject, person: str, place: str) -> ReadMessage:
    creator, where = body.get(person), body.get(place)
    try:
        if not isinstance(creator, dict) or not isinstance(where, dict):
            raise ValueError("no creator or no place")
        created_at = parse_timestamp(str(body["created_at"]))
        content = str(body.get("content") or "")
        return ReadMessage(int(body["id"]), int(where["id"]), int(creator["id"]), created_at, content)
    except (KeyError, TypeError, ValueError):
        raise _Failed(ReadFailure(ReadFailureKind.failed)) from None


def _summarize(body: JsonObject, bucket_id: int) -> RecordingSummary:
    bucket = body.get("bucket")
    if not isinstance(bucket, dict) or not _is_id(bucket.get("id")):
        raise _Failed(ReadFailure(ReadFailureKind.failed))
    if bucket["id"] != bucket_id:
        raise _Failed(ReadFailure(ReadFailureKind.bucket_mismatch))
    status = _STATUSES.get(str(body.get("status")))
    if status is None or not isinstance(body.get("type"), str):
        raise _Failed(ReadFailure(ReadFailureKind.failed))
    author = _author(body)
    parent = body.get("parent")
    found_parent = parent.get("id") if isinstance(parent, dict) else None
    parent_id = found_parent if isinstance(found_parent, int) and _is_id(found_parent) else None
    content = body.get("content")
    content = content if isinstance(content, str) else ""
    assignees = body.get("assignees")
    people = assignees if isinstance(assignees, list) else []
    assignee_ids = frozenset(int(one["id"]) for one in people
                             if isinstance(one, dict) and _is_id(one.get("id")))
    updated_at = body.get("updated_at")
    return RecordingSummary(
        status=status, type=str(body["type"]), creator=author, parent_id=parent_id,
        parent_type=str(parent.get("type") or "") if isinstance(parent, dict) else "",
        mentioned_person_ids=mentioned_in(content), assignee_ids=assignee_ids,
        app_url=str(body.get("app_url") or ""), title=str(body.get("title") or ""), content=content,
        updated_at=updated_at if isinstance(updated_at, str) else None,
        title_author=author,  # a comment's is its parent's: the comment's read replaces it
    )


def _author(body: JsonObject) -> Author | None:
    creator = body.get("creator")
    if isinstance(creator, dict) and _is_id(creator.get("id")):
        return Author(int(creator["id"]), str(creator.get("personable_type") or ""))
    return None
