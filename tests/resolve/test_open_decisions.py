"""core.resolution.open_decisions with plain values: the decisions a person is offered are exactly
those ``resolve`` allows for well-formed values, for every state and note."""

from __future__ import annotations

from datetime import UTC, datetime

from hypothesis import given
from hypothesis import strategies as st
from returns.result import Success

from core import notes
from core.edges import IntentState
from core.resolution import DECISIONS, Abandon, Resend, Resolution, Sent, open_decisions, resolve

NOW = datetime(2026, 11, 29, 12, tzinfo=UTC)
NOTES = sorted({value for name, value in vars(notes).items() if name.isupper() and isinstance(value, str)})


def well_formed(decision: str) -> Resolution:
    return {"sent": Sent(1, "local:check"), "abandon": Abandon("local:check"), "resend": Resend("local:check")}[
        decision
    ]


def test_an_indeterminate_intent_offers_every_decision_a_refused_one_only_resend() -> None:
    assert open_decisions(IntentState.indeterminate, "") == DECISIONS
    assert open_decisions(IntentState.canceled, notes.REFUSED_NOTE) == ("resend",)
    assert open_decisions(IntentState.canceled, "") == ()
    for state in (IntentState.pending, IntentState.sending, IntentState.sent, IntentState.abandoned):
        assert open_decisions(state, "") == (), state


@given(st.sampled_from(sorted(IntentState)), st.one_of(st.sampled_from(NOTES), st.text(max_size=12)))
def test_what_is_offered_is_exactly_what_resolve_allows(state: IntentState, note: str) -> None:
    allowed = tuple(
        decision for decision in DECISIONS if isinstance(resolve(state, note, well_formed(decision), NOW), Success)
    )
    assert open_decisions(state, note) == allowed
