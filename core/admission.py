"""Admission's second half: the verdict on a record, from the gate and what the shell read.

The shell runs ``core.admission_matrix.gate`` (no reads); on ``Continue`` it reads the membership
(trust mode ``project``) and the recording's summary, asks ``decide``, and runs
``settle_verdict`` in the transaction that writes the verdict.

Rule 1: cheapest first: the gate; the membership (unread -> ``blocked(trust_unverified)``, not a
member -> ``discarded(untrusted_performer)``); the summary (a ``ReadFailure`` blocks, never
discards); drafted or trashed -> ``discarded(stale)``; a missing creator, parent or Campfire ->
``blocked(read_failed)``; the author; the rules in order; the route.

Rule 2: content's author (a ``*.created`` event) is checked before its rules: an agent's is
``discarded(agent_authored)``, an untrusted one's ``discarded(untrusted_author)``. For an
assignment or completion the snapshot still names the words' author and whether trusted, so
untrusted words are data, never orders (``core.dispatch_prompt`` rule 6).

Rule 3: rules go in matrix order: mentioned, subscribed, assigned (by this very event and still
assigned; unreadable details -> ``blocked(delta_unverified)``), completed. A comment that
mentions the agent never falls through to subscribed. No match -> ``discarded(not_addressed)``.

Rule 4: a matched trigger with no route is ``blocked(no_route)`` for a request (mentioned,
assigned: it keeps its reply destination) and ``discarded(no_route)`` otherwise. Only
``admitted`` carries content. ``acknowledge`` is true exactly for a mentioned or assigned
trigger admitted or blocked(no_route).

Rule 5: a chat line's conversation and reply are its Campfire; a comment's, its parent; anything
else's, the recording itself.

Rule 6: ``settle_verdict``: an admitted verdict whose conversation is live is ``queued``.

Rule 7: a blocked reason in ``RETRIED_WITHIN_WINDOW`` is retried every ``BLOCKED_RETRY_INTERVAL``
within ``BLOCKED_RETRY_WINDOW`` (``throttled`` not before ``retry_at``; ``config_unreadable``
without end); any other waits for a redispatch. Past its window a record stays blocked. While
the configuration is unusable every event the gate passes is ``blocked(config_unreadable)``
(``core.route_reload`` rule 2).

Rule 8: mentions are read by ``core.mentions``' tag walk, which strips the agent's own mention.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from enum import StrEnum
from types import MappingProxyType

from core.admission_matrix import (
    CHAT_LINE_CREATED,
    COMMENT_CREATED,
    AdmissionSettings,
    BlockedReason,
    Continue,
    Discard,
    DiscardReason,
    EventPointer,
    Rule,
    Trigger,
    gate,
    trusted_without_reading,
)
from core.configuration import TrustMode
from core.destinations import MessageKind
from core.edges import RecordState
from core.mentions import mentioned_person_ids
from core.snapshots import RecordSnapshot

BLOCKED_RETRY_INTERVAL = timedelta(minutes=10)
BLOCKED_RETRY_WINDOW = timedelta(hours=24)

RETRIED_WITHIN_WINDOW = frozenset(
    {
        BlockedReason.read_failed,
        BlockedReason.read_unresolved,
        BlockedReason.delta_unverified,
        BlockedReason.trust_unverified,
        BlockedReason.throttled,
    }
)
RETRIED_WITHOUT_END = frozenset({BlockedReason.config_unreadable})

AGENT_PERSONABLE = "Agent"
REQUESTS = frozenset({Trigger.mentioned, Trigger.assigned})
VERDICT_STATES = frozenset(
    {RecordState.admitted, RecordState.queued, RecordState.blocked, RecordState.discarded}
)
ADMITTED_STATES = frozenset({RecordState.admitted, RecordState.queued})

Reason = DiscardReason | BlockedReason


class RecordingStatus(StrEnum):
    """A recording's status as the summary read found it."""

    active = "active"
    drafted = "drafted"
    trashed = "trashed"


@dataclass(frozen=True, slots=True)
class Author:
    """The recording's creator: a Person id and its ``personable_type`` (``User``, ``Agent``...)."""

    id: int
    personable_type: str


@dataclass(frozen=True, slots=True)
class RecordingSummary:
    """What the summary read found (plus, for an assignment, this event's added people: None when
    the event's details could not be read). ``mentioned_person_ids`` comes from ``mentioned_in``."""

    status: RecordingStatus
    type: str
    creator: Author | None
    parent_id: int | None = None
    parent_type: str = ""
    campfire_id: int | None = None
    mentioned_person_ids: frozenset[int] = frozenset()
    assignee_ids: frozenset[int] = frozenset()
    added_person_ids: frozenset[int] | None = frozenset()
    subscribed: bool = False
    app_url: str = ""
    title: str = ""
    content: str = ""
    updated_at: str | None = None


class ReadFailureKind(StrEnum):
    """How a read the shell made for admission failed, after its own retries."""

    failed = "failed"  # transport, 5xx, a body that could not be read
    throttled = "throttled"  # 429 beyond what admission waits in place; ``retry_at`` set
    not_found = "not_found"  # 404
    forbidden = "forbidden"  # 401, 403
    unresolved = "unresolved"  # a chat line in no visible Campfire
    bucket_mismatch = "bucket_mismatch"  # the recording is in another bucket than the event said
    unroutable = "unroutable"  # no typed read for the recording's type


@dataclass(frozen=True, slots=True)
class ReadFailure:
    """A read that did not answer. ``retry_at`` is the server's deadline of a throttled read."""

    kind: ReadFailureKind
    retry_at: datetime | None = None


_FAILURE_REASONS: Mapping[ReadFailureKind, BlockedReason] = MappingProxyType(
    {
        ReadFailureKind.failed: BlockedReason.read_failed,
        ReadFailureKind.throttled: BlockedReason.throttled,
        ReadFailureKind.not_found: BlockedReason.read_failed,
        ReadFailureKind.forbidden: BlockedReason.read_failed,
        ReadFailureKind.unresolved: BlockedReason.read_unresolved,
        ReadFailureKind.bucket_mismatch: BlockedReason.bucket_mismatch,
        ReadFailureKind.unroutable: BlockedReason.unroutable,
    }
)


@dataclass(frozen=True, slots=True)
class Verdict:
    """Admission's decision on one record, as the ledger writes it (``events`` columns).

    ``reason`` is None exactly when admitted or queued; ``snapshot`` is set exactly then;
    ``retry_at`` only for ``blocked(throttled)``; ``acknowledge`` only for a request trigger."""

    state: RecordState
    reason: Reason | None = None
    trigger: Trigger | None = None
    acknowledge: bool = False
    conversation_key: str = ""
    reply_kind: MessageKind | None = None
    reply_bucket_id: int = 0
    reply_recording_id: int = 0
    requester_id: int = 0
    snapshot: Mapping[str, str | None] | None = None
    retry_at: datetime | None = None

    def __post_init__(self) -> None:
        if self.state not in VERDICT_STATES:
            raise ValueError(f"{self.state} is not a verdict")
        admitted = self.state in ADMITTED_STATES
        if admitted != (self.reason is None):
            raise ValueError(f"a {self.state} verdict with reason {self.reason!r}")
        if admitted != (self.snapshot is not None):
            raise ValueError(f"a {self.state} verdict {'without' if admitted else 'with'} a snapshot")
        if self.acknowledge and self.trigger not in REQUESTS:
            raise ValueError(f"trigger {self.trigger!r} asks for nothing to acknowledge")
        if self.retry_at is not None and self.reason is not BlockedReason.throttled:
            raise ValueError("only a throttled verdict carries retry_at")


def mentioned_in(content: str) -> frozenset[int]:
    """The Person ids mentioned in rich-text ``content`` (rule 8)."""
    return frozenset(mentioned_person_ids(content))


def _discarded(reason: DiscardReason, trigger: Trigger | None = None) -> Verdict:
    return Verdict(RecordState.discarded, reason, trigger)


def _blocked(reason: BlockedReason, retry_at: datetime | None = None) -> Verdict:
    return Verdict(RecordState.blocked, reason, retry_at=retry_at)


def _reply(event: EventPointer, summary: RecordingSummary) -> tuple[str, MessageKind, int] | None:
    """Conversation key, reply kind and reply recording (rule 5); None when the summary lacks
    the parent or Campfire it needs."""
    if event.event_type == CHAT_LINE_CREATED:
        if summary.campfire_id is None or summary.campfire_id <= 0:
            return None
        return f"campfire:{summary.campfire_id}", MessageKind.chat_line, summary.campfire_id
    if event.event_type == COMMENT_CREATED:
        if summary.parent_id is None or summary.parent_id <= 0:
            return None
        return f"recording:{summary.parent_id}", MessageKind.comment, summary.parent_id
    return f"recording:{event.recording_id}", MessageKind.comment, event.recording_id


def _author_trusted(
    author: Author, event: EventPointer, settings: AdmissionSettings, members: frozenset[int] | None
) -> bool | None:
    """Whether the content's author is trusted (rule 2); None when only the unread membership
    could tell. The agent's own words are not a person's trust."""
    if author.id == settings.agent_id or author.personable_type == AGENT_PERSONABLE:
        return False
    if author.id == event.performer_id or trusted_without_reading(settings, author.id):
        return True
    if settings.trust_mode is TrustMode.project:
        return None if members is None else author.id in members
    return False


def _author_verdict(
    author: Author, event: EventPointer, settings: AdmissionSettings, members: frozenset[int] | None
) -> Verdict | None:
    """None when the author of a content event is trusted (rule 2), else the verdict that ends
    the decision."""
    if author.id == settings.agent_id or author.personable_type == AGENT_PERSONABLE:
        return _discarded(DiscardReason.agent_authored)
    match _author_trusted(author, event, settings, members):
        case True:
            return None
        case None:
            return _blocked(BlockedReason.trust_unverified)
    return _discarded(DiscardReason.untrusted_author)


def _match(
    rule: Rule, summary: RecordingSummary, settings: AdmissionSettings, event: EventPointer
) -> bool | BlockedReason:
    agent = settings.agent_id
    match rule.trigger:
        case Trigger.mentioned:
            return agent in summary.mentioned_person_ids
        case Trigger.subscribed:
            return summary.subscribed
        case Trigger.assigned:
            if summary.added_person_ids is None:
                return BlockedReason.delta_unverified
            return agent in summary.added_person_ids and agent in summary.assignee_ids
        case Trigger.completed:
            watching = event.bucket_id in settings.watched_projects
            return watching or agent in summary.assignee_ids or summary.subscribed


def _snapshot(summary: RecordingSummary, author_trusted: bool) -> Mapping[str, str | None]:
    return MappingProxyType(
        {
            "type": summary.type,
            "title": summary.title,
            "app_url": summary.app_url,
            "content": summary.content,
            "updated_at": summary.updated_at,
            "author_id": None if summary.creator is None else str(summary.creator.id),
            "author_trusted": "true" if author_trusted else "false",  # rule 2
        }
    )


def decide(
    event: EventPointer,
    settings: AdmissionSettings,
    read: RecordingSummary | ReadFailure,
    members: frozenset[int] | None = None,
) -> Verdict:
    """The verdict on ``event`` (rules 1-5). ``read`` is the summary read or how it failed;
    ``members`` the project's non-client members (None: not read, or the read failed)."""
    match gate(event, settings):
        case Discard(discard_reason):
            return _discarded(discard_reason)
        case Continue(rules, routed, membership_needed):
            pass
    if not settings.configuration_usable:
        return _blocked(BlockedReason.config_unreadable)
    if membership_needed:
        if members is None:
            return _blocked(BlockedReason.trust_unverified)
        if event.performer_id not in members:
            return _discarded(DiscardReason.untrusted_performer)
    match read:
        case ReadFailure(kind, retry_at):
            blocked_reason = _FAILURE_REASONS[kind]
            throttled = blocked_reason is BlockedReason.throttled
            return _blocked(blocked_reason, retry_at if throttled else None)
        case RecordingSummary():
            summary = read
    if summary.status != RecordingStatus.active:
        return _discarded(DiscardReason.stale)
    reply = _reply(event, summary)
    if summary.creator is None or summary.creator.id <= 0 or reply is None:
        return _blocked(BlockedReason.read_failed)
    content_event = any(rule.trigger in (Trigger.mentioned, Trigger.subscribed) for rule in rules)
    if content_event:
        refused = _author_verdict(summary.creator, event, settings, members)
        if refused is not None:
            return refused
    author_trusted = _author_trusted(summary.creator, event, settings, members) is True  # rule 2
    for rule in rules:
        matched = _match(rule, summary, settings, event)
        if isinstance(matched, BlockedReason):
            return _blocked(matched)
        if matched:  # a mention matches before subscribed is tried: it never falls through
            return _verdict_for(rule, event, summary, routed, reply, author_trusted=author_trusted)
    return _discarded(DiscardReason.not_addressed)


def _verdict_for(
    rule: Rule,
    event: EventPointer,
    summary: RecordingSummary,
    routed: bool,
    reply: tuple[str, MessageKind, int],
    *,
    author_trusted: bool,
) -> Verdict:
    conversation_key, reply_kind, reply_recording_id = reply
    if not routed and rule.requires_route:
        return _discarded(DiscardReason.no_route, rule.trigger)
    content = rule.trigger in (Trigger.mentioned, Trigger.subscribed)
    author = summary.creator
    requester = author.id if content and author is not None else event.performer_id
    admitted = routed
    return Verdict(
        state=RecordState.admitted if admitted else RecordState.blocked,
        reason=None if admitted else BlockedReason.no_route,
        trigger=rule.trigger,
        acknowledge=rule.acknowledge,
        conversation_key=conversation_key,
        reply_kind=reply_kind,
        reply_bucket_id=event.bucket_id,
        reply_recording_id=reply_recording_id,
        requester_id=requester,
        snapshot=_snapshot(summary, author_trusted) if admitted else None,
    )


def settle_verdict(verdict: Verdict, conversation_live: bool) -> Verdict:
    """``queued`` for an admitted verdict whose conversation is live; otherwise unchanged (rule 6)."""
    if verdict.state is RecordState.admitted and conversation_live:
        return replace(verdict, state=RecordState.queued)
    return verdict


def next_retry(
    reason: str, blocked_since: datetime, now: datetime, retry_at: datetime | None = None
) -> datetime | None:
    """When a record blocked for ``reason`` since ``blocked_since`` is next offered back to
    admission, or None when no timer re-runs it (rule 7)."""
    if reason in RETRIED_WITHOUT_END:
        return now + BLOCKED_RETRY_INTERVAL
    if reason not in RETRIED_WITHIN_WINDOW:
        return None
    due = now + BLOCKED_RETRY_INTERVAL
    if reason == BlockedReason.throttled and retry_at is not None:
        due = max(retry_at, now)
    if due > blocked_since + BLOCKED_RETRY_WINDOW:
        return None
    return due


def as_record(event: EventPointer, verdict: Verdict) -> RecordSnapshot:
    """The record as the verdict's transaction leaves it, for ``core.intents.intents_for_verdict``."""
    return RecordSnapshot(
        event_id=event.id,
        state=verdict.state,
        reason="" if verdict.reason is None else str(verdict.reason),
        bucket_id=event.bucket_id,
        recording_id=event.recording_id,
        acknowledge=verdict.acknowledge,
        reply_kind=verdict.reply_kind,
        reply_bucket_id=verdict.reply_bucket_id,
        reply_recording_id=verdict.reply_recording_id,
    )


__all__ = [
    "BLOCKED_RETRY_INTERVAL",
    "BLOCKED_RETRY_WINDOW",
    "RETRIED_WITHIN_WINDOW",
    "RETRIED_WITHOUT_END",
    "AdmissionSettings",
    "Author",
    "BlockedReason",
    "DiscardReason",
    "EventPointer",
    "ReadFailure",
    "ReadFailureKind",
    "RecordingStatus",
    "RecordingSummary",
    "Trigger",
    "TrustMode",
    "Verdict",
    "as_record",
    "decide",
    "mentioned_in",
    "next_retry",
    "settle_verdict",
]
