"""The record of the proofs in ``tests/PROOFS.md``: a row a rule, keyed by what a refactor does
not move -- the rule's name, its tests' names and its mutation's fingerprint -- never by a path.

``bin/prove --record`` writes the rows of the rules it proved and keeps every other row; a row
whose rule left the catalogue goes. ``tests/proofs/test_prove.py`` holds the record to the
catalogue: every rule has one row, seen red, for the mutation the catalogue holds now. So a
change that keeps every rule's text (or only re-wraps it) touches no proof file, and one that
rewrites a rule's code must re-anchor its entry and prove it again (``bin/prove --unrecorded``).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

from tests.proofs.mutation import Mutation

PROOFS = Path(__file__).resolve().parents[2] / "tests" / "PROOFS.md"
BEGIN = "<!-- the record: written by bin/prove --record -->"
END = "<!-- end of the record -->"
HEAD = ["| rule | tests | seen red | mutation |", "|---|---|---|---|"]


@dataclass(frozen=True, slots=True)
class Row:
    rule: str
    tests: tuple[str, ...]
    seen: str  # "red: FAILED test_x[...]" or "**GREEN**: ..." / "**BROKEN**: ..."
    mutation: str  # the fingerprint of the mutation proven

    @property
    def red(self) -> bool:
        return self.seen.startswith("red:")

    def line(self) -> str:
        tests = "<br>".join(f"`{test}`" for test in self.tests)
        return f"| {_cell(self.rule)} | {tests} | {_cell(self.seen)} | `{self.mutation}` |"


def fingerprint(mutation: Mutation) -> str:
    """What was proven: the changes and the tests, hashed (the rule's name is the row's key)."""
    text = json.dumps([mutation.changes, mutation.tests])
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _uncell(text: str) -> str:
    return text.strip().replace("\\|", "|")


def _split(line: str) -> list[str]:
    cells, current, escaped = [], "", False
    for character in line.strip()[1:-1]:
        if character == "|" and not escaped:
            cells.append(current)
            current = ""
        else:
            current += character
        escaped = character == "\\" and not escaped
    return [*cells, current]


def rows(text: str) -> dict[str, Row]:
    """The record's rows, by rule name."""
    if BEGIN not in text or END not in text:
        return {}
    found: dict[str, Row] = {}
    for line in text.split(BEGIN, 1)[1].split(END, 1)[0].splitlines():
        if not line.startswith("| ") or line in HEAD:
            continue
        rule, tests, seen, mutation = (_uncell(cell) for cell in _split(line))
        names = tuple(name.strip("`") for name in tests.split("<br>") if name)
        found[rule] = Row(rule, names, seen, mutation.strip("`"))
    return found


def rewritten(text: str, catalogue: list[Mutation], proven: dict[str, Row]) -> str:
    """``text`` with its record holding a row for every catalogued rule that has one, in
    catalogue order: ``proven``'s rows, else the row it had."""
    kept = rows(text) | proven
    lines = [BEGIN, *HEAD, *(kept[m.rule].line() for m in catalogue if m.rule in kept), END]
    block = "\n".join(lines)
    if BEGIN not in text:
        return text.rstrip("\n") + "\n\n" + block + "\n"
    before, rest = text.split(BEGIN, 1)
    return before + block + rest.split(END, 1)[1]


def unproven(text: str, catalogue: list[Mutation]) -> dict[str, str]:
    """Each catalogued rule the record does not hold as red for its mutation as it is now, and why."""
    found = rows(text)
    why = {}
    for mutation in catalogue:
        row = found.get(mutation.rule)
        if row is None:
            why[mutation.rule] = "never proven (bin/prove --unrecorded --record)"
        elif row.mutation != fingerprint(mutation):
            why[mutation.rule] = "its mutation changed since it was proven (bin/prove --unrecorded --record)"
        elif row.tests != mutation.tests:
            why[mutation.rule] = "the record names other tests than the catalogue"
        elif not row.red:
            why[mutation.rule] = f"not red: {row.seen}"
    return why


def problems(text: str, catalogue: list[Mutation]) -> list[str]:
    """Every way the record and the catalogue disagree; none when each rule is proven red as it is."""
    named = {mutation.rule for mutation in catalogue}
    said = [f"{rule}: {why}" for rule, why in unproven(text, catalogue).items()]
    return said + [f"{rule}: recorded but not in the catalogue" for rule in rows(text) if rule not in named]
