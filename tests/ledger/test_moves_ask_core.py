"""The connector's own moves ask ``core.edges`` before any SQL (``shell.ledger.rules.asked``): an illegal
move is refused by core, with no UPDATE run, whatever the triggers would have said."""

from __future__ import annotations

import ast
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from enum import StrEnum
from pathlib import Path
from typing import TypeVar

import pytest

from core.edges import (
    ATTEMPT_EDGES,
    DELIVERY_EDGES,
    GUARD_EDGES,
    TASK_EDGES,
    Actor,
    AttemptState,
    DeliveryState,
    GuardState,
    IntentState,
    LifecycleTable,
    RecordState,
    TaskState,
)
from core.settlement import RowStep
from shell.clock import FakeClock
from shell.ledger import outbox as rows
from shell.ledger import tasks
from shell.ledger.connection import Ledger
from shell.ledger.rules import MoveRefused, asked
from shell.outbox import Outbox
from tests.support.fake_basecamp import AGENT_ID, FakeBasecamp
from tests.support.ids import nth_intent
from tests.support.ledger_world import LedgerWorld


@contextmanager
def _statements(connection: sqlite3.Connection) -> Iterator[list[str]]:
    """Every statement the connection runs meanwhile."""
    ran: list[str] = []
    connection.set_trace_callback(ran.append)
    try:
        yield ran
    finally:
        connection.set_trace_callback(None)


def test_an_illegal_intent_move_is_refused_by_core_before_sql(
    world: LedgerWorld, ledger: Ledger, clock: FakeClock
) -> None:
    world.request(1)
    clock.advance(31)
    Outbox(ledger, FakeBasecamp(clock), AGENT_ID).flush()
    assert world.state_of(nth_intent(1)) == "sent"
    with ledger.write() as connection, _statements(connection) as ran:
        with pytest.raises(MoveRefused, match="never moves from sent to canceled"):
            rows.cancel(connection, 1, IntentState.sent, "a mistake", clock.now())
        assert not [statement for statement in ran if statement.lstrip().upper().startswith("UPDATE")]
    assert world.state_of(nth_intent(1)) == "sent"


def test_the_dispatcher_may_not_discard_a_record_core_refuses_before_sql(
    world: LedgerWorld, ledger: Ledger
) -> None:
    """dispatched -> discarded is a pair the trigger allows (a person's edge): only core's actor
    rule stops the dispatcher taking it."""
    world.request(101)
    world.launch(101)
    discard = RowStep(
        101, DeliveryState.exposed, complete_delivery=False, withdraw=False, record_to=RecordState.discarded
    )
    with ledger.write() as connection, _statements(connection) as ran:
        with pytest.raises(MoveRefused, match="only a person may move a record from dispatched to discarded"):
            tasks._apply(connection, 0, (discard,), world.now())  # the move itself
        assert not [statement for statement in ran if statement.lstrip().upper().startswith("UPDATE")]
    with ledger.read() as connection:
        assert connection.execute("SELECT state FROM events WHERE id = 101").fetchone() == ("dispatched",)


_Ask = Callable[[], StrEnum]
StateT = TypeVar("StateT", bound=StrEnum)


def _ask(table: LifecycleTable[StateT], source: StateT, target: StateT, actor: Actor) -> _Ask:
    return lambda: asked(table, source, target, actor)


@pytest.mark.parametrize(
    "move",
    [
        pytest.param(_ask(GUARD_EDGES, GuardState.armed, GuardState.canceled, Actor.automatic), id="guard"),
        pytest.param(
            _ask(GUARD_EDGES, GuardState.canceled, GuardState.fired, Actor.automatic), id="guard-pair"
        ),
        pytest.param(
            _ask(DELIVERY_EDGES, DeliveryState.exposed, DeliveryState.delivered, Actor.dispatcher),
            id="delivery",
        ),
        pytest.param(
            _ask(ATTEMPT_EDGES, AttemptState.ended, AttemptState.running, Actor.dispatcher), id="attempt"
        ),
        pytest.param(_ask(TASK_EDGES, TaskState.superseded, TaskState.live, Actor.dispatcher), id="task"),
        pytest.param(
            _ask(TASK_EDGES, TaskState.live, TaskState.superseded, Actor.automatic), id="task-actor"
        ),
    ],
)
def test_every_table_family_refuses_an_illegal_move_of_the_connector(move: _Ask) -> None:
    with pytest.raises(MoveRefused) as refused:
        move()
    assert refused.value.illegal.reason in str(refused.value)


def _literal_state(node: ast.expr) -> bool:
    """``XState.member``, or a choice between such literals."""
    if isinstance(node, ast.IfExp):
        return _literal_state(node.body) or _literal_state(node.orelse)
    return isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id.endswith("State")


def test_no_move_in_the_ledger_is_asked_from_a_literal_state() -> None:
    """``asked`` checks nothing when its source is a literal: every call in ``shell/ledger`` passes
    the state read from the row (or the one its caller's compare-and-set expects)."""
    literal = [
        f"{path.name}:{node.lineno}"
        for path in sorted((Path(__file__).parents[2] / "shell" / "ledger").glob("*.py"))
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "asked"
        and len(node.args) >= 2
        and _literal_state(node.args[1])
    ]
    assert literal == []
