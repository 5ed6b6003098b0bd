"""core.decisions with plain values: which records a person may redispatch or discard, and into what."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.decisions import BY_OPERATOR, Action, RecordFacts, discard, redispatch
from core.edges import RECORD_EDGES, Actor, RecordState

R = RecordState
NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
OUTCOMES = ("", "succeeded", "failed", "unknown")


def facts(state: RecordState, outcome: str = "", *, carried: bool = False, reason: str = "", **more: object) -> RecordFacts:
    return RecordFacts(7, state, reason, revision=4, outcome=outcome, carried=carried, **more)  # type: ignore[arg-type]


@pytest.mark.parametrize("outcome", ["unknown", "failed"])
def test_a_settled_unknown_or_failed_record_is_admitted_again(outcome: str) -> None:
    plan = redispatch(facts(R.completed, outcome), NOW).unwrap()
    assert (plan.action, plan.to_state, plan.to_reason, plan.offer_at) == (Action.redispatch, R.admitted, "", None)
    assert plan.facts.revision == 4
    assert "admitted again" in plan.summary
    assert not plan.cancel_pending


def test_a_success_is_never_run_again() -> None:
    refusal = redispatch(facts(R.completed, "succeeded"), NOW).failure()
    assert refusal.reason == "Event 7 succeeded; a success is never run again"
    assert not refusal.already


@pytest.mark.parametrize("outcome", ["unknown", "failed", "succeeded"])
def test_a_completed_record_its_task_still_carries_is_live(outcome: str) -> None:
    for decided in (redispatch(facts(R.completed, outcome, carried=True), NOW), discard(facts(R.completed, outcome, carried=True))):
        assert "is live: a worker's task still carries it" in decided.failure().reason


@pytest.mark.parametrize("state", [R.seen, R.dispatched])
def test_nothing_live_or_undecided_is_redispatched(state: RecordState) -> None:
    refusal = redispatch(facts(state), NOW).failure()
    assert refusal.reason.startswith("Event 7 is ")


@pytest.mark.parametrize("state", [R.admitted, R.queued])
def test_a_record_already_waiting_to_run_is_not_redispatched(state: RecordState) -> None:
    refusal = redispatch(facts(state), NOW).failure()
    assert refusal.reason == f"Event 7 is already {state}: it runs when its conversation frees"


def test_a_blocked_record_keeps_its_reason_and_is_offered_to_admission_at_once() -> None:
    plan = redispatch(facts(R.blocked, reason="read_failed"), NOW).unwrap()
    assert (plan.to_state, plan.to_reason, plan.offer_at) == (R.blocked, "read_failed", NOW)


def test_a_throttled_block_is_not_offered_before_the_server_deadline() -> None:
    later = NOW + timedelta(minutes=3)
    assert redispatch(facts(R.blocked, reason="throttled", retry_at=later), NOW).unwrap().offer_at == later
    earlier = NOW - timedelta(minutes=3)
    assert redispatch(facts(R.blocked, reason="throttled", retry_at=earlier), NOW).unwrap().offer_at == NOW


def test_a_held_record_returns_to_admitted_or_to_blocked_over_its_reason() -> None:
    assert redispatch(facts(R.held), NOW).unwrap().to_state is R.admitted
    over_a_reason = redispatch(facts(R.held, reason="no_route"), NOW).unwrap()
    assert (over_a_reason.to_state, over_a_reason.offer_at) == (R.blocked, NOW)


def test_a_discarded_record_is_never_run() -> None:
    refusal = redispatch(facts(R.discarded, reason="not_addressed"), NOW).failure()
    assert refusal.reason == "Event 7 discarded (not_addressed); a discarded record is never run"


@pytest.mark.parametrize("state", [R.admitted, R.queued, R.blocked, R.held])
def test_a_record_not_yet_run_is_discarded_by_operator_and_its_notices_canceled(state: RecordState) -> None:
    plan = discard(facts(state)).unwrap()
    assert (plan.to_state, plan.to_reason, plan.cancel_pending) == (R.discarded, BY_OPERATOR, True)


def test_only_an_unknown_outcome_is_left_to_close() -> None:
    assert discard(facts(R.completed, "unknown")).unwrap().to_state is R.discarded
    for outcome in ("succeeded", "failed"):
        assert "only an unknown outcome is left to close" in discard(facts(R.completed, outcome)).failure().reason


def test_a_second_discard_by_a_person_is_already_done_not_an_error() -> None:
    again = discard(facts(R.discarded, reason=BY_OPERATOR, discarded_by_person=True)).failure()
    assert again.already
    assert again.reason == "Event 7 was already discarded by a person"
    by_connector = discard(facts(R.discarded, reason="not_addressed")).failure()
    assert not by_connector.already


@pytest.mark.parametrize("state", [R.seen, R.dispatched])
def test_nothing_live_or_undecided_is_discarded(state: RecordState) -> None:
    assert not discard(facts(state)).failure().already


@given(
    state=st.sampled_from(list(RecordState)),
    outcome=st.sampled_from(OUTCOMES),
    carried=st.booleans(),
    reason=st.sampled_from(["", "no_route", "read_failed"]),
    by_person=st.booleans(),
    unhanded=st.booleans(),
    served=st.booleans(),
)
def test_every_plan_is_a_persons_edge_and_never_reruns_a_success(  # noqa: PLR0917 -- hypothesis draws each
    state: RecordState, outcome: str, carried: bool, reason: str, by_person: bool, unhanded: bool, served: bool
) -> None:
    record = facts(
        state, outcome, carried=carried, reason=reason, discarded_by_person=by_person,
        unhanded=carried and unhanded, served=served,
    )
    for action, decided in ((Action.redispatch, redispatch(record, NOW)), (Action.discard, discard(record))):
        plan = decided.value_or(None)
        if plan is None:
            continue
        assert plan.action is action
        if plan.to_state is not state:  # a blocked record offered again stays where it is
            assert RECORD_EDGES.step(state, plan.to_state, Actor.person).unwrap() is plan.to_state
        assert not carried or state is not R.completed, "a record a live task carries is never decided over"
        assert outcome != "succeeded" or state is not R.completed or action is not Action.redispatch
        assert state is not R.dispatched or (action is Action.discard and record.unhanded), "nothing handed out"
        assert state is not R.seen
        assert served or plan.to_state is not R.admitted, "admitted only where a connector would start it"


def test_nothing_is_admitted_again_in_a_project_the_configuration_does_not_serve() -> None:
    for record in (facts(R.completed, "unknown", served=False), facts(R.held, served=False)):
        refusal = redispatch(record, NOW).failure()
        assert "add the project's route (setup --route), then redispatch" in refusal.reason
    held_over_a_reason = redispatch(facts(R.held, reason="no_route", served=False), NOW).unwrap()
    assert held_over_a_reason.to_state is R.blocked, "admission decides a blocked record, route or not"


def test_a_follow_up_no_worker_was_handed_may_be_discarded_but_not_redispatched() -> None:
    waiting = facts(R.dispatched, carried=True, unhanded=True)
    assert discard(waiting).unwrap().to_state is R.discarded
    assert "is live" in redispatch(waiting, NOW).failure().reason
    handed = facts(R.dispatched, carried=True, unhanded=False)
    assert "is live" in discard(handed).failure().reason
