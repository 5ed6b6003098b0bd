"""Admission's first half: the trigger matrix, the reasons, and the gate that reads nothing.

Rule 1: ``MATRIX`` maps an event type to its rules, in order: each a trigger and three flags,
``operator_only``, ``requires_route`` and ``acknowledge`` (a person asked for something: the
guard and a holding reply apply).

Rule 2: the gate decides from the feed event and the settings alone, cheapest first, answering
``Continue`` with the rules still in play or ``Discard`` with the first reason that holds;
``delegated`` (performed by someone other than its creator) is an agent acting for a person.

Rule 3: the performer is ``performed_by_id``, else the creator. The operator is trusted in every
mode; ``allowlist`` adds the allowed ids; ``project`` adds any non-client member of the project,
which the gate cannot know: ``Continue`` with ``membership_needed``, for ``core.admission``.

Rule 4: in an unmapped project only mentioned and assigned are answered (``blocked(no_route)``
and a holding reply, later); the gate drops every rule that requires a route, and an event left
with none is ``discarded(no_route)``.

Rule 5: while the configuration is unusable (``configuration_usable`` False) the gate drops no
rule for a missing route, and the verdict is ``blocked(config_unreadable)``."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from types import MappingProxyType

from core.configuration import TrustMode


class Trigger(StrEnum):
    """Why the agent is being asked (v1)."""

    mentioned = "mentioned"
    subscribed = "subscribed"
    assigned = "assigned"
    completed = "completed"


@dataclass(frozen=True, slots=True)
class Rule:
    """One row of the matrix: a trigger and its flags."""

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

MATRIX: Mapping[str, tuple[Rule, ...]] = MappingProxyType(
    {
        COMMENT_CREATED: (MENTIONED, SUBSCRIBED),
        "message.created": (MENTIONED,),
        "todo.created": (MENTIONED,),
        "card.created": (MENTIONED,),
        CHAT_LINE_CREATED: (MENTIONED,),
        "todo.assignment_changed": (ASSIGNED,),
        "card.assignment_changed": (ASSIGNED,),
        "todo.completed": (COMPLETED,),
        "card.completed": (COMPLETED,),
    }
)
"""Event type -> its rules, in the order they are tried."""

AGENT_ACTOR = "agent"
"""The feed's ``actor_type`` of an action taken by an agent."""


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


@dataclass(frozen=True, slots=True)
class AdmissionSettings:
    """What admission knows of the connector's configuration: the agent's and the operator's
    Person ids, the trust mode and its allowlist, the ``--project`` scope (None: every project
    the agent can see), the projects with a route, and those whose route watches completions."""

    agent_id: int
    operator_id: int
    trust_mode: TrustMode = TrustMode.operator
    allowlist: frozenset[int] = frozenset()
    projects: frozenset[int] | None = None
    routed_projects: frozenset[int] = frozenset()
    watched_projects: frozenset[int] = frozenset()
    configuration_usable: bool = True

    def routed(self, bucket_id: int) -> bool:
        """Whether the connector serves project ``bucket_id`` (it has a route)."""
        return bucket_id in self.routed_projects


@dataclass(frozen=True, slots=True)
class EventPointer:
    """A feed event as intake recorded it (``core.feed.FeedEvent`` plus its ``actor_type``): a
    pointer, nothing read."""

    id: int
    event_type: str
    bucket_id: int
    creator_id: int
    performed_by_id: int | None
    actor_type: str
    recording_id: int

    @property
    def performer_id(self) -> int:
        """Who acted: ``performed_by_id``, or the creator when there is none (rule 3)."""
        return self.creator_id if self.performed_by_id is None else self.performed_by_id


@dataclass(frozen=True, slots=True)
class Continue:
    """The gate let the event through: these rules are still in play, in order."""

    rules: tuple[Rule, ...]
    routed: bool
    membership_needed: bool


@dataclass(frozen=True, slots=True)
class Discard:
    """The gate discarded the event before any read."""

    reason: DiscardReason


GateOutcome = Continue | Discard


def trusted_without_reading(settings: AdmissionSettings, person_id: int) -> bool:
    """Whether ``person_id`` is trusted on the settings alone: the operator, or allowlisted in a
    mode that has an allowlist."""
    if person_id == settings.operator_id:
        return True
    return settings.trust_mode is not TrustMode.operator and person_id in settings.allowlist


def gate(event: EventPointer, settings: AdmissionSettings) -> GateOutcome:
    """The gate (rule 2): reads nothing, answers the first discard reason or the rules in play."""
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
