"""The README's layout of core/ and shell/, rendered from the tree: each package and module on a
line with the opening phrase of its docstring, so the layout names every module where it lives
and nothing that is not there. ``python -m tests.architecture.layout --write`` redraws it in
README.md; ``tests/architecture/test_layout.py`` says which lines differ."""

from __future__ import annotations

import ast
import difflib
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
PACKAGES = ("core", "shell")
BEGIN = "<!-- layout: rendered by tests/architecture/layout.py -->"
END = "<!-- end of the rendered layout -->"
WIDTH = 100
NAME_COLUMN = 30
# A folder of schema text, not of modules: one line says what it holds.
FOLDERS = {"shell/ledger/migrations": "the ledger's schema changes, one numbered .sql file each, in order"}
PHRASE_END = re.compile(r"(?<!\be\.g)(?<!\bi\.e)(?:\.\s|:\s|;\s|\s--\s|\.$)")


def phrase(path: Path) -> str:
    """The opening phrase of a module's docstring: its first sentence up to a colon or a stop."""
    doc = ast.get_docstring(ast.parse(path.read_text())) or "(no docstring)"
    first = " ".join(doc.split("\n\n")[0].split()).replace("``", "")
    match = PHRASE_END.search(first)
    cut = first[: match.start()] if match else first
    if cut.count("(") > cut.count(")"):  # the stop fell inside a parenthesis: drop it whole
        cut = cut[: cut.rindex("(")]
    return cut.strip()


def _line(depth: int, name: str, text: str) -> str:
    head = ("  " * depth + name).ljust(NAME_COLUMN - 1) + " "
    room = WIDTH - len(head)
    if len(text) > room:
        text = text[: room - 4].rsplit(" ", 1)[0] + " ..."
    return (head + text).rstrip()


def _package(folder: Path, depth: int) -> list[str]:
    relative = folder.relative_to(ROOT).as_posix()
    if relative in FOLDERS:
        return [_line(depth, folder.name + "/", FOLDERS[relative])]
    init = folder / "__init__.py"
    lines = [_line(depth, folder.name + "/", phrase(init) if init.exists() else "")]
    for path in sorted(folder.iterdir()):
        if path.is_dir() and path.name != "__pycache__" and any(path.rglob("*.py")):  # not a checkout's leftover bytecode
            lines += _package(path, depth + 1)
        elif path.suffix == ".py" and path.name != "__init__.py":
            lines.append(_line(depth + 1, path.name, phrase(path)))
    return lines


def render() -> list[str]:
    """The layout's lines for core/ and shell/, as README.md should hold them."""
    return [line for package in PACKAGES for line in _package(ROOT / package, 0)]


def written(text: str) -> list[str]:
    """The lines README.md holds between its layout markers, inside the code fence."""
    if BEGIN not in text or END not in text:
        return []
    inside = text.split(BEGIN, 1)[1].split(END, 1)[0].strip("\n").splitlines()
    return [line for line in inside if not line.startswith("```")]


def differences(text: str) -> list[str]:
    """Which lines of the README's layout differ from the tree, as a unified diff; none when true."""
    return list(difflib.unified_diff(written(text), render(), "README.md", "the tree", lineterm="", n=0))


def redraw(text: str) -> str:
    block = "\n".join([BEGIN, "```", *render(), "```", END])
    if BEGIN not in text:
        raise SystemExit(f"README.md has no {BEGIN!r} to redraw from")
    before, rest = text.split(BEGIN, 1)
    return before + block + rest.split(END, 1)[1]


if __name__ == "__main__":
    if sys.argv[1:] == ["--write"]:
        README.write_text(redraw(README.read_text()))
    else:
        print("\n".join(differences(README.read_text())) or "README.md's layout agrees with the tree")
