"""Where a catalogued rule lives: its source text anywhere in the tree, its tests by name.

Rules:
1. A rule's text is found by content, not by path: each ``find`` must occur exactly once in the
   whole source tree (``core/`` and ``shell/``, Python and SQL). Moving a file, or renaming it,
   costs the catalogue nothing; text that occurs twice, or nowhere, is a stale catalogue, said
   as such and never counted as a proof.
2. A test is named by its function's name (``test_...``), or a whole test module by its file
   name (``test_outbox_kill.py``); each must name exactly one thing under ``tests/``. The node
   id pytest runs is derived here, class included, so moving a test file costs nothing either.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

SOURCE_ROOTS = ("core", "shell")
SOURCE_SUFFIXES = (".py", ".sql")


class StaleCatalogue(Exception):
    """An entry's text or test names no single place in the tree."""


@dataclass(frozen=True, slots=True)
class Located:
    path: str  # relative to the tree's root
    find: str
    replace: str


def source_files(root: Path) -> list[Path]:
    return sorted(
        path
        for top in SOURCE_ROOTS
        for path in (root / top).rglob("*")
        if path.suffix in SOURCE_SUFFIXES and "__pycache__" not in path.parts
    )


class SourceTree:
    """The tree's source text, read once (rule 1)."""

    def __init__(self, root: Path) -> None:
        self._root = root
        self._texts = {str(path.relative_to(root)): path.read_text("utf-8") for path in source_files(root)}

    def locate(self, find: str, replace: str) -> Located:
        places = [(path, text.count(find)) for path, text in self._texts.items() if find in text]
        total = sum(count for _, count in places)
        if total != 1:
            where = ", ".join(f"{path} ({count})" for path, count in places) or "nowhere"
            raise StaleCatalogue(f"the rule's text occurs {total} times in the tree: {where}")
        return Located(places[0][0], find, replace)


class NamedTests:
    """Every test function and test module under ``tests/``, by name (rule 2)."""

    def __init__(self, root: Path) -> None:
        self._root = root
        self._functions: dict[str, list[str]] = {}
        self._modules: dict[str, list[str]] = {}
        for path in sorted((root / "tests").rglob("test_*.py")):
            relative = str(path.relative_to(root))
            self._modules.setdefault(path.name, []).append(relative)
            for node_id in _test_nodes(relative, path.read_text("utf-8")):
                self._functions.setdefault(node_id.rsplit("::", 1)[-1], []).append(node_id)

    def node_ids(self, names: Iterable[str]) -> tuple[str, ...]:
        return tuple(self.node_id(name) for name in names)

    def node_id(self, name: str) -> str:
        found = self._modules.get(name, []) if name.endswith(".py") else self._functions.get(name, [])
        if len(found) != 1:
            where = ", ".join(found) or "nowhere"
            raise StaleCatalogue(f"the test {name!r} names {len(found)} things under tests/: {where}")
        return found[0]


def _test_nodes(relative: str, text: str) -> Sequence[str]:
    tree = ast.parse(text)
    nodes: list[str] = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name.startswith("test_"):
            nodes.append(f"{relative}::{node.name}")
        elif isinstance(node, ast.ClassDef) and node.name.startswith("Test"):
            nodes.extend(
                f"{relative}::{node.name}::{member.name}"
                for member in node.body
                if isinstance(member, ast.FunctionDef | ast.AsyncFunctionDef) and member.name.startswith("test_")
            )
    return nodes
