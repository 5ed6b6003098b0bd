"""Reconciliation lists a destination once for every intent in doubt there.

Rules:
1. Intents due for reconciliation are grouped by destination (message kind, bucket, recording),
   each group in the order its first intent came, each intent in its group in the order given.
   One listing then answers every intent of a group, reaching back to the earliest ``since``
   among them; each intent's adoption still reads only what was created since its own.
2. So a restart with 10,000 stale intents over 1,000 destinations makes about 1,000 listings,
   not 10,000.
3. Pure: it only groups what it is handed.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol, TypeVar

from core.destinations import Destination


class AtDestination(Protocol):
    @property
    def destination(self) -> Destination: ...


Row = TypeVar("Row", bound=AtDestination)


def by_destination(due: Iterable[Row]) -> list[list[Row]]:
    """``due`` grouped by destination (rule 1)."""
    groups: dict[Destination, list[Row]] = {}
    for row in due:
        groups.setdefault(row.destination, []).append(row)
    return list(groups.values())
