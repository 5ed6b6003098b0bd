"""Only ``shell/ledger/`` runs SQL: no ``.execute``, ``.executemany`` or ``.executescript`` call
anywhere else in ``core/`` or ``shell/`` (read from the source's syntax tree, so a call split
over lines or made through another name for the connection is found all the same)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SQL_CALLS = frozenset({"execute", "executemany", "executescript"})
SQL_HOME = ROOT / "shell" / "ledger"


def sql_calls(source: str) -> list[int]:
    """The line of every ``<anything>.execute*(...)`` call in ``source``."""
    return [
        node.lineno
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in SQL_CALLS
    ]


def modules_outside_the_ledger() -> list[Path]:
    return sorted(
        path
        for top in ("core", "shell")
        for path in (ROOT / top).rglob("*.py")
        if SQL_HOME not in path.parents
    )


def test_the_walk_sees_every_form_of_an_sql_call() -> None:
    source = 'db.execute("SELECT 1")\nself._c.executemany(q, rows)\n(c).executescript(\n  s\n)\nc.fetchone()\n'
    assert sql_calls(source) == [1, 2, 3]


def test_the_walk_covers_core_and_the_shell_outside_the_ledger() -> None:
    found = {path.relative_to(ROOT).as_posix() for path in modules_outside_the_ledger()}
    assert {"shell/connector.py", "shell/intake/poll_lane.py", "core/message_kinds.py"} <= found
    assert not any(name.startswith("shell/ledger/") for name in found)


@pytest.mark.parametrize("path", modules_outside_the_ledger(), ids=lambda path: path.relative_to(ROOT).as_posix())
def test_only_the_ledger_executes_sql(path: Path) -> None:
    lines = sql_calls(path.read_text())
    assert not lines, f"{path.relative_to(ROOT)} executes SQL at line(s) {lines}: move the query into shell/ledger/"
