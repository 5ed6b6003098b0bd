"""core.resolution: what a person may decide about an intent, and what the ledger writes for it."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from datetime import UTC, datetime

import pytest
from returns.result import Failure, Success

from core import notes
from core.edges import Actor, IntentState, step
from core.resolution import Abandon, Move, RefusedDecision, Resend, Resolution, Sent, open_decisions, resolve

NOW = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)
BY = "local:jorge"
REFUSED = notes.REFUSED_NOTE
S = IntentState


def decisions(by: str = BY) -> list[Resolution]:
    return [Sent(4242, by), Abandon(by), Resend(by)]


# -- from indeterminate ---------------------------------------------------------------------


def test_an_indeterminate_intent_a_person_found_is_sent_with_its_receipt() -> None:
    assert resolve(S.indeterminate, "2 matching messages at the destination", Sent(4242, BY), NOW) == (
        Success(Move(S.sent, "resolved: sent, receipt unchecked", BY, receipt_id=4242, finished_at=NOW))
    )


def test_a_receipt_read_and_checked_first_is_recorded_as_checked() -> None:
    checked = Sent(4242, BY, checked=True)
    assert resolve(S.indeterminate, "2 matching messages at the destination", checked, NOW) == (
        Success(Move(S.sent, "resolved: sent, receipt checked", BY, receipt_id=4242, finished_at=NOW))
    )


def test_an_indeterminate_intent_may_be_abandoned() -> None:
    assert resolve(S.indeterminate, "listing failed 10 times", Abandon(BY), NOW) == Success(
        Move(S.abandoned, "resolved: abandon", BY, finished_at=NOW)
    )


def test_a_resend_starts_the_request_and_its_reconciliation_afresh() -> None:
    assert resolve(S.indeterminate, "", Resend(BY), NOW) == Success(
        Move(S.pending, "resolved: resend", BY, reset_reconciliation=True, not_before=NOW)
    )


def test_only_a_resend_resets_reconciliation() -> None:
    sent = resolve(S.indeterminate, "", Sent(1, BY), NOW).unwrap()
    abandoned = resolve(S.indeterminate, "", Abandon(BY), NOW).unwrap()
    assert not sent.reset_reconciliation
    assert not abandoned.reset_reconciliation
    assert sent.not_before is None
    assert abandoned.not_before is None


# -- from canceled --------------------------------------------------------------------------


def test_a_person_may_resend_a_refused_intent() -> None:
    assert resolve(S.canceled, REFUSED, Resend(BY), NOW) == Success(
        Move(S.pending, "resolved: resend", BY, reset_reconciliation=True, not_before=NOW)
    )


@pytest.mark.parametrize("decision", [Sent(4242, BY), Abandon(BY)])
def test_a_refused_intent_can_only_be_resent(decision: Resolution) -> None:
    refused = resolve(S.canceled, REFUSED, decision, NOW).failure()
    assert "canceled" in refused.reason
    assert "can be resent" in refused.reason


@pytest.mark.parametrize(
    "note",
    [notes.CANCELED_BY_GET_DISPATCH, notes.CANCELED_BY_HOLD, notes.NO_LONGER_CALLED_FOR,
     notes.ATTEMPT_ENDED, ""],
)
@pytest.mark.parametrize("decision", decisions())
def test_a_canceled_intent_nothing_refused_cannot_be_resolved(note: str, decision: Resolution) -> None:
    refused = resolve(S.canceled, note, decision, NOW).failure()
    assert "canceled" in refused.reason
    assert "not refused by Basecamp" in refused.reason


# -- anything else --------------------------------------------------------------------------


@pytest.mark.parametrize("state", [S.pending, S.sending, S.sent, S.abandoned])
@pytest.mark.parametrize("decision", decisions())
def test_nothing_else_can_be_resolved_and_the_refusal_names_the_state(
    state: IntentState, decision: Resolution
) -> None:
    refused = resolve(state, REFUSED, decision, NOW).failure()
    assert isinstance(refused, RefusedDecision)
    assert refused.reason.startswith(f"the intent is {state}:")
    assert "only an indeterminate intent" in refused.reason
    assert str(refused) == refused.reason


@pytest.mark.parametrize(("state", "decision"), list(itertools.product(IntentState, decisions())))
def test_a_resolution_is_allowed_exactly_along_a_persons_edge(
    state: IntentState, decision: Resolution
) -> None:
    for note in (REFUSED, "no longer called for"):
        result = resolve(state, note, decision, NOW)
        allowed = state is S.indeterminate or (
            state is S.canceled and note == REFUSED and isinstance(decision, Resend)
        )
        assert isinstance(result, Success) is allowed
        if isinstance(result, Success):
            move = result.unwrap()
            assert step(state, move.state, Actor.person, note) == Success(move.state)


# -- who decided, and what they found -------------------------------------------------------


@pytest.mark.parametrize("by", ["", "   ", "\t"])
@pytest.mark.parametrize("make", [lambda by: Sent(1, by), Abandon, Resend])
def test_a_resolution_records_who_decided(by: str, make: Callable[[str], Resolution]) -> None:
    refused = resolve(S.indeterminate, "", make(by), NOW)
    assert refused == Failure(
        RefusedDecision("a resolution records who decided: name the person deciding")
    )


@pytest.mark.parametrize("by", ["local:jorge\nsent", "a\rb", "a\u2028b", "a\x1cb"])
def test_who_decided_is_one_line(by: str) -> None:
    assert resolve(S.indeterminate, "", Abandon(by), NOW) == Failure(
        RefusedDecision("who decided must be given on one line")
    )


def test_who_decided_is_recorded_trimmed() -> None:
    move = resolve(S.indeterminate, "", Abandon("  local:jorge \n"), NOW).unwrap()
    assert move.resolved_by == "local:jorge"


@pytest.mark.parametrize("receipt_id", [0, -7])
def test_sent_needs_a_real_receipt(receipt_id: int) -> None:
    refused = resolve(S.indeterminate, "", Sent(receipt_id, BY), NOW).failure()
    assert "positive" in refused.reason
    assert str(receipt_id) in refused.reason


@pytest.mark.parametrize("note", sorted(notes.GIVEN_UP_NOTES))
def test_a_person_may_resend_an_intent_given_up_after_a_day_unreached(note: str) -> None:
    assert resolve(S.canceled, note, Resend(BY), NOW) == Success(
        Move(S.pending, "resolved: resend", BY, reset_reconciliation=True, not_before=NOW)
    )
    assert open_decisions(S.canceled, note) == ("resend",)
