"""One catalogued rule: the source text that holds it, what it becomes without it, and the tests
that must go red then (``tests.proofs.catalogue`` lists them; ``bin/prove`` runs them)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Mutation:
    rule: str
    path: str
    changes: tuple[tuple[str, str], ...]
    tests: tuple[str, ...]

    @property
    def find(self) -> str:
        return self.changes[0][0]


def rule(
    name: str, path: str, find: str, replace: str, *tests: str, also: tuple[tuple[str, str], ...] = ()
) -> Mutation:
    return Mutation(name, path, ((find, replace), *also), tests)
