"""``shell/processes.py`` is the only module that signals a process: every other module goes
through it (``terminate_group``, ``end_child_group``, ``signal_child``, ``is_present``), so the
checks before a signal are written once.
"""

from __future__ import annotations

import ast

from tests.support.sources import sources

HOME = "shell/processes.py"
SIGNALING_CALLS = frozenset({"kill", "killpg", "send_signal", "terminate", "pthread_kill", "raise_signal"})


def _signaling_calls(tree: ast.Module) -> list[int]:
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            function = node.func
            name = function.attr if isinstance(function, ast.Attribute) else getattr(function, "id", "")
            if name in SIGNALING_CALLS:
                lines.append(node.lineno)
        elif isinstance(node, ast.ImportFrom) and node.module in ("os", "signal"):
            lines.extend(node.lineno for alias in node.names if alias.name in SIGNALING_CALLS)
    return lines


def test_only_shell_processes_signals_a_process() -> None:
    found = {path: lines for path, tree in sources() if path != HOME and (lines := _signaling_calls(tree))}
    assert found == {}, f"signals sent outside {HOME}: {found}"


def test_the_home_is_where_the_signals_are() -> None:
    homes = {path for path, tree in sources() if _signaling_calls(tree)}
    assert homes == {HOME}
