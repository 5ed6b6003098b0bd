"""Which feed events are the agent's business: the verdict on a record, from its event, the
settings and what the shell read.

``gate`` reads nothing: from the event and the settings, cheapest first, it answers the rules
still in play (``Continue``) or the first discard reason that holds. Then the shell reads the
recording's summary (the project's membership, for trust mode ``project``, is not read yet), asks
``decide``, and runs ``settle_verdict`` where it writes the verdict (on a live conversation: ``queued``).

``MATRIX`` maps an event type to its rules, tried in order; a rule that acknowledges is a request
(the guard and a holding reply apply). The performer is ``performed_by_id``, else the creator; one
who is not the creator is an agent acting for a person (``delegated``). The operator is trusted
in every mode, ``allowlist`` adds the allowed ids, ``project`` any non-client member.

``decide`` goes cheapest first: the membership (unread blocks), the summary (a failed read
blocks, never discards; drafted or trashed is ``stale``), the author, the rules, the route.
Content's author is judged before its rules. The snapshot names each text field's own author
(the content's and the title's: a comment's title is its parent's) and whether that author is
trusted; a field whose author was not read is not, so untrusted words are data, never orders. A
comment that mentions the agent never falls through to subscribed. Where no route serves the
project only a request is answered: ``blocked(no_route)``, kept for its holding reply. While the
configuration is unusable every event the gate passes is ``blocked(config_unreadable)``, and the
gate drops no rule for a missing route.

A chat line's conversation and reply are its Campfire, a comment's its parent, anything else's
the recording itself. A reason in ``RETRIED_WITHIN_WINDOW`` is offered back every
``BLOCKED_RETRY_INTERVAL`` within ``BLOCKED_RETRY_WINDOW`` (a throttled read not before its
``retry_at``; ``config_unreadable`` and ``read_unauthorized`` without end: a 401 is the token's, not
the record's, and it works again); past it the record stays blocked.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from enum import StrEnum
from types import MappingProxyType

from core.configuration import TrustMode
from core.destinations import MessageKind
from core.edges import RecordState
from core.mentions import mentioned_person_ids


class Trigger(StrEnum):
    mentioned = "mentioned"
    subscribed = "subscribed"
    assigned = "assigned"
    completed = "completed"


@dataclass(frozen=True, slots=True)
class Rule:
    trigger: Trigger
    operator_only: bool = False
    requires_route: bool = False
    acknowledge: bool = False


MENTIONED = Rule(Trigger.mentioned, acknowledge=True)
SUBSCRIBED = Rule(Trigger.subscribed, requires_route=True)
ASSIGNED = Rule(Trigger.assigned, operator_only=True, acknowledge=True)
COMPLETED = Rule(Trigger.completed, requires_route=True)

COMMENT_CREATED = "comment.created"
CHAT_LINE_CREATED = "chat.line.created"

MATRIX: Mapping[str, tuple[Rule, ...]] = MappingProxyType({
    COMMENT_CREATED: (MENTIONED, SUBSCRIBED),
    "message.created": (MENTIONED,),
    "todo.created": (MENTIONED,),
    "card.created": (MENTIONED,),
    CHAT_LINE_CREATED: (MENTIONED,),
    "todo.assignment_changed": (ASSIGNED,),
    "card.assignment_changed": (ASSIGNED,),
    "todo.completed": (COMPLETED,),
    "card.completed": (COMPLETED,),
})

AGENT_ACTOR = "agent"  # the feed's actor_type of an action taken by an agent


class DiscardReason(StrEnum):
    """Why a record was discarded: terminal, a verified verdict."""
    invalid_pointer = "invalid_pointer"
    not_in_matrix = "not_in_matrix"
    agent_authored = "agent_authored"
    delegated = "delegated"
    out_of_scope = "out_of_scope"
    untrusted_performer = "untrusted_performer"
    assignment_not_operator = "assignment_not_operator"
    untrusted_author = "untrusted_author"
    stale = "stale"
    not_addressed = "not_addressed"
    no_route = "no_route"
    by_operator = "by_operator"
    imported_done = "imported_done"


class BlockedReason(StrEnum):
    """Why a record is blocked: retained and retried, never a transport failure as a verdict."""
    read_failed = "read_failed"
    read_unresolved = "read_unresolved"
    throttled = "throttled"
    trust_unverified = "trust_unverified"
    delta_unverified = "delta_unverified"
    bucket_mismatch = "bucket_mismatch"
    unroutable = "unroutable"
    no_route = "no_route"
    spawn_failed = "spawn_failed"
    config_unreadable = "config_unreadable"
    read_unauthorized = "read_unauthorized"


@dataclass(frozen=True, slots=True)
class AdmissionSettings:
    """What admission knows of the configuration. ``projects``: the ``--project`` scope (None: every
    project the agent can see)."""
    agent_id: int
    operator_id: int
    trust_mode: TrustMode = TrustMode.operator
    allowlist: frozenset[int] = frozenset()
    projects: frozenset[int] | None = None
    routed_projects: frozenset[int] = frozenset()
    watched_projects: frozenset[int] = frozenset()
    configuration_usable: bool = True

    def routed(self, bucket_id: int) -> bool:
        return bucket_id in self.routed_projects


@dataclass(frozen=True, slots=True)
class EventPointer:
    """A feed event as intake recorded it (``core.feed.FeedEvent`` and its ``actor_type``)."""
    id: int
    event_type: str
    bucket_id: int
    creator_id: int
    performed_by_id: int | None
    actor_type: str
    recording_id: int

    @property
    def performer_id(self) -> int:
        return self.creator_id if self.performed_by_id is None else self.performed_by_id


@dataclass(frozen=True, slots=True)
class Continue:
    rules: tuple[Rule, ...]
    routed: bool
    membership_needed: bool


@dataclass(frozen=True, slots=True)
class Discard:
    reason: DiscardReason


GateOutcome = Continue | Discard


def trusted_without_reading(settings: AdmissionSettings, person_id: int) -> bool:
    if person_id == settings.operator_id:
        return True
    return settings.trust_mode is not TrustMode.operator and person_id in settings.allowlist


def gate(event: EventPointer, settings: AdmissionSettings) -> GateOutcome:
    if min(event.id, event.bucket_id, event.recording_id) <= 0:
        return Discard(DiscardReason.invalid_pointer)
    rules = MATRIX.get(event.event_type)
    if rules is None:
        return Discard(DiscardReason.not_in_matrix)
    agent = settings.agent_id
    if agent in (event.creator_id, event.performed_by_id) or event.actor_type == AGENT_ACTOR:
        return Discard(DiscardReason.agent_authored)
    if event.performed_by_id is not None and event.performed_by_id != event.creator_id:
        return Discard(DiscardReason.delegated)
    if settings.projects is not None and event.bucket_id not in settings.projects:
        return Discard(DiscardReason.out_of_scope)
    performer = event.performer_id
    membership_needed = False
    if not trusted_without_reading(settings, performer):
        if settings.trust_mode is not TrustMode.project:
            return Discard(DiscardReason.untrusted_performer)
        membership_needed = True
    if performer != settings.operator_id:
        rules = tuple(rule for rule in rules if not rule.operator_only)
        if not rules:
            return Discard(DiscardReason.assignment_not_operator)
    routed = settings.routed(event.bucket_id)
    if not routed and settings.configuration_usable:
        rules = tuple(rule for rule in rules if not rule.requires_route)
        if not rules:
            return Discard(DiscardReason.no_route)
    return Continue(rules=rules, routed=routed, membership_needed=membership_needed)


# -- the verdict -----------------------------------------------------------------------------
BLOCKED_RETRY_INTERVAL = timedelta(minutes=10)
BLOCKED_RETRY_WINDOW = timedelta(hours=24)

RETRIED_WITHIN_WINDOW = frozenset({
    BlockedReason.read_failed, BlockedReason.read_unresolved, BlockedReason.delta_unverified,
    BlockedReason.trust_unverified, BlockedReason.throttled,
})  # fmt: skip
RETRIED_WITHOUT_END = frozenset({BlockedReason.config_unreadable, BlockedReason.read_unauthorized})

AGENT_PERSONABLE = "Agent"
REQUESTS = frozenset({Trigger.mentioned, Trigger.assigned})
CONTENT = frozenset({Trigger.mentioned, Trigger.subscribed})  # judged by their author's words
ADMITTED_STATES = frozenset({RecordState.admitted, RecordState.queued})
VERDICT_STATES = ADMITTED_STATES | {RecordState.blocked, RecordState.discarded}

Reason = DiscardReason | BlockedReason


class RecordingStatus(StrEnum):
    active = "active"
    drafted = "drafted"
    trashed = "trashed"


@dataclass(frozen=True, slots=True)
class Author:
    id: int
    personable_type: str


@dataclass(frozen=True, slots=True)
class RecordingSummary:
    """What the summary read found; ``added_person_ids`` is an assignment's added people (None:
    the event's details could not be read); ``title_author`` the title's writer (None: not read)."""
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
    title_author: Author | None = None


class ReadFailureKind(StrEnum):
    failed = "failed"  # transport, 5xx, a body that could not be read
    throttled = "throttled"  # 429 beyond what admission waits in place; ``retry_at`` set
    not_found = "not_found"  # 404
    forbidden = "forbidden"  # 403
    unauthorized = "unauthorized"  # 401, after the token's refresh
    unresolved = "unresolved"  # a chat line in no visible Campfire
    bucket_mismatch = "bucket_mismatch"  # the recording is in another bucket than the event said
    unroutable = "unroutable"  # no typed read for the recording's type


@dataclass(frozen=True, slots=True)
class ReadFailure:
    """A read that did not answer, after its own retries; ``retry_at``: a throttled read's deadline."""
    kind: ReadFailureKind
    retry_at: datetime | None = None


_FAILURE_REASONS: Mapping[ReadFailureKind, BlockedReason] = MappingProxyType({
    ReadFailureKind.failed: BlockedReason.read_failed,
    ReadFailureKind.throttled: BlockedReason.throttled,
    ReadFailureKind.not_found: BlockedReason.read_failed,
    ReadFailureKind.forbidden: BlockedReason.read_failed,
    ReadFailureKind.unauthorized: BlockedReason.read_unauthorized,
    ReadFailureKind.unresolved: BlockedReason.read_unresolved,
    ReadFailureKind.bucket_mismatch: BlockedReason.bucket_mismatch,
    ReadFailureKind.unroutable: BlockedReason.unroutable,
})


@dataclass(frozen=True, slots=True)
class Verdict:
    """Admission's decision on one record, as the ledger writes it (``events`` columns)."""
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
    return frozenset(mentioned_person_ids(content))


def _discarded(reason: DiscardReason, trigger: Trigger | None = None) -> Verdict:
    return Verdict(RecordState.discarded, reason, trigger)


def _blocked(reason: BlockedReason, retry_at: datetime | None = None) -> Verdict:
    return Verdict(RecordState.blocked, reason, retry_at=retry_at)


def _reply(event: EventPointer, summary: RecordingSummary) -> tuple[str, MessageKind, int] | None:
    """Conversation key, reply kind and reply recording; None without the parent or Campfire."""
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
    """None when only the unread membership could tell. The agent's words are no person's trust."""
    if author.id == settings.agent_id or author.personable_type == AGENT_PERSONABLE:
        return False
    if author.id == event.performer_id or trusted_without_reading(settings, author.id):
        return True
    if settings.trust_mode is TrustMode.project:
        return None if members is None else author.id in members
    return False


def _field_trusted(
    author: Author | None, event: EventPointer, settings: AdmissionSettings, members: frozenset[int] | None
) -> bool:
    """Whether a text field is a trusted person's words: its own author's, and only one read."""
    if author is None:
        return False
    return _author_trusted(author, event, settings, members) is True


def _author_verdict(
    author: Author, event: EventPointer, settings: AdmissionSettings, members: frozenset[int] | None
) -> Verdict | None:
    """None when the author of a content event is trusted, else the verdict that ends the decision."""
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


def _snapshot(
    summary: RecordingSummary, author_trusted: bool, title_trusted: bool
) -> Mapping[str, str | None]:
    title_author = summary.title_author
    return MappingProxyType({
        "type": summary.type,
        "title": summary.title,
        "app_url": summary.app_url,
        "content": summary.content,
        "updated_at": summary.updated_at,
        "author_id": None if summary.creator is None else str(summary.creator.id),
        "author_trusted": "true" if author_trusted else "false",
        "title_author_id": None if title_author is None else str(title_author.id),
        "title_author_trusted": "true" if title_trusted else "false",
    })


def decide(
    event: EventPointer, settings: AdmissionSettings, read: RecordingSummary | ReadFailure,
    members: frozenset[int] | None = None,
) -> Verdict:
    """``members``: the project's non-client members (None: not read, or the read failed)."""
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
    if any(rule.trigger in CONTENT for rule in rules):
        refused = _author_verdict(summary.creator, event, settings, members)
        if refused is not None:
            return refused
    author_trusted = _author_trusted(summary.creator, event, settings, members) is True
    title_trusted = _field_trusted(summary.title_author, event, settings, members)
    for rule in rules:
        matched = _match(rule, summary, settings, event)
        if isinstance(matched, BlockedReason):
            return _blocked(matched)
        if matched:  # a mention matches before subscribed is tried: it never falls through
            trust = (author_trusted, title_trusted)
            return _verdict_for(rule, event, summary, routed, reply, trust=trust)
    return _discarded(DiscardReason.not_addressed)


def _verdict_for(
    rule: Rule, event: EventPointer, summary: RecordingSummary, routed: bool,
    reply: tuple[str, MessageKind, int], *, trust: tuple[bool, bool],
) -> Verdict:
    conversation_key, reply_kind, reply_recording_id = reply
    if not routed and rule.requires_route:
        return _discarded(DiscardReason.no_route, rule.trigger)
    author = summary.creator
    requester = author.id if rule.trigger in CONTENT and author is not None else event.performer_id
    return Verdict(
        state=RecordState.admitted if routed else RecordState.blocked,
        reason=None if routed else BlockedReason.no_route,
        trigger=rule.trigger, acknowledge=rule.acknowledge, conversation_key=conversation_key,
        reply_kind=reply_kind, reply_bucket_id=event.bucket_id, reply_recording_id=reply_recording_id,
        requester_id=requester, snapshot=_snapshot(summary, *trust) if routed else None,
    )


def settle_verdict(verdict: Verdict, conversation_live: bool) -> Verdict:
    if verdict.state is RecordState.admitted and conversation_live:
        return replace(verdict, state=RecordState.queued)
    return verdict


def next_retry(
    reason: str, blocked_since: datetime, now: datetime, retry_at: datetime | None = None
) -> datetime | None:
    """When a record blocked for ``reason`` is next offered back to admission; None: no timer will."""
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
