"""core.edges: the record, task, delivery, guard and attempt lifecycles move only along their
edges, and only by whom each edge names.

Every pair of states of every table is tried by every actor against ``LifecycleTable.step``;
the expected answer comes from a copy of the contract written out by hand below, so
the tables in core/edges.py are checked against an independent copy rather than against
themselves.
"""

from __future__ import annotations

import itertools
from enum import StrEnum
from typing import Any

import pytest
from returns.result import Failure, Success

from core import notes
from core.edges import (
    ATTEMPT_EDGES,
    DELIVERY_EDGES,
    GUARD_EDGES,
    INTENT_EDGES,
    RECORD_EDGES,
    TASK_EDGES,
    Actor,
    AttemptState,
    DeliveryState,
    GuardState,
    IllegalMove,
    IntentState,
    LifecycleTable,
    RecordState,
    TaskState,
    step,
)

R, T, D, G, A = RecordState, TaskState, DeliveryState, GuardState, AttemptState
ADMISSION, DISPATCHER, WORKER = Actor.admission, Actor.dispatcher, Actor.worker
OPERATOR, AUTOMATIC = Actor.operator, Actor.automatic

Contract = dict[tuple[Any, Any], frozenset[Actor]]


def by(*actors: Actor) -> frozenset[Actor]:
    return frozenset(actors)


RECORD: Contract = {
    (R.seen, R.admitted): by(ADMISSION),
    (R.seen, R.queued): by(ADMISSION),
    (R.seen, R.blocked): by(ADMISSION),
    (R.seen, R.discarded): by(ADMISSION),
    (R.blocked, R.admitted): by(ADMISSION),
    (R.blocked, R.queued): by(ADMISSION),
    (R.blocked, R.blocked): by(ADMISSION),
    (R.blocked, R.discarded): by(ADMISSION, OPERATOR),
    (R.admitted, R.dispatched): by(DISPATCHER),
    (R.queued, R.dispatched): by(DISPATCHER),
    (R.dispatched, R.dispatched): by(DISPATCHER),
    (R.dispatched, R.admitted): by(DISPATCHER),
    (R.dispatched, R.blocked): by(DISPATCHER),
    (R.dispatched, R.completed): by(WORKER, DISPATCHER),
    (R.admitted, R.queued): by(ADMISSION, DISPATCHER),
    (R.admitted, R.blocked): by(ADMISSION, DISPATCHER),
    (R.queued, R.blocked): by(ADMISSION, DISPATCHER),
    (R.admitted, R.discarded): by(OPERATOR),
    (R.queued, R.discarded): by(OPERATOR),
    (R.admitted, R.held): by(OPERATOR),
    (R.queued, R.held): by(OPERATOR),
    (R.held, R.admitted): by(OPERATOR),
    (R.held, R.queued): by(OPERATOR),
    (R.held, R.blocked): by(OPERATOR),
    (R.held, R.discarded): by(OPERATOR),
    (R.dispatched, R.discarded): by(OPERATOR),  # a follow-up never handed out, discarded
    (R.completed, R.admitted): by(OPERATOR),  # a redispatch after the outcome settled
    (R.completed, R.discarded): by(OPERATOR),  # a discard after the outcome settled
}
TASK: Contract = {(T.live, T.superseded): by(DISPATCHER, OPERATOR)}
DELIVERY: Contract = {
    (D.admitted, D.exposed): by(WORKER, DISPATCHER),
    (D.exposed, D.delivered): by(WORKER),
    (D.exposed, D.completed): by(WORKER, DISPATCHER),
    (D.delivered, D.completed): by(WORKER, DISPATCHER),
}
GUARD: Contract = {
    (G.armed, G.canceled): by(WORKER),
    (G.armed, G.fired): by(AUTOMATIC),
    (G.fired, G.refused): by(AUTOMATIC),  # Basecamp refused the fired guard, or a day of never reaching it
    (G.fired, G.abandoned): by(AUTOMATIC, OPERATOR),  # a person abandoned it; a row joining after that
}
ATTEMPT: Contract = {
    (A.launching, A.running): by(DISPATCHER),
    (A.launching, A.ended): by(DISPATCHER),
    (A.running, A.ended): by(DISPATCHER),
}

TABLES: dict[str, tuple[LifecycleTable[Any], type[StrEnum], Contract]] = {
    "record": (RECORD_EDGES, RecordState, RECORD),
    "task": (TASK_EDGES, TaskState, TASK),
    "delivery": (DELIVERY_EDGES, DeliveryState, DELIVERY),
    "guard": (GUARD_EDGES, GuardState, GUARD),
    "attempt": (ATTEMPT_EDGES, AttemptState, ATTEMPT),
}


def expected(table: str, source: StrEnum, target: StrEnum, actor: Actor) -> bool:
    """The contract's answer: an edge with this actor, or (records only) a repeat no edge names."""
    _, _, contract = TABLES[table]
    if (source, target) in contract:
        return actor in contract[(source, target)]
    return table == "record" and source == target


EVERY_MOVE = [
    pytest.param(name, source, target, actor, id=f"{name}:{source or 'unarmed'}->{target or 'unarmed'}:{actor.name}")
    for name, (_, states, _) in TABLES.items()
    for source, target in itertools.product(states, states)
    for actor in Actor
]


def test_every_pair_of_every_table_is_tried_by_every_actor() -> None:
    pairs = sum(len(states) ** 2 for _, states, _ in TABLES.values())
    assert pairs == 64 + 4 + 16 + 36 + 9 == 129
    assert len(EVERY_MOVE) == pairs * len(Actor) == 645


@pytest.mark.parametrize(("table", "source", "target", "actor"), EVERY_MOVE)
def test_every_pair_of_lifecycle_states_by_every_actor(
    table: str, source: StrEnum, target: StrEnum, actor: Actor
) -> None:
    lifecycle, _, _ = TABLES[table]
    allowed = expected(table, source, target, actor)
    match lifecycle.step(source, target, actor):
        case Success(reached):
            assert allowed, f"{table} {source!r} -> {target!r} by {actor} should be refused"
            assert reached == target
        case Failure(illegal):
            assert not allowed, f"{table} {source!r} -> {target!r} by {actor} should be allowed"
            assert isinstance(illegal, IllegalMove)
            assert (illegal.source, illegal.target, illegal.actor) == (source, target, actor)
            assert illegal.table == lifecycle.name
            assert f"from {source} to {target}" in illegal.reason


@pytest.mark.parametrize("table", list(TABLES))
def test_each_table_lists_exactly_the_contracts_pairs_and_actors(table: str) -> None:
    lifecycle, _, contract = TABLES[table]
    assert {(edge.source, edge.target): edge.actors for edge in lifecycle.edges} == contract


def test_the_pair_counts() -> None:
    counts = {name: len(lifecycle.edges) for name, (lifecycle, _, _) in TABLES.items()}
    assert counts == {"record": 28, "task": 1, "delivery": 4, "guard": 4, "attempt": 3}


def test_only_the_record_table_allows_repeats() -> None:
    assert RECORD_EDGES.repeats_allowed
    for lifecycle in (TASK_EDGES, DELIVERY_EDGES, GUARD_EDGES, ATTEMPT_EDGES, INTENT_EDGES):
        assert not lifecycle.repeats_allowed


@pytest.mark.parametrize("state", [R.seen, R.admitted, R.queued, R.completed, R.discarded, R.held])
def test_a_record_repeat_is_allowed_whoever_writes_it(state: RecordState) -> None:
    for actor in Actor:
        assert RECORD_EDGES.step(state, state, actor) == Success(state)


def test_a_redispatch_is_a_move_of_its_own_not_a_repeat() -> None:
    assert RECORD_EDGES.step(R.dispatched, R.dispatched, DISPATCHER) == Success(R.dispatched)
    illegal = RECORD_EDGES.step(R.dispatched, R.dispatched, WORKER).failure()
    assert illegal.reason == (
        "only the dispatcher may move a record from dispatched to dispatched "
        "(a redispatch onto a new task), not the worker"
    )


def test_discarded_records_are_terminal() -> None:
    for target, actor in itertools.product(RecordState, Actor):
        if target != R.discarded:
            illegal = RECORD_EDGES.step(R.discarded, target, actor).failure()
            assert illegal.reason == f"a record never moves from discarded to {target}"


def test_a_completed_record_leaves_only_by_a_persons_redispatch_or_discard() -> None:
    for target, actor in itertools.product(RecordState, Actor):
        if target == R.completed:
            continue
        moved = RECORD_EDGES.step(R.completed, target, actor)
        if target in (R.admitted, R.discarded) and actor is Actor.person:
            assert moved.unwrap() == target
        elif target in (R.admitted, R.discarded):
            assert moved.failure().reason.startswith(f"only a person may move a record from completed to {target}")
        else:
            assert moved.failure().reason == f"a record never moves from completed to {target}"


def test_blocked_is_never_dispatched_directly() -> None:
    for actor in Actor:
        assert isinstance(RECORD_EDGES.step(R.blocked, R.dispatched, actor), Failure)


def test_a_superseded_task_stays_superseded() -> None:
    for actor in Actor:
        assert isinstance(TASK_EDGES.step(T.superseded, T.live, actor), Failure)
        assert isinstance(TASK_EDGES.step(T.superseded, T.superseded, actor), Failure)


@pytest.mark.parametrize("target", [D.delivered, D.completed])
def test_a_delivery_never_skips_exposure(target: DeliveryState) -> None:
    for actor in Actor:
        illegal = DELIVERY_EDGES.step(D.admitted, target, actor).failure()
        assert illegal.reason == f"a delivery never moves from admitted to {target}"


def test_only_the_worker_acknowledges() -> None:
    illegal = DELIVERY_EDGES.step(D.exposed, D.delivered, DISPATCHER).failure()
    assert illegal.reason == (
        "only the worker may move a delivery from exposed to delivered (ack_dispatch), not the dispatcher"
    )


@pytest.mark.parametrize("target", [G.unarmed, G.armed])
def test_a_guard_is_unarmed_or_armed_only_at_insert(target: GuardState) -> None:
    for source, actor in itertools.product(GuardState, Actor):
        assert isinstance(GUARD_EDGES.step(source, target, actor), Failure)


def test_the_connectors_claim_fires_a_guard_and_the_worker_cancels_it() -> None:
    assert GUARD_EDGES.step(G.armed, G.fired, AUTOMATIC) == Success(G.fired)
    assert GUARD_EDGES.step(G.armed, G.canceled, WORKER) == Success(G.canceled)
    assert "only the connector may move a guard" in GUARD_EDGES.step(G.armed, G.fired, WORKER).failure().reason


def test_an_attempt_never_moves_back() -> None:
    for source, target in [(A.running, A.launching), (A.ended, A.running), (A.ended, A.launching)]:
        for actor in Actor:
            assert isinstance(ATTEMPT_EDGES.step(source, target, actor), Failure)


def test_an_operator_is_a_person_for_the_intent_table_too() -> None:
    assert Actor.operator is Actor.person
    assert Actor.operator.describe() == "a person"
    assert list(Actor) == [AUTOMATIC, Actor.person, ADMISSION, DISPATCHER, WORKER]
    assert step(IntentState.indeterminate, IntentState.abandoned, Actor.operator) == Success(
        IntentState.abandoned
    )


@pytest.mark.parametrize(
    ("actor", "words"),
    [(AUTOMATIC, "the connector"), (Actor.person, "a person"), (ADMISSION, "admission"),
     (DISPATCHER, "the dispatcher"), (WORKER, "the worker")],
)
def test_a_refusal_names_the_actor_in_words(actor: Actor, words: str) -> None:
    assert actor.describe() == words


def test_a_table_renders_for_a_reader_one_line_an_edge_with_its_actors_and_what_takes_it() -> None:
    for table in (INTENT_EDGES, RECORD_EDGES, TASK_EDGES, DELIVERY_EDGES, GUARD_EDGES, ATTEMPT_EDGES):
        lines = str(table).splitlines()
        assert len(lines) == len(table.edges)
        for line, edge in zip(lines, table.edges, strict=True):
            assert line.split()[:3] == [edge.source, "->", edge.target]
            assert all(actor in line for actor in edge.actors)
            assert line.endswith(edge.taken_by)


def test_a_refusal_says_who_may_take_the_edge_and_carries_the_move_it_refused() -> None:
    refused = RECORD_EDGES.step(R.dispatched, R.completed, ADMISSION)
    assert refused == Failure(IllegalMove(
        "a record", "dispatched", "completed", ADMISSION,
        "only the dispatcher or the worker may move a record from dispatched to completed"
        " (complete_dispatch, or the settlement), not admission",
    ))


def test_a_refusal_for_its_note_names_every_note_the_edge_takes_and_the_one_it_got() -> None:
    refused = step(IntentState.sending, IntentState.pending, AUTOMATIC)
    assert isinstance(refused, Failure)
    wanted = " or ".join(repr(words) for words in sorted(notes.NOT_CREATED_NOTES))
    assert refused.failure().reason == (
        f"an outbox intent moves from sending to pending only when its note reads {wanted}; its note reads ''"
    )


def test_a_rendered_edge_lists_its_actors_comma_separated() -> None:
    lines = str(RECORD_EDGES).splitlines()
    line = next(line for line in lines if line.split()[:3] == ["dispatched", "->", "completed"])
    assert "dispatcher, worker" in line
