"""The lifecycles the connector keeps, as data: every state, every allowed move, and who may make it.

A ``LifecycleTable``, a closed set of ``Edge`` values, alone decides which moves exist: a pair of
states that is not an edge is refused, whoever asks, and the ledger's triggers are generated from
the same pairs (``shell.ledger.rules``); who may take an edge (``Actor``) is core's concern. An
edge may require the moving row's note: a canceled intent returns to pending only when its note
proves nothing was created, a sending one only with a cause proving its request never reached
Basecamp, so no message doubles. Writing the state a row already has is refused unless the table
allows repeats (only the record's does). ``step`` answers ``Success(target)`` or
``Failure(IllegalMove)`` naming both states, the actor and why: a refusal is never a raise."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import ClassVar, Generic, TypeVar

from returns.result import Failure, Result, Success

from core.notes import NOT_CREATED_NOTES, REFUSED_NOTE, RESENDABLE_NOTES
from core.states import AttemptState, DeliveryState, GuardState, IntentState, RecordState, TaskState

__all__ = [  # the states are re-exported: a caller of the tables imports one module
    "ATTEMPT_EDGES", "DELIVERY_EDGES", "GUARD_EDGES", "INTENT_EDGES", "RECORD_EDGES", "REFUSED_NOTE",
    "TASK_EDGES", "Actor", "AttemptState", "DeliveryState", "Edge", "GuardState", "IllegalMove",
    "IntentState", "LifecycleTable", "RecordState", "TaskState", "step",
]  # fmt: skip


class Actor(StrEnum):
    """Who takes an edge. ``Actor.operator`` is another name for ``Actor.person``, the same member."""
    automatic = "automatic"  # the connector itself: a claim, the sender, reconciliation
    person = "person"  # a person's recorded decision
    admission = "admission"  # the verdict on a record
    dispatcher = "dispatcher"  # tasks, attempts and their settlement
    worker = "worker"  # the worker's dispatch tools, bound to its task's token

    operator: ClassVar[Actor]  # the person who decides; set below, not a member

    def describe(self) -> str:
        return _DESCRIPTIONS[self]


Actor.operator = Actor.person

_DESCRIPTIONS: dict[Actor, str] = {
    Actor.automatic: "the connector", Actor.person: "a person", Actor.admission: "admission",
    Actor.dispatcher: "the dispatcher", Actor.worker: "the worker",
}


StateT = TypeVar("StateT", bound=StrEnum)


@dataclass(frozen=True, slots=True)
class Edge(Generic[StateT]):
    """One allowed move: from ``source`` to ``target``, by one of ``actors``; ``taken_by`` says what
    takes it, in the domain's words. ``only_with_notes``, when set, are the notes the moving row may
    carry for the edge to exist: the note it carried, or with ``notes_written_by_the_move`` the one
    the move writes (its cause), as the ledger's generated rule reads ``OLD.note`` or ``NEW.note``."""
    source: StateT
    target: StateT
    actors: frozenset[Actor]
    taken_by: str
    only_with_notes: frozenset[str] | None = None
    notes_written_by_the_move: bool = False


@dataclass(frozen=True, slots=True)
class IllegalMove:
    table: str
    source: str
    target: str
    actor: Actor
    reason: str

    def __str__(self) -> str:
        return self.reason


@dataclass(frozen=True, slots=True)
class LifecycleTable(Generic[StateT]):
    """A lifecycle as data: its name, as a refusal says it, and its edges."""
    name: str
    edges: tuple[Edge[StateT], ...]
    repeats_allowed: bool = False

    def __post_init__(self) -> None:
        pairs = [(edge.source, edge.target) for edge in self.edges]
        if len(pairs) != len(set(pairs)):
            raise ValueError(f"{self.name}: a pair of states is listed as an edge twice")
        for edge in self.edges:
            if not edge.actors:
                raise ValueError(f"{self.name}: the edge {edge.source} -> {edge.target} has no actor")

    def __str__(self) -> str:
        """The table for a reader: one edge a line, its actors and what takes it."""
        width = max(len(edge.source) for edge in self.edges)
        return "\n".join(
            f"{edge.source:<{width}} -> {edge.target:<{width}}  "
            f"{', '.join(sorted(edge.actors)):<22} {edge.taken_by}"
            for edge in self.edges
        )

    def edge(self, source: StateT, target: StateT) -> Edge[StateT] | None:
        for edge in self.edges:
            if edge.source == source and edge.target == target:
                return edge
        return None

    def step(
        self, source: StateT, target: StateT, actor: Actor, note: str = ""
    ) -> Result[StateT, IllegalMove]:
        edge = self.edge(source, target)
        if edge is None and source == target and self.repeats_allowed:
            return Success(target)  # a repeat; a repeat the table lists as an edge is checked below
        span = f"from {source} to {target}"
        if edge is None:
            return self._refuse(source, target, actor, f"{self.name} never moves {span}")
        if actor not in edge.actors:
            only = " or ".join(sorted(allowed.describe() for allowed in edge.actors))
            why = f"only {only} may move {self.name} {span} ({edge.taken_by}), not {actor.describe()}"
            return self._refuse(source, target, actor, why)
        if edge.only_with_notes is not None and note not in edge.only_with_notes:
            wanted = " or ".join(repr(words) for words in sorted(edge.only_with_notes))
            why = f"{self.name} moves {span} only when its note reads {wanted}; its note reads {note!r}"
            return self._refuse(source, target, actor, why)
        return Success(target)

    def _refuse(
        self, source: StateT, target: StateT, actor: Actor, reason: str
    ) -> Result[StateT, IllegalMove]:
        return Failure(IllegalMove(self.name, str(source), str(target), actor, reason))


_AUTOMATIC = frozenset({Actor.automatic})
_PERSON = frozenset({Actor.person})

# ``sent`` and ``abandoned`` are terminal.
INTENT_EDGES: LifecycleTable[IntentState] = LifecycleTable("an outbox intent", edges=(
    Edge(IntentState.pending, IntentState.sending, _AUTOMATIC, "the claim"),
    Edge(IntentState.pending, IntentState.canceled, _AUTOMATIC | _PERSON,
         "the claim, get_dispatch or a hold; a person's discard of its record"),
    Edge(IntentState.sending, IntentState.sent, _AUTOMATIC, "a receipt, or adoption by reconciliation"),
    Edge(IntentState.sending, IntentState.indeterminate, _AUTOMATIC, "reconciliation"),
    Edge(IntentState.sending, IntentState.canceled, _AUTOMATIC,
         "Basecamp refusing the request, or a day of never reaching it"),
    Edge(
        IntentState.sending, IntentState.pending, _AUTOMATIC,
        "a retry of a request that provably never reached Basecamp",
        only_with_notes=NOT_CREATED_NOTES,
        notes_written_by_the_move=True,
    ),
    Edge(IntentState.indeterminate, IntentState.sent, _PERSON, "a person's resolution: sent"),
    Edge(IntentState.indeterminate, IntentState.abandoned, _PERSON, "a person's resolution: abandon"),
    Edge(IntentState.indeterminate, IntentState.pending, _PERSON, "a person's resolution: resend"),
    Edge(
        IntentState.canceled, IntentState.pending, _PERSON,
        "a person's resend of a request that created nothing", only_with_notes=RESENDABLE_NOTES,
    ),
))


def step(
    source: IntentState, target: IntentState, actor: Actor, note: str = ""
) -> Result[IntentState, IllegalMove]:
    """Move an outbox intent; ``note`` is the one it carries."""
    return INTENT_EDGES.step(source, target, actor, note)


_ADMISSION = frozenset({Actor.admission})
_DISPATCHER = frozenset({Actor.dispatcher})
_WORKER = frozenset({Actor.worker})
_WORKER_OR_DISPATCHER = frozenset({Actor.worker, Actor.dispatcher})
_BOOKKEEPING = frozenset({Actor.admission, Actor.dispatcher})
_OPERATOR = frozenset({Actor.operator})

_R = RecordState

# ``discarded`` is terminal, ``completed`` too but for a person's two decision edges (``core.decisions``
# decides them; the ledger takes them only under a decision row at the record's revision). No
# ``blocked -> dispatched``: a task needs an instruction, and blocked has none.
RECORD_EDGES: LifecycleTable[RecordState] = LifecycleTable("a record", repeats_allowed=True, edges=(
    Edge(_R.seen, _R.admitted, _ADMISSION, "a verdict, the conversation not live"),
    Edge(_R.seen, _R.queued, _ADMISSION, "a verdict, the conversation live"),
    Edge(_R.seen, _R.blocked, _ADMISSION, "a verdict"),
    Edge(_R.seen, _R.discarded, _ADMISSION, "a verdict"),
    Edge(_R.blocked, _R.admitted, _ADMISSION, "a verdict re-decided"),
    Edge(_R.blocked, _R.queued, _ADMISSION, "a verdict re-decided, the conversation live"),
    Edge(_R.blocked, _R.blocked, _ADMISSION, "a verdict re-decided: still blocked"),
    Edge(_R.blocked, _R.discarded, _ADMISSION | _OPERATOR, "a verdict, or an operator's discard"),
    Edge(_R.admitted, _R.dispatched, _DISPATCHER, "joining a task"),
    Edge(_R.queued, _R.dispatched, _DISPATCHER, "joining a task"),
    Edge(_R.dispatched, _R.dispatched, _DISPATCHER, "a redispatch onto a new task"),
    Edge(_R.dispatched, _R.admitted, _DISPATCHER,
         "a supersession of a task that never exposed it, or a withdrawal for its one retry"),
    Edge(_R.dispatched, _R.blocked, _DISPATCHER, "a second withdrawal: the worker could not be started"),
    Edge(_R.dispatched, _R.completed, _WORKER_OR_DISPATCHER, "complete_dispatch, or the settlement"),
    Edge(_R.admitted, _R.queued, _BOOKKEEPING, "lifecycle bookkeeping"),
    Edge(_R.admitted, _R.blocked, _BOOKKEEPING, "lifecycle bookkeeping"),
    Edge(_R.queued, _R.blocked, _BOOKKEEPING, "lifecycle bookkeeping"),
    Edge(_R.admitted, _R.discarded, _OPERATOR, "an operator's discard"),
    Edge(_R.queued, _R.discarded, _OPERATOR, "an operator's discard"),
    Edge(_R.admitted, _R.held, _OPERATOR, "a hold"),
    Edge(_R.queued, _R.held, _OPERATOR, "a hold"),
    Edge(_R.held, _R.admitted, _OPERATOR, "a release, or a redispatch"),
    Edge(_R.held, _R.queued, _OPERATOR, "a release, the conversation live"),
    Edge(_R.held, _R.blocked, _OPERATOR, "a redispatch of a record held over a blocking reason"),
    Edge(_R.held, _R.discarded, _OPERATOR, "an operator's discard"),
    Edge(_R.dispatched, _R.discarded, _OPERATOR, "a discard of a follow-up its task never handed out"),
    Edge(_R.completed, _R.admitted, _OPERATOR, "a redispatch, the outcome settled unknown or failed"),
    Edge(_R.completed, _R.discarded, _OPERATOR, "a discard, the outcome settled unknown"),
))

# ``superseded`` is final: its token is refused and its rows retired.
TASK_EDGES: LifecycleTable[TaskState] = LifecycleTable("a task", edges=(
    Edge(TaskState.live, TaskState.superseded, _DISPATCHER | _OPERATOR,
         "supersede_task, or an operator's redispatch"),
))

_D = DeliveryState

# Forward only, never skipping exposure; a withdrawal (the one retry) is a mark on an exposed row.
DELIVERY_EDGES: LifecycleTable[DeliveryState] = LifecycleTable("a delivery", edges=(
    Edge(_D.admitted, _D.exposed, _WORKER_OR_DISPATCHER, "get_dispatch, or the dispatcher at launch"),
    Edge(_D.exposed, _D.delivered, _WORKER, "ack_dispatch"),
    Edge(_D.exposed, _D.completed, _WORKER_OR_DISPATCHER, "complete_dispatch, or the settlement"),
    Edge(_D.delivered, _D.completed, _WORKER_OR_DISPATCHER, "complete_dispatch, or the settlement"),
))

# Written ``''`` or ``armed`` at insert only; a fired guard that never went out says so.
GUARD_EDGES: LifecycleTable[GuardState] = LifecycleTable("a guard", edges=(
    Edge(GuardState.armed, GuardState.canceled, _WORKER, "get_dispatch"),
    Edge(GuardState.armed, GuardState.fired, _AUTOMATIC, "the guard acknowledgement's claim"),
    Edge(GuardState.fired, GuardState.refused, _AUTOMATIC, "the fired guard refused, or given up"),
    Edge(GuardState.fired, GuardState.abandoned, _AUTOMATIC | _PERSON,
         "a person abandoning the fired guard, or a row joining after that"),
))

_A = AttemptState

# Forward only; an ended attempt's stop reason never changes.
ATTEMPT_EDGES: LifecycleTable[AttemptState] = LifecycleTable("an attempt", edges=(
    Edge(_A.launching, _A.running, _DISPATCHER, "the driver started its process"),
    Edge(_A.launching, _A.ended, _DISPATCHER, "the settlement of an attempt that never ran"),
    Edge(_A.running, _A.ended, _DISPATCHER, "the settlement"),
))
