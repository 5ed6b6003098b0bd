"""One catalogued rule: the source text that holds it, what it becomes without it, and the tests
that must go red then (``tests.proofs.catalogue`` lists them; ``bin/prove`` runs them).

The text is found anywhere in the tree and the tests by name (``tests.proofs.anchors``): an
entry names no file, so moving code or tests costs the catalogue nothing.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Mutation:
    rule: str
    changes: tuple[tuple[str, str], ...]
    tests: tuple[str, ...]

    @property
    def find(self) -> str:
        return self.changes[0][0]


def rule(name: str, find: str, replace: str, *tests: str, also: tuple[tuple[str, str], ...] = ()) -> Mutation:
    """``tests``: test function names (``test_...``) or test module file names (``test_x.py``)."""
    return Mutation(name, ((find, replace), *also), tests)
