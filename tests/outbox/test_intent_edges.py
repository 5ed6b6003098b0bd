"""core.edges: an outbox intent moves only along its edges, and only by whom each edge names."""

from __future__ import annotations

import itertools

import pytest
from returns.result import Failure, Success

from core import notes
from core.edges import (
    INTENT_EDGES,
    REFUSED_NOTE,
    Actor,
    Edge,
    IllegalMove,
    IntentState,
    LifecycleTable,
    RecordState,
    step,
)

S = IntentState
AUTOMATIC, PERSON = Actor.automatic, Actor.person

# The contract, written out by hand, so the table in core/edges.py is checked
# against an independent copy rather than against itself.
ALLOWED: dict[tuple[IntentState, IntentState], frozenset[Actor]] = {
    (S.pending, S.sending): frozenset({AUTOMATIC}),
    (S.pending, S.canceled): frozenset({AUTOMATIC, PERSON}),  # a person: discarding its record
    (S.sending, S.sent): frozenset({AUTOMATIC}),
    (S.sending, S.indeterminate): frozenset({AUTOMATIC}),
    (S.sending, S.canceled): frozenset({AUTOMATIC}),
    (S.sending, S.pending): frozenset({AUTOMATIC}),  # and only with a cause proving nothing was created
    (S.indeterminate, S.sent): frozenset({PERSON}),
    (S.indeterminate, S.abandoned): frozenset({PERSON}),
    (S.indeterminate, S.pending): frozenset({PERSON}),
    (S.canceled, S.pending): frozenset({PERSON}),  # and only with a note proving nothing was created
}
# The note each note-bound edge is tried with in the every-pair test.
NOTE_FOR = {
    (S.canceled, S.pending): REFUSED_NOTE,
    (S.sending, S.pending): notes.NOT_CONNECTED,
}

EVERY_PAIR = list(itertools.product(IntentState, IntentState))
EVERY_MOVE = [(source, target, actor) for (source, target) in EVERY_PAIR for actor in Actor]


def test_there_are_six_intent_states() -> None:
    assert [state.value for state in IntentState] == [
        "pending", "sending", "sent", "indeterminate", "canceled", "abandoned",
    ]


def test_the_table_has_exactly_the_allowed_pairs() -> None:
    assert {(edge.source, edge.target) for edge in INTENT_EDGES.edges} == set(ALLOWED)
    for edge in INTENT_EDGES.edges:
        assert edge.actors == ALLOWED[(edge.source, edge.target)]


@pytest.mark.parametrize(("source", "target", "actor"), EVERY_MOVE)
def test_every_pair_of_intent_states_by_every_actor(
    source: IntentState, target: IntentState, actor: Actor
) -> None:
    note = NOTE_FOR.get((source, target), "")
    expected = actor in ALLOWED.get((source, target), frozenset())
    match step(source, target, actor, note):
        case Success(reached):
            assert expected, f"{source} -> {target} by {actor} should be refused"
            assert reached == target
        case Failure(illegal):
            assert not expected, f"{source} -> {target} by {actor} should be allowed"
            assert isinstance(illegal, IllegalMove)
            assert (illegal.source, illegal.target, illegal.actor) == (source, target, actor)
            assert illegal.table == "an outbox intent"
            assert str(source) in illegal.reason
            assert str(target) in illegal.reason


@pytest.mark.parametrize("state", list(IntentState))
def test_no_state_moves_to_itself(state: IntentState) -> None:
    for actor in Actor:
        assert isinstance(step(state, state, actor), Failure)


@pytest.mark.parametrize("state", [S.sent, S.abandoned])
def test_sent_and_abandoned_are_terminal(state: IntentState) -> None:
    for target, actor in itertools.product(IntentState, Actor):
        assert isinstance(step(state, target, actor, REFUSED_NOTE), Failure)


def test_a_refusal_says_the_edge_does_not_exist() -> None:
    illegal = step(S.sent, S.pending, PERSON).failure()
    assert illegal.reason == "an outbox intent never moves from sent to pending"


@pytest.mark.parametrize(
    ("source", "target"), [pair for pair, actors in ALLOWED.items() if actors == {PERSON}]
)
def test_the_connector_cannot_take_a_persons_edge(source: IntentState, target: IntentState) -> None:
    illegal = step(source, target, AUTOMATIC, NOTE_FOR.get((source, target), "")).failure()
    assert "only a person may move" in illegal.reason
    assert "not the connector" in illegal.reason


@pytest.mark.parametrize(
    ("source", "target"), [pair for pair, actors in ALLOWED.items() if actors == {AUTOMATIC}]
)
def test_a_person_cannot_take_the_connectors_edge(source: IntentState, target: IntentState) -> None:
    illegal = step(source, target, PERSON, NOTE_FOR.get((source, target), "")).failure()
    assert "only the connector may move" in illegal.reason
    assert "not a person" in illegal.reason


def test_a_refused_intent_may_be_sent_again_by_a_person() -> None:
    assert step(S.canceled, S.pending, PERSON, REFUSED_NOTE) == Success(S.pending)


@pytest.mark.parametrize(
    "note",
    [
        notes.CANCELED_BY_GET_DISPATCH,
        notes.CANCELED_BY_HOLD,
        notes.NO_LONGER_CALLED_FOR,
        notes.ATTEMPT_ENDED,
        "",
        REFUSED_NOTE.upper(),
        REFUSED_NOTE + " ",
    ],
)
def test_a_canceled_intent_nothing_refused_never_comes_back(note: str) -> None:
    illegal = step(S.canceled, S.pending, PERSON, note).failure()
    assert REFUSED_NOTE in illegal.reason
    assert "canceled" in illegal.reason


def test_the_refused_note_is_the_words_the_ledger_checks() -> None:
    assert REFUSED_NOTE == notes.REFUSED_NOTE == "the request was refused; no message was created"


def test_the_note_matters_only_where_an_edge_asks_for_it() -> None:
    assert step(S.pending, S.sending, AUTOMATIC, "anything at all") == Success(S.sending)


def test_a_table_refuses_an_edge_listed_twice() -> None:
    edge = Edge(S.pending, S.sending, frozenset({AUTOMATIC}), "the claim")
    with pytest.raises(ValueError, match="twice"):
        LifecycleTable("a thing", (edge, edge))


def test_a_table_refuses_an_edge_nobody_may_take() -> None:
    with pytest.raises(ValueError, match="no actor"):
        LifecycleTable("a thing", (Edge(S.pending, S.sending, frozenset(), "nobody"),))


def test_a_table_may_allow_repeats_for_lifecycles_that_have_them() -> None:
    records = LifecycleTable(
        "a record",
        (Edge(RecordState.seen, RecordState.admitted, frozenset({AUTOMATIC}), "admission"),),
        repeats_allowed=True,
    )
    assert records.step(RecordState.blocked, RecordState.blocked, AUTOMATIC) == Success(
        RecordState.blocked
    )
    assert isinstance(records.step(RecordState.blocked, RecordState.seen, AUTOMATIC), Failure)
    assert records.edge(RecordState.seen, RecordState.admitted) is not None
    assert records.edge(RecordState.admitted, RecordState.seen) is None


@pytest.mark.parametrize("note", sorted(notes.GIVEN_UP_NOTES))
def test_an_intent_given_up_after_a_day_unreached_may_be_sent_again_by_a_person(note: str) -> None:
    assert step(S.canceled, S.pending, PERSON, note) == Success(S.pending)


@pytest.mark.parametrize("note", sorted(notes.NOT_CREATED_NOTES))
def test_a_request_that_never_reached_basecamp_goes_back_to_pending(note: str) -> None:
    assert step(S.sending, S.pending, AUTOMATIC, note) == Success(S.pending)


@pytest.mark.parametrize(
    "note",
    ["", REFUSED_NOTE, notes.ADOPTED, notes.given_up(notes.NOT_CONNECTED), notes.NOT_CONNECTED + " "],
)
def test_a_sending_intent_without_a_cause_proving_nothing_was_created_never_goes_back(note: str) -> None:
    illegal = step(S.sending, S.pending, AUTOMATIC, note).failure()
    assert notes.NOT_CONNECTED in illegal.reason
