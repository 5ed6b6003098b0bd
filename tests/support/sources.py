"""The project's own source files, parsed: what the one-home tests walk.

Rules:
1. ``sources()`` yields every ``.py`` file under ``core/`` and ``shell/`` (never ``tests/``), with
   its path relative to the repository and its syntax tree.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[2]


def sources() -> Iterator[tuple[str, ast.Module]]:
    for top in ("core", "shell"):
        for path in sorted((REPOSITORY / top).rglob("*.py")):
            relative = path.relative_to(REPOSITORY).as_posix()
            yield relative, ast.parse(path.read_text(encoding="utf-8"), filename=relative)
