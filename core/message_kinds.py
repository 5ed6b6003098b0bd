"""The outbox's message kinds as one table: each kind's label, urgency tier and claim snapshot.

Rules:
1. Every ``IntentKind`` has one row in ``KINDS`` with every part filled; a kind without a row
   is an error at import, not at run time.
2. What is derived from the table is not restated: the urgency tiers (``core.urgency``), the
   narrator's labels (``shell.demo.narration``) and which snapshot the outbox reads before its
   claim (``shell.outbox``) are lookups of it.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from core.intent_kinds import IntentKind


class ClaimNeeds(StrEnum):
    """The snapshot a claim of the kind reads."""

    event = "event"  # the event's record and every task row of the event
    attempt = "attempt"  # the attempt and the live task rows of its task
    nothing = "nothing"  # always claimed


@dataclass(frozen=True, slots=True)
class KindSpec:
    """One kind's parts: ``urgency`` is its tier, 0 the most urgent."""

    label: str
    urgency: int
    needs: ClaimNeeds


KINDS: dict[IntentKind, KindSpec] = {
    IntentKind.guard_ack: KindSpec("guard boost", 0, ClaimNeeds.event),
    IntentKind.worker_ack: KindSpec("the worker's acknowledgement", 0, ClaimNeeds.nothing),
    IntentKind.holding_reply: KindSpec("holding reply", 1, ClaimNeeds.event),
    IntentKind.worker_reply: KindSpec("the worker's reply", 2, ClaimNeeds.nothing),
    IntentKind.worker_note: KindSpec("the worker's note", 2, ClaimNeeds.nothing),
    IntentKind.completion: KindSpec("completion notice", 3, ClaimNeeds.nothing),
    IntentKind.still_running: KindSpec("still-running notice", 4, ClaimNeeds.attempt),
}

_missing = set(IntentKind) - set(KINDS)
if _missing:  # rule 1
    raise ImportError(f"message kinds without a row in KINDS: {sorted(_missing)}")


def urgency_tiers(table: dict[IntentKind, KindSpec] = KINDS) -> tuple[frozenset[IntentKind], ...]:
    """The kinds grouped by tier, most urgent first."""
    tiers = sorted({spec.urgency for spec in table.values()})
    return tuple(frozenset(kind for kind, spec in table.items() if spec.urgency == tier) for tier in tiers)


def label(kind: str) -> str:
    """The words a reader sees for ``kind``; an unknown kind is shown as itself."""
    spec = KINDS.get(kind)  # type: ignore[call-overload]
    return kind if spec is None else spec.label
