"""The docstring share of core/ and shell/: docstring lines over all lines, and the longest
docstrings. ``python -m tests.architecture.docstring_share [N]`` prints the share and the N
longest (the issue's closing note reports this figure; the aim is near a tenth)."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCUMENTED = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)


def docstrings(path: Path) -> list[tuple[int, int]]:
    """(first line, line count) of every module, class and function docstring in ``path``."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, DOCUMENTED) and node.body:
            first = node.body[0]
            value = first.value if isinstance(first, ast.Expr) else None
            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                found.append((first.lineno, first.end_lineno - first.lineno + 1))
    return found


def main(longest: int) -> None:
    paths = sorted(p for top in ("core", "shell") for p in (ROOT / top).rglob("*.py") if "__pycache__" not in p.parts)
    total = sum(len(p.read_text().splitlines()) for p in paths)
    rows = [(count, f"{p.relative_to(ROOT)}:{line}") for p in paths for line, count in docstrings(p)]
    share = sum(count for count, _ in rows)
    print(f"docstring lines {share} of {total} = {100 * share / total:.1f}%")
    for count, where in sorted(rows, reverse=True)[:longest]:
        print(count, where)


if __name__ == "__main__":
    main(int(sys.argv[1]) if sys.argv[1:] else 0)
