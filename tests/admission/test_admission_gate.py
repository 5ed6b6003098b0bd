"""core.admission: the trigger matrix and the gate, which reads nothing."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.admission import (
    MATRIX,
    AdmissionSettings,
    Continue,
    Discard,
    DiscardReason,
    EventPointer,
    Trigger,
    gate,
)
from core.configuration import TrustMode

AGENT = 900
OPERATOR = 100
FRIEND = 200  # allowlisted
STRANGER = 300
SERVED = 10
UNSERVED = 20
OUTSIDE = 30

SETTINGS = AdmissionSettings(
    agent_id=AGENT,
    operator_id=OPERATOR,
    trust_mode=TrustMode.allowlist,
    allowlist=frozenset({FRIEND}),
    projects=frozenset({SERVED, UNSERVED}),
    routed_projects=frozenset({SERVED}),
)


def pointer(event_type: str = "comment.created", **changes: object) -> EventPointer:
    base = EventPointer(
        id=1, event_type=event_type, bucket_id=SERVED, creator_id=OPERATOR,
        performed_by_id=None, actor_type="person", recording_id=5,
    )
    return replace(base, **changes)  # type: ignore[arg-type]


def triggers(outcome: Continue | Discard) -> tuple[Trigger, ...]:
    assert isinstance(outcome, Continue), outcome
    return tuple(rule.trigger for rule in outcome.rules)


# -- the matrix -----------------------------------------------------------------------------

MATRIX_TABLE = {
    "comment.created": ((Trigger.mentioned, False, False, True), (Trigger.subscribed, False, True, False)),
    "message.created": ((Trigger.mentioned, False, False, True),),
    "todo.created": ((Trigger.mentioned, False, False, True),),
    "card.created": ((Trigger.mentioned, False, False, True),),
    "chat.line.created": ((Trigger.mentioned, False, False, True),),
    "todo.assignment_changed": ((Trigger.assigned, True, False, True),),
    "card.assignment_changed": ((Trigger.assigned, True, False, True),),
    "todo.completed": ((Trigger.completed, False, True, False),),
    "card.completed": ((Trigger.completed, False, True, False),),
}


def test_the_matrix_is_the_specs_table() -> None:
    """Event type -> (trigger, operator_only, requires_route, acknowledge), in order."""
    as_table = {
        event_type: tuple(
            (rule.trigger, rule.operator_only, rule.requires_route, rule.acknowledge) for rule in rules
        )
        for event_type, rules in MATRIX.items()
    }
    assert as_table == MATRIX_TABLE


def test_acknowledge_is_exactly_the_requests() -> None:
    for rules in MATRIX.values():
        for rule in rules:
            assert rule.acknowledge == (rule.trigger in (Trigger.mentioned, Trigger.assigned))


@pytest.mark.parametrize(("event_type", "expected"), [
    (event_type, tuple(row[0] for row in rows)) for event_type, rows in MATRIX_TABLE.items()
])
def test_the_operator_in_a_served_project_passes_with_every_rule(
    event_type: str, expected: tuple[Trigger, ...]
) -> None:
    outcome = gate(pointer(event_type), SETTINGS)
    assert triggers(outcome) == expected
    assert isinstance(outcome, Continue)
    assert outcome.routed
    assert not outcome.membership_needed


# -- every discard reason the gate gives ----------------------------------------------------------

DISCARDS = [
    ("invalid_pointer: no id", pointer(id=0), SETTINGS, DiscardReason.invalid_pointer),
    ("invalid_pointer: no bucket", pointer(bucket_id=0), SETTINGS, DiscardReason.invalid_pointer),
    ("invalid_pointer: no recording", pointer(recording_id=-1), SETTINGS, DiscardReason.invalid_pointer),
    ("not_in_matrix", pointer("todo.uncompleted"), SETTINGS, DiscardReason.not_in_matrix),
    ("not_in_matrix: boost", pointer("boost.created"), SETTINGS, DiscardReason.not_in_matrix),
    ("agent created it", pointer(creator_id=AGENT), SETTINGS, DiscardReason.agent_authored),
    ("agent performed it", pointer(performed_by_id=AGENT), SETTINGS, DiscardReason.agent_authored),
    ("an agent actor", pointer(actor_type="agent"), SETTINGS, DiscardReason.agent_authored),
    ("delegated", pointer(performed_by_id=555), SETTINGS, DiscardReason.delegated),
    ("out_of_scope", pointer(bucket_id=OUTSIDE), SETTINGS, DiscardReason.out_of_scope),
    ("untrusted_performer", pointer(creator_id=STRANGER), SETTINGS, DiscardReason.untrusted_performer),
    ("allowlist ignored in operator mode", pointer(creator_id=FRIEND),
     replace(SETTINGS, trust_mode=TrustMode.operator), DiscardReason.untrusted_performer),
    ("assignment_not_operator", pointer("todo.assignment_changed", creator_id=FRIEND), SETTINGS,
     DiscardReason.assignment_not_operator),
    ("assignment_not_operator: project mode", pointer("card.assignment_changed", creator_id=STRANGER),
     replace(SETTINGS, trust_mode=TrustMode.project), DiscardReason.assignment_not_operator),
    ("no_route: completion", pointer("todo.completed", bucket_id=UNSERVED), SETTINGS, DiscardReason.no_route),
    ("no_route: card completion", pointer("card.completed", bucket_id=UNSERVED), SETTINGS,
     DiscardReason.no_route),
]


@pytest.mark.parametrize(("case", "event", "settings", "reason"), DISCARDS, ids=[row[0] for row in DISCARDS])
def test_the_gate_discards(case: str, event: EventPointer, settings: AdmissionSettings, reason: DiscardReason) -> None:
    assert gate(event, settings) == Discard(reason)


def test_a_delegated_action_recording_the_same_person_is_not_delegated() -> None:
    assert triggers(gate(pointer(performed_by_id=OPERATOR), SETTINGS)) == (Trigger.mentioned, Trigger.subscribed)


def test_the_scope_is_every_project_when_none_is_named() -> None:
    everywhere = replace(SETTINGS, projects=None, routed_projects=frozenset({OUTSIDE}))
    assert triggers(gate(pointer(bucket_id=OUTSIDE), everywhere)) == (Trigger.mentioned, Trigger.subscribed)


# -- an unmapped project: only requests go on ------------------------------------------------------


@pytest.mark.parametrize(("event_type", "expected"), [
    ("comment.created", (Trigger.mentioned,)),
    ("message.created", (Trigger.mentioned,)),
    ("chat.line.created", (Trigger.mentioned,)),
    ("todo.assignment_changed", (Trigger.assigned,)),
    ("card.assignment_changed", (Trigger.assigned,)),
])
def test_only_mentioned_and_assigned_go_on_in_an_unmapped_project(
    event_type: str, expected: tuple[Trigger, ...]
) -> None:
    outcome = gate(pointer(event_type, bucket_id=UNSERVED), SETTINGS)
    assert triggers(outcome) == expected
    assert isinstance(outcome, Continue)
    assert not outcome.routed


# -- trust ----------------------------------------------------------------------------------------


def test_an_allowlisted_performer_passes_for_mentions_but_not_assignments() -> None:
    assert triggers(gate(pointer(creator_id=FRIEND), SETTINGS)) == (Trigger.mentioned, Trigger.subscribed)
    assert gate(pointer("todo.assignment_changed", creator_id=FRIEND), SETTINGS) == Discard(
        DiscardReason.assignment_not_operator
    )


def test_project_mode_defers_a_stranger_to_the_membership_read() -> None:
    project = replace(SETTINGS, trust_mode=TrustMode.project)
    outcome = gate(pointer(creator_id=STRANGER), project)
    assert isinstance(outcome, Continue)
    assert outcome.membership_needed
    operator = gate(pointer(), project)
    assert isinstance(operator, Continue)
    assert not operator.membership_needed


# -- wide inputs ------------------------------------------------------------------------------------

PEOPLE = st.sampled_from([AGENT, OPERATOR, FRIEND, STRANGER, 555])
EVENTS = st.builds(
    EventPointer,
    id=st.integers(-2, 10**6),
    event_type=st.sampled_from([*MATRIX, "todo.uncompleted", "", "question.created"]),
    bucket_id=st.sampled_from([SERVED, UNSERVED, OUTSIDE, 0]),
    creator_id=PEOPLE,
    performed_by_id=st.none() | PEOPLE,
    actor_type=st.sampled_from(["person", "agent"]),
    recording_id=st.integers(-1, 10**6),
)
SETTINGS_ANY = st.builds(
    AdmissionSettings,
    agent_id=st.just(AGENT),
    operator_id=st.just(OPERATOR),
    trust_mode=st.sampled_from(TrustMode),
    allowlist=st.frozensets(PEOPLE),
    projects=st.none() | st.frozensets(st.sampled_from([SERVED, UNSERVED, OUTSIDE])),
    routed_projects=st.frozensets(st.sampled_from([SERVED, UNSERVED, OUTSIDE])),
)


@given(EVENTS, SETTINGS_ANY)
def test_the_gate_never_passes_what_the_agent_had_a_hand_in(event: EventPointer, settings: AdmissionSettings) -> None:
    outcome = gate(event, settings)
    if isinstance(outcome, Discard):
        return
    assert AGENT not in (event.creator_id, event.performed_by_id)
    assert event.actor_type != "agent"
    assert event.performed_by_id in (None, event.creator_id)  # never delegated
    assert settings.projects is None or event.bucket_id in settings.projects
    assert outcome.rules
    assert all(rule in MATRIX[event.event_type] for rule in outcome.rules)
    if any(rule.operator_only for rule in outcome.rules):
        assert event.performer_id == OPERATOR
    if not settings.routed(event.bucket_id):
        assert all(rule.trigger in (Trigger.mentioned, Trigger.assigned) for rule in outcome.rules)
    if outcome.membership_needed:
        assert settings.trust_mode == TrustMode.project
