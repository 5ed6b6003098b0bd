"""Every log line of the shell whose words name an id (``event=5``, ``attempt %s``...) gives that id
as a value too (``extra=ids(...)``, ``shell.log_format``): with ``--log-format json`` a pipeline reads
the ids as fields, never out of the prose."""

from __future__ import annotations

import ast
import re
from pathlib import Path

SHELL = Path(__file__).resolve().parents[2] / "shell"
LEVELS = {"debug", "info", "warning", "error", "exception", "critical"}
NAMES_AN_ID = re.compile(r"(?<!after )\b(?:event|task|attempt|intent|kind)(?:=| %)")  # "after event N": a position


def log_calls(tree: ast.AST) -> list[ast.Call]:
    return [node for node in ast.walk(tree)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in LEVELS
            and isinstance(node.func.value, ast.Name) and node.func.value.id.endswith("log")
            and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)]


def test_every_log_line_that_names_an_id_gives_it_as_a_field() -> None:
    missing, naming = [], 0
    for path in sorted(SHELL.rglob("*.py")):
        if "standin" in path.parts:  # the stand-in's own log: Basecamp's, not the connector's
            continue
        for call in log_calls(ast.parse(path.read_text())):
            words = call.args[0].value  # type: ignore[attr-defined]
            if not NAMES_AN_ID.search(words):
                continue
            naming += 1
            if not any(keyword.arg == "extra" for keyword in call.keywords):
                missing.append(f"{path.relative_to(SHELL.parent)}:{call.lineno}: {words[:60]!r}")
    assert naming >= 20, "the search finds the call sites"
    assert not missing, "\n".join(missing)
