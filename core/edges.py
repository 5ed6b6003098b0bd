"""The lifecycles the connector keeps, as data: every state, every allowed move, and who may make it.

Rule 1: a lifecycle is a ``LifecycleTable``: a closed set of ``Edge`` values. A pair of states
that is not an edge of the table is refused, whoever asks. Nothing outside this module decides
which moves exist; the ledger's triggers hold the same tables at the database.

Rule 2: every edge names who may take it. ``Actor.automatic`` is the connector itself (a claim,
the sender, reconciliation, a ledger trigger); ``Actor.person`` is a person's recorded decision.
An edge taken by the wrong actor is refused.

Rule 3: an edge may also require the note the moving row carries. That is how a canceled intent
returns to pending only when Basecamp refused its request (``REFUSED_NOTE``): nothing was created,
so a resend cannot double it. A guard canceled by get_dispatch never comes back.

Rule 4: writing the state a row already has is refused unless the table says repeats are allowed.
An outbox intent never "moves" to where it is: its trigger only sees changes.

Rule 5: ``step`` answers ``Success(target)`` or ``Failure(IllegalMove)``, naming both states, the
actor and why. It never raises for a refused move: a refusal is an answer, not a crash.

The outbox intent (spec 4.3), the one table here so far::

    pending        -> sending        automatic  claim (committed before any request)
    pending        -> canceled       automatic  claim finds it no longer called for; get_dispatch; held
    sending        -> sent           automatic  receipt recorded, or adopted by reconciliation
    sending        -> indeterminate  automatic  reconciliation could not decide, or gave up
    sending        -> canceled       automatic  Basecamp refused the request: nothing was created
    indeterminate  -> sent           person     resolved: sent (with the receipt a person found)
    indeterminate  -> abandoned      person     resolved: abandon
    indeterminate  -> pending        person     resolved: resend
    canceled       -> pending        person     resolved: resend, only with the refused note

``sent`` and ``abandoned`` are terminal. The record, task, delivery, guard and attempt states are
named here too, so their tables can join this file in the same form.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Generic, TypeVar

from returns.result import Failure, Result, Success

from core.notes import REFUSED_NOTE

__all__ = [
    "INTENT_EDGES",
    "REFUSED_NOTE",
    "Actor",
    "AttemptState",
    "DeliveryState",
    "Edge",
    "GuardState",
    "IllegalMove",
    "IntentState",
    "LifecycleTable",
    "RecordState",
    "step",
]


class Actor(StrEnum):
    """Who takes an edge."""

    automatic = "automatic"
    person = "person"

    def describe(self) -> str:
        """The actor as a refusal names it."""
        return "a person" if self is Actor.person else "the connector"


class IntentState(StrEnum):
    """An outbox intent's state (spec 4.3)."""

    pending = "pending"  # written and not yet asked for
    sending = "sending"  # claimed for a request; the request may or may not have reached Basecamp
    sent = "sent"  # has its receipt
    indeterminate = "indeterminate"  # could not be reconciled unambiguously; a person decides
    canceled = "canceled"  # never sent: no longer called for, or Basecamp refused the request
    abandoned = "abandoned"  # an indeterminate intent a person decided not to send


class RecordState(StrEnum):
    """A record's state (``events.state``)."""

    seen = "seen"
    admitted = "admitted"
    queued = "queued"
    blocked = "blocked"
    dispatched = "dispatched"
    completed = "completed"
    discarded = "discarded"
    held = "held"


class DeliveryState(StrEnum):
    """An event's delivery on a task (``task_events.delivery``), forward only."""

    admitted = "admitted"
    exposed = "exposed"
    delivered = "delivered"
    completed = "completed"


class GuardState(StrEnum):
    """An event's guard on a task (``task_events.guard``): armed for a request, then settled once."""

    unarmed = ""
    armed = "armed"
    canceled = "canceled"
    fired = "fired"


class AttemptState(StrEnum):
    """A worker run's state (``attempts.state``), forward only."""

    launching = "launching"
    running = "running"
    ended = "ended"


StateT = TypeVar("StateT", bound=StrEnum)


@dataclass(frozen=True, slots=True)
class Edge(Generic[StateT]):
    """One allowed move: from ``source`` to ``target``, by one of ``actors``.

    ``taken_by`` says what takes it, in the domain's words. ``only_with_note``, when set, is the
    note the moving row must carry for the edge to exist.
    """

    source: StateT
    target: StateT
    actors: frozenset[Actor]
    taken_by: str
    only_with_note: str | None = None


@dataclass(frozen=True, slots=True)
class IllegalMove:
    """A refused move, naming the table, both states, the actor and the reason."""

    table: str
    source: str
    target: str
    actor: Actor
    reason: str

    def __str__(self) -> str:
        return self.reason


@dataclass(frozen=True, slots=True)
class LifecycleTable(Generic[StateT]):
    """A lifecycle as data: its name (as a refusal says it) and its edges."""

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

    def edge(self, source: StateT, target: StateT) -> Edge[StateT] | None:
        """The edge from ``source`` to ``target``, or None when the table has none."""
        for edge in self.edges:
            if edge.source == source and edge.target == target:
                return edge
        return None

    def step(
        self, source: StateT, target: StateT, actor: Actor, note: str = ""
    ) -> Result[StateT, IllegalMove]:
        """Move from ``source`` to ``target`` as ``actor``, for a row whose note is ``note``."""
        if source == target and self.repeats_allowed:
            return Success(target)
        edge = self.edge(source, target)
        if edge is None:
            return self._refuse(source, target, actor, f"{self.name} never moves from {source} to {target}")
        if actor not in edge.actors:
            only = " or ".join(sorted(allowed.describe() for allowed in edge.actors))
            return self._refuse(
                source, target, actor,
                f"only {only} may move {self.name} from {source} to {target} ({edge.taken_by}), "
                f"not {actor.describe()}",
            )
        if edge.only_with_note is not None and note != edge.only_with_note:
            return self._refuse(
                source, target, actor,
                f"{self.name} moves from {source} to {target} only when its note reads "
                f"{edge.only_with_note!r}; its note reads {note!r}",
            )
        return Success(target)

    def _refuse(
        self, source: StateT, target: StateT, actor: Actor, reason: str
    ) -> Result[StateT, IllegalMove]:
        return Failure(IllegalMove(self.name, str(source), str(target), actor, reason))


_AUTOMATIC = frozenset({Actor.automatic})
_PERSON = frozenset({Actor.person})

INTENT_EDGES: LifecycleTable[IntentState] = LifecycleTable(
    name="an outbox intent",
    edges=(
        Edge(IntentState.pending, IntentState.sending, _AUTOMATIC, "the claim"),
        Edge(IntentState.pending, IntentState.canceled, _AUTOMATIC, "the claim, get_dispatch or a hold"),
        Edge(IntentState.sending, IntentState.sent, _AUTOMATIC, "a receipt, or adoption by reconciliation"),
        Edge(IntentState.sending, IntentState.indeterminate, _AUTOMATIC, "reconciliation"),
        Edge(IntentState.sending, IntentState.canceled, _AUTOMATIC, "Basecamp refusing the request"),
        Edge(IntentState.indeterminate, IntentState.sent, _PERSON, "a person's resolution: sent"),
        Edge(IntentState.indeterminate, IntentState.abandoned, _PERSON, "a person's resolution: abandon"),
        Edge(IntentState.indeterminate, IntentState.pending, _PERSON, "a person's resolution: resend"),
        Edge(
            IntentState.canceled, IntentState.pending, _PERSON,
            "a person's resend of a refused request", only_with_note=REFUSED_NOTE,
        ),
    ),
)


def step(
    source: IntentState, target: IntentState, actor: Actor, note: str = ""
) -> Result[IntentState, IllegalMove]:
    """Move an outbox intent from ``source`` to ``target`` as ``actor``; ``note`` is its current note."""
    return INTENT_EDGES.step(source, target, actor, note)
