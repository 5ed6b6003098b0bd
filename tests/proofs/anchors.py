"""Where a catalogued rule lives: its source text anywhere in the tree, its tests by name.

A rule's text is found by content, never by path or line, so moving or renaming a file costs the
catalogue nothing. It is found as written, or else as a run of tokens: white space, line breaks
and comments do not count, so re-wrapping, re-indenting or re-commenting the code that holds a
rule leaves its entry anchored, and the replacement is indented to where the code now stands. A run
never begins after a ``.``: a name is never matched as the tail of a longer dotted one.
Text that occurs twice, or nowhere, is a stale catalogue, said as such and never counted as a
proof.

A test is named by its function's name (``test_...``), or a whole test module by its file name
(``test_outbox_kill.py``); each must name exactly one thing under ``tests/``. The node id pytest
runs is derived here, class included, so moving a test file costs nothing either.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

SOURCE_ROOTS = ("core", "shell")
SOURCE_SUFFIXES = (".py", ".sql")

_STRING = r"""[rRbBuUfF]{0,2}(?:\"\"\"(?:\\.|[^\\])*?\"\"\"|'''(?:\\.|[^\\])*?'''|"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*')"""
_TOKENS = {
    ".py": re.compile(rf"(?P<skip>\s+|#[^\n]*|\\\n)|(?P<string>{_STRING})|(?P<word>\w+)|(?P<mark>\S)", re.S),
    ".sql": re.compile(rf"(?P<skip>\s+|--[^\n]*)|(?P<string>{_STRING})|(?P<word>\w+)|(?P<mark>\S)", re.S),
}
_QUOTES = frozenset("\"'")


class StaleCatalogue(Exception):
    """An entry's text or test names no single place in the tree."""


@dataclass(frozen=True, slots=True)
class Token:
    text: str
    start: int
    end: int


@dataclass(frozen=True, slots=True)
class Located:
    """Where a change applies: ``path`` (relative to the tree's root), the span ``start:end`` of
    its text, and what the span becomes."""

    path: str
    start: int
    end: int
    text: str

    def applied(self, source: str) -> str:
        return source[: self.start] + self.text + source[self.end :]


def mutated(texts: dict[str, str], places: Iterable[Located]) -> dict[str, str]:
    """The files ``places`` change, each with every change of it applied (last span first, so each
    span is where it was found)."""
    changed: dict[str, str] = {}
    for place in sorted(places, key=lambda place: (place.path, -place.start)):
        changed[place.path] = place.applied(changed.get(place.path, texts[place.path]))
    return changed


def tokens(text: str, suffix: str = ".py") -> list[Token] | None:
    """``text``'s tokens without white space and comments; None when a token of it is cut short
    (a fragment that begins or ends inside a string), which only an exact match can anchor."""
    found = []
    for match in _TOKENS[suffix].finditer(text):
        if match.lastgroup == "skip":
            continue
        if match.lastgroup == "mark" and match.group() in _QUOTES:
            return None
        found.append(Token(match.group(), match.start(), match.end()))
    return found


def source_files(root: Path) -> list[Path]:
    return sorted(
        path
        for top in SOURCE_ROOTS
        for path in (root / top).rglob("*")
        if path.suffix in SOURCE_SUFFIXES and "__pycache__" not in path.parts
    )


class SourceTree:
    """The tree's source text, read once, and each file's tokens when first asked."""

    def __init__(self, root: Path) -> None:
        self._texts = {str(path.relative_to(root)): path.read_text("utf-8") for path in source_files(root)}
        self._tokens: dict[str, tuple[list[Token], dict[str, list[int]]]] = {}

    def text(self, path: str) -> str:
        return self._texts[path]

    def locate(self, find: str, replace: str) -> Located:
        exact = [(path, text.count(find)) for path, text in self._texts.items() if find in text]
        if sum(count for _, count in exact) == 1:
            path = exact[0][0]
            start = self._texts[path].index(find)
            return Located(path, start, start + len(find), replace)
        wanted = tokens(find)
        spans = [] if not wanted else [(path, span) for path in self._texts for span in self._runs(path, wanted)]

        if len(spans) == 1:
            path, matched = spans[0]
            text = _reindented(find, replace, self._texts[path], matched)
            return Located(path, matched[0].start, matched[-1].end, text)
        places = exact or [(path, sum(1 for p, _ in spans if p == path)) for path in dict(spans)]
        total = max(sum(count for _, count in exact), len(spans))
        where = ", ".join(f"{path} ({count})" for path, count in places) or "nowhere"
        raise StaleCatalogue(f"the rule's text occurs {total} times in the tree: {where}")

    def _runs(self, path: str, wanted: Sequence[Token]) -> list[list[Token]]:
        if path not in self._tokens:
            have = tokens(self._texts[path], Path(path).suffix) or []
            starts: dict[str, list[int]] = {}
            for at, token in enumerate(have):
                starts.setdefault(token.text, []).append(at)
            self._tokens[path] = (have, starts)
        have, starts = self._tokens[path]
        words = [token.text for token in wanted]
        return [
            have[at : at + len(words)]
            for at in starts.get(words[0], [])
            if [token.text for token in have[at : at + len(words)]] == words and not (at and have[at - 1].text == ".")
        ]


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _line_indent(text: str, at: int) -> int:
    return _indent(text[text.rfind("\n", 0, at) + 1 :])


def _reindented(find: str, replace: str, source: str, matched: Sequence[Token]) -> str:
    """``replace`` for the span ``matched`` covers: its first line from the span's first token on,
    its later lines moved by as much as the code moved from where ``find`` had it (measured at
    find's first line when it begins one, else at its first token that begins a line)."""
    found = tokens(find) or []
    moved = 0
    if find[:1] == " ":
        moved = _line_indent(source, matched[0].start) - _indent(find)
    else:
        for index, token in enumerate(found):
            if index and "\n" in find[found[index - 1].end : token.start]:
                moved = _line_indent(source, matched[index].start) - _line_indent(find, token.start)
                break
    lines = replace.strip("\n").lstrip(" ").split("\n")
    shifted = [
        line if not line.strip() else " " * max(0, _indent(line) + moved) + line.lstrip(" ") for line in lines[1:]
    ]
    return "\n".join([lines[0], *shifted])


class NamedTests:
    """Every test function and test module under ``tests/``, by name."""

    def __init__(self, root: Path) -> None:
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
