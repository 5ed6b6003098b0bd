"""``shell/state/flock.py`` is the only module that takes a file lock: the instance lock, the
pair lock and the token file's refresh all go through it, so the lock and its metadata are
written once (one module per OS safety primitive).
"""

from __future__ import annotations

import ast

from tests.support.sources import sources

HOME = "shell/state/flock.py"


def _file_locks(tree: ast.Module) -> list[int]:
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            lines.extend(node.lineno for alias in node.names if alias.name == "fcntl")
        elif isinstance(node, ast.ImportFrom) and node.module == "fcntl":
            lines.append(node.lineno)
        elif isinstance(node, ast.Call):
            function = node.func
            name = function.attr if isinstance(function, ast.Attribute) else getattr(function, "id", "")
            if name in ("flock", "lockf"):
                lines.append(node.lineno)
    return lines


def test_only_shell_state_flock_takes_a_file_lock() -> None:
    found = {path: lines for path, tree in sources() if path != HOME and (lines := _file_locks(tree))}
    assert found == {}, f"file locks taken outside {HOME}: {found}"


def test_the_home_is_where_the_file_locks_are() -> None:
    homes = {path for path, tree in sources() if _file_locks(tree)}
    assert homes == {HOME}
