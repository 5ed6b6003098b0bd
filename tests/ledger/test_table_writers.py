"""Each table is written from one module of ``shell/ledger/``: every ``INSERT``, ``UPDATE``,
``DELETE`` or ``REPLACE`` in the ledger's source (its string literals, f-strings' text included)
names a table, and only that table's writer may name it. The package states the same map
(``shell.ledger.TABLE_WRITERS``); a table the map does not name may not be written."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LEDGER = ROOT / "shell" / "ledger"

WRITERS = {
    "events": "records.py",
    "checkpoints": "records.py",
    "lane_news": "records.py",
    "inbox_lane": "intake.py",
    "tasks": "tasks.py",
    "attempts": "tasks.py",
    "task_events": "deliveries.py",
    "outbox": "outbox.py",
    "decisions": "decisions.py",
    "hold_marker": "hold.py",
    "generations": "hold.py",
    "revoked_redispatches": "hold.py",
    "live_lane": "intake.py",
    "losses": "intake.py",
    "gaps": "intake.py",
    "credential_fingerprints": "fingerprints.py",
    "schema_migrations": "connection.py",
    "sqlite_master": "rules.py",
}
"""Table -> the one module that writes it (rule of ``shell/ledger/__init__.py``)."""

WORKER_MOVES = "worker_moves.py"
WORKER_STATEMENTS = {
    "task_events": (
        "UPDATE task_events SET delivery = 'exposed', exposed_at = ?",
        "UPDATE task_events SET pulled_at = ?",
        "UPDATE task_events SET guard = 'canceled'",
        "UPDATE task_events SET delivery = 'delivered', delivered_at = ?",
    ),
    "events": ("UPDATE events SET state = 'completed', revision = revision + 1",),
    "attempts": ("UPDATE attempts SET progress_at = ?", "UPDATE attempts SET words_refused = ?"),
    "outbox": ("INSERT INTO outbox (intent_key, kind, event_id, task_id, bucket_id, message_kind, recording_id,",),
}
"""The one exception, by statement: a worker's own moves, which ``worker_moves`` writes beside
the tables' owners (the MCP server imports it, not them); each statement by its head."""
REPORT_STATEMENT = "UPDATE task_events SET "
"""complete_dispatch's report, whose columns an f-string joins: this literal, exactly."""

_WRITE = re.compile(
    r"\b(?:INSERT\s+(?:OR\s+\w+\s+)?INTO|REPLACE\s+INTO|DELETE\s+FROM)\s+(\w+)|\bUPDATE\s+(\w+)\s+SET\b",
    re.IGNORECASE,
)


def statements(source: str) -> list[tuple[str, str]]:
    """(table, the statement from its verb to the literal's end) of every write statement in
    ``source``'s string literals (f-strings' text included)."""
    texts = [
        node.value
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
    ]
    return [
        ((match.group(1) or match.group(2)).lower(), text[match.start() :])
        for text in texts
        for match in _WRITE.finditer(text)
    ]


def tables_written(source: str) -> set[str]:
    """Every table a write statement in ``source``'s string literals names."""
    return {table for table, _ in statements(source)}


def writers() -> dict[str, set[str]]:
    """Table -> every ledger module that writes it."""
    found: dict[str, set[str]] = {}
    for path in sorted(LEDGER.rglob("*.py")):
        for table in tables_written(path.read_text()):
            found.setdefault(table, set()).add(path.relative_to(LEDGER).as_posix())
    return found


def test_the_scan_sees_every_form_of_a_write() -> None:
    source = (
        'a = "INSERT INTO events (id) VALUES (?) ON CONFLICT(id) DO UPDATE SET id = excluded.id"\n'
        'b = f"UPDATE outbox SET {sql} WHERE id = ?"\n'
        'c = "DELETE FROM hold_marker"\n'
        'd = "INSERT OR IGNORE INTO tasks (id) " "VALUES (1)"\n'
        'e = "SELECT state FROM attempts"\n'
    )
    assert tables_written(source) == {"events", "outbox", "hold_marker", "tasks"}


def test_every_table_of_the_map_is_written_where_the_map_says() -> None:
    assert {table: sorted(modules) for table, modules in writers().items()} == {
        table: sorted({module, *([WORKER_MOVES] if table in WORKER_STATEMENTS else [])})
        for table, module in WRITERS.items()
    }


@pytest.mark.parametrize("table", sorted(WRITERS))
def test_each_table_has_one_writing_module(table: str) -> None:
    modules = writers().get(table, set()) - ({WORKER_MOVES} if table in WORKER_STATEMENTS else set())
    assert len(modules) <= 1, f"{table} is written from {sorted(modules)}: fold the writes into {WRITERS[table]}"


def test_the_worker_moves_are_the_workers_statements_only() -> None:
    """``worker_moves`` is the exception by statement: each of its writes is one a worker's call makes."""
    found = statements((LEDGER / WORKER_MOVES).read_text())
    assert {table for table, _ in found} == set(WORKER_STATEMENTS)
    for table, statement in found:
        allowed = statement == REPORT_STATEMENT or statement.startswith(WORKER_STATEMENTS[table])
        assert allowed, f"{WORKER_MOVES} writes {statement!r}: only a worker's own moves belong there"


def test_the_ledger_package_states_the_map() -> None:
    from shell.ledger import TABLE_WRITERS

    assert {table: f"{module}.py" for table, module in TABLE_WRITERS.items()} == WRITERS
