"""One name, one class: no two public classes in ``core/`` and ``shell/`` (the stand-in, under
``shell/basecamp/standin/``, among them) share a name.

A reader who meets ``Receipt`` or ``Person`` in a test or a traceback should not have to ask
which one. Public is what a module offers: a class at its top level (under an ``if`` or ``try``
too) or inside such a class, whose name does not begin with ``_``; a class defined inside a
function is that function's own.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

TOP = Path(__file__).resolve().parents[2]
ROOTS = ("core", "shell")


def public_classes(tree: ast.Module) -> list[ast.ClassDef]:
    found: list[ast.ClassDef] = []

    def visit(body: list[ast.stmt]) -> None:
        for node in body:
            if isinstance(node, ast.ClassDef):
                if not node.name.startswith("_"):
                    found.append(node)
                visit(node.body)
            elif isinstance(node, ast.If | ast.Try | ast.With):
                for part in (node.body, getattr(node, "orelse", []), getattr(node, "finalbody", [])):
                    visit(part)
                for handler in getattr(node, "handlers", []):
                    visit(handler.body)

    visit(tree.body)
    return found


def shared_names(top: Path) -> dict[str, list[str]]:
    """Each public class name defined more than once under ``top``'s roots, with where."""
    where: dict[str, list[str]] = defaultdict(list)
    for root in ROOTS:
        for path in sorted((top / root).rglob("*.py")):
            tree = ast.parse(path.read_text("utf-8"), str(path))
            for node in public_classes(tree):
                where[node.name].append(f"{path.relative_to(top)}:{node.lineno}")
    return {name: places for name, places in sorted(where.items()) if len(places) > 1}


def test_no_two_public_classes_in_core_and_shell_share_a_name() -> None:
    shared = shared_names(TOP)
    assert not shared, "public classes sharing a name (rename one of each):\n" + "\n".join(
        f"  {name}: {', '.join(places)}" for name, places in shared.items()
    )


def test_the_walk_sees_the_stand_in_and_a_name_shared_across_core_and_shell(tmp_path: Path) -> None:
    assert (TOP / "shell/basecamp/standin/world.py").exists()
    (tmp_path / "core").mkdir()
    (tmp_path / "shell/basecamp/standin").mkdir(parents=True)
    (tmp_path / "core/a.py").write_text("class Receipt:\n    pass\n\n\nclass _Private:\n    pass\n")
    (tmp_path / "shell/basecamp/standin/b.py").write_text(
        "if True:\n    class Receipt:\n        pass\n\n\nclass _Private:\n    pass\n\n\n"
        "def f():\n    class Local:\n        pass\n"
    )
    (tmp_path / "shell/c.py").write_text("class Outer:\n    class Local:\n        pass\n")
    assert shared_names(tmp_path) == {
        "Receipt": ["core/a.py:1", "shell/basecamp/standin/b.py:2"],
    }
