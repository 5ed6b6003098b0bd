"""The ledger's rules generated from core (``shell.ledger.rules``), against real SQLite files:
equivalent to the hand-written triggers and CHECKs main held at schema 18 (every pair of states,
every note, every value of every vocabulary), and an old ledger of any version 1..19 upgraded on
open to exactly a new ledger's schema, its rows intact."""

from __future__ import annotations

import itertools
import os
import shutil
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from core import notes
from shell.clock import FakeClock
from shell.ledger import rules
from shell.ledger.connection import MIGRATIONS, SCHEMA_VERSION, Ledger, open_ledger
from tests.ledger.conftest import insert_row
from tests.ledger.test_ledger_dispatch_lifecycle import EVERY_PAIR, TABLES, Rows
from tests.support.frozen_ledger import FROZEN_VERSION, build, open_frozen
from tests.support.ids import set_apart

STAMP = "2026-11-29T12:00:00.000000000Z"
Outcome = tuple[bool, Any]


@pytest.fixture(scope="session")
def frozen_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("frozen")
    os.chmod(directory, 0o700)
    build(directory / "frozen.db")
    return directory / "frozen.db"


@pytest.fixture
def frozen(ledger_directory: Path, frozen_template: Path) -> Iterator[Ledger]:
    """Main's ledger at schema 18 as main made it: the hand-written rules, never migrated again."""
    path = ledger_directory / "frozen.db"
    shutil.copyfile(frozen_template, path)
    with open_frozen(path) as opened:
        yield set_apart(opened)


def test_the_frozen_schema_is_main_s_last() -> None:
    assert FROZEN_VERSION == SCHEMA_VERSION == len(MIGRATIONS)


def test_no_migration_text_names_sqlite_master() -> None:
    """The schema's text is never edited in place by a migration: a vocabulary is a generated rule."""
    assert [migration.name for migration in MIGRATIONS if "sqlite_master" in migration.sql.lower()] == []


# Equivalence: the same writes, the same outcome, under main's rules and the generated ones.


def _pair_outcome(ledger: Ledger, name: str, source: Any, target: Any) -> Outcome:
    table = TABLES[name]
    with ledger.write() as connection:
        move = table.make(Rows(connection, insert_row), source)
    try:
        with ledger.write():
            move(target)
        accepted = True
    except sqlite3.IntegrityError:
        accepted = False
    with ledger.read() as connection:
        return accepted, connection.execute(table.read).fetchone()[0]


NEWER_THAN_MAIN = frozenset({("guard", "refused"), ("guard", "abandoned")})  # judged against core alone
MAIN_S_PAIRS = [pair for pair in EVERY_PAIR
                if not {(pair.values[0], str(pair.values[1])), (pair.values[0], str(pair.values[2]))} & NEWER_THAN_MAIN]


@pytest.mark.parametrize(("name", "source", "target"), MAIN_S_PAIRS)
def test_every_pair_of_every_lifecycle_has_main_s_outcome(
    ledger: Ledger, frozen: Ledger, name: str, source: Any, target: Any
) -> None:
    assert _pair_outcome(ledger, name, source, target) == _pair_outcome(frozen, name, source, target)


OUTBOX_STATES = ("pending", "sending", "sent", "indeterminate", "canceled", "abandoned")
NOTES = (
    "", "get_dispatch", "not created", "|".join(sorted(notes.NOT_CREATED_NOTES)[:2]),
    *sorted(notes.NOT_CREATED_NOTES | notes.RESENDABLE_NOTES),
)


def _each(connection: sqlite3.Connection, write: Callable[..., object], *args: Any, **columns: Any) -> bool:
    """``write(*args, **columns)`` under a savepoint: whether it was accepted (a refusal undoes
    only itself)."""
    connection.execute("SAVEPOINT attempt")
    try:
        write(*args, **columns)
    except sqlite3.IntegrityError:
        connection.execute("ROLLBACK TO attempt")
        return False
    finally:
        connection.execute("RELEASE attempt")
    return True


def _outbox_outcomes(ledger: Ledger, source: str, target: str) -> list[tuple[str, str, bool]]:
    receipts = itertools.count(1000)
    found = []
    with ledger.write() as connection:
        for old_note, new_note in itertools.product(NOTES, NOTES):
            intent = insert_row(
                connection, "outbox", intent_key=f"k:{next(receipts)}", state=source, note=old_note,
                sending_at=None if source in ("pending", "canceled") else STAMP,
                receipt_id=next(receipts) if source == "sent" else None,
            )
            accepted = _each(
                connection, connection.execute,
                "UPDATE outbox SET state = ?, note = ?, sending_at = coalesce(sending_at, ?),"
                " receipt_id = CASE WHEN ? = 'sent' THEN coalesce(receipt_id, ?) ELSE receipt_id END WHERE id = ?",
                (target, new_note, STAMP, target, next(receipts), intent),
            )
            found.append((old_note, new_note, accepted))
    return found


FORGED = ("sending|sent", "sent|pending", "pending>sending", "")
"""Targets no state is: a value the rule could mistake for a listed pair if it looked carelessly."""


@pytest.mark.parametrize(("source", "target"), list(itertools.product(OUTBOX_STATES, OUTBOX_STATES + FORGED)))
def test_every_outbox_pair_with_every_note_has_main_s_outcome(
    ledger: Ledger, frozen: Ledger, source: str, target: str
) -> None:
    """The note the row carried and the note the move writes, each of core's and some of none."""
    assert _outbox_outcomes(ledger, source, target) == _outbox_outcomes(frozen, source, target)


STOP_REASONS = ("", "finished", "failed", "lost", "bogus", "finished|lost")


def _attempt_outcomes(ledger: Ledger) -> list[tuple[str, str, str, str, bool]]:
    found = []
    ids = itertools.count(1)
    with ledger.write() as connection:
        task = insert_row(connection, "tasks")
        for source, stop, target, new_stop in itertools.product(
            ("launching", "running", "ended"), STOP_REASONS, ("launching", "running", "ended", "running|ended"),
            STOP_REASONS,
        ):
            attempt = f"att_{next(ids):024x}"
            if not _each(
                connection, insert_row, connection, "attempts", id=attempt, task_id=task, seq=int(attempt[4:], 16),
                state=source, stop_reason=stop,
            ):
                found.append((source, stop, target, new_stop, False))
                continue
            accepted = _each(
                connection, connection.execute,
                "UPDATE attempts SET state = ?, stop_reason = ? WHERE id = ?", (target, new_stop, attempt),
            )
            found.append((source, stop, target, new_stop, accepted))
    return found


def test_every_attempt_pair_with_every_stop_reason_has_main_s_outcome(ledger: Ledger, frozen: Ledger) -> None:
    assert _attempt_outcomes(ledger) == _attempt_outcomes(frozen)


def _last_task(connection: sqlite3.Connection) -> int:
    return int(connection.execute("SELECT max(id) FROM tasks").fetchone()[0])


def _vocabulary_writes(table: str, column: str) -> tuple[Callable[[sqlite3.Connection, int, str], object], str]:
    """How to insert a row of ``table`` whose ``column`` is a value, and the rows it needs first."""
    if table == "live_lane":
        return (lambda c, n, value: c.execute(
            "INSERT INTO live_lane (id, state, since, updated_at) VALUES (1, ?, ?, ?)"
            " ON CONFLICT (id) DO UPDATE SET state = excluded.state", (value, STAMP, STAMP)), "")
    if table == "losses":
        return (lambda c, n, value: c.execute(
            "INSERT INTO losses (cause, after_id, cursor, state, recorded_at, due_at, window_ends_at)"
            " VALUES ('overflow', 0, 0, ?, ?, ?, ?)", (value, STAMP, STAMP, STAMP)), "")
    if table == "task_events":
        return (lambda c, n, value: insert_row(c, "task_events", task_id=_last_task(c), event_id=n, **{column: value}),
                "events")
    if table == "attempts":
        return (lambda c, n, value: insert_row(
            c, "attempts", id=f"att_{n:024x}", task_id=insert_row(c, "tasks"), seq=n, **{column: value},
            **({"stop_reason": "finished"} if column == "state" and value == "ended" else {}),
        ), "")
    if table == "outbox":
        return (lambda c, n, value: insert_row(
            c, "outbox", intent_key=f"k:{n}", **{column: value},
            **({"sending_at": STAMP} if column == "state" else {}),
            **({"receipt_id": n} if column == "state" and value == "sent" else {}),
        ), "")
    return (lambda c, n, value: insert_row(c, "events", id=n, **{column: value}), "")


def _vocabulary_outcomes(ledger: Ledger, table: str, column: str, values: tuple[str, ...]) -> list[tuple[str, bool]]:
    write, needs = _vocabulary_writes(table, column)
    tried = (*values, "bogus", values[-1] + " ", values[-1].upper() + "X", "|".join(values[:2]), "|")
    found = []
    with ledger.write() as connection:
        insert_row(connection, "tasks")
        for number, value in enumerate(tried, start=1):
            if needs:
                insert_row(connection, "events", id=number)
            found.append((value, _each(connection, write, connection, number, value)))
        if table in ("events", "outbox", "task_events", "attempts"):
            key = {"events": "id", "outbox": "id", "task_events": "event_id", "attempts": "seq"}[table]
            kept = connection.execute(f"SELECT {key} FROM {table} ORDER BY {key} LIMIT 1").fetchone()
            if kept is not None and column not in ("state", "delivery", "guard"):
                for value in tried:
                    update = f"UPDATE {table} SET {column} = ? WHERE {key} = ?"
                    found.append((f"update {value}", _each(connection, connection.execute, update, (value, kept[0]))))
    return found


VOCABULARIES = [pytest.param(*entry, id=f"{entry[0]}.{entry[1]}") for entry in rules.vocabularies()]


@pytest.mark.parametrize(("table", "column", "values"), VOCABULARIES)
def test_every_value_of_every_vocabulary_has_main_s_outcome(
    ledger: Ledger, frozen: Ledger, table: str, column: str, values: tuple[str, ...]
) -> None:
    assert _vocabulary_outcomes(ledger, table, column, values) == _vocabulary_outcomes(frozen, table, column, values)


@pytest.mark.parametrize(("table", "column", "values"), VOCABULARIES)
def test_every_vocabulary_refuses_exactly_what_core_does_not_name(
    ledger: Ledger, table: str, column: str, values: tuple[str, ...]
) -> None:
    """The generated rule itself, inserting and updating: each value core does not name is refused
    by the vocabulary, each it names is not (another rule may still refuse the row)."""
    write, needs = _vocabulary_writes(table, column)
    tried = (*values, "bogus", values[-1] + " ", values[-1].upper() + "X", "|".join(values[:2]), "|", "")
    refused_by_vocabulary = set()
    with ledger.write() as connection:
        insert_row(connection, "tasks")
        for number, value in enumerate(tried, start=1):
            if needs:
                insert_row(connection, "events", id=number)
            connection.execute("SAVEPOINT attempt")
            try:
                write(connection, number, value)
            except sqlite3.IntegrityError as refusal:
                said = str(refusal)
                if said.startswith(f"{table}.") and column in said and said.endswith(": a value core does not name"):
                    refused_by_vocabulary.add(value)
            connection.execute("ROLLBACK TO attempt")
            connection.execute("RELEASE attempt")
    assert refused_by_vocabulary == set(tried) - set(values)


# Upgrading: a ledger main made at any version opens with today's code, brought up to date.


def _schema(path: Path) -> set[tuple[str, ...]]:
    connection = sqlite3.connect(path)
    try:
        return {tuple(map(str, row)) for row in connection.execute("SELECT type, name, tbl_name, sql FROM sqlite_master")}
    finally:
        connection.close()


def _rows(path: Path) -> list[tuple[Any, ...]]:
    connection = sqlite3.connect(path)
    try:
        return [
            *connection.execute("SELECT id, state, seen_at FROM events ORDER BY id"),
            *connection.execute("SELECT id, token_sha256 FROM tasks ORDER BY id"),
            *connection.execute("SELECT id, kind, state, body FROM outbox ORDER BY id"),
        ]
    finally:
        connection.close()


REPLACED = {
    "outbox_state_edges",
    "events_state_edges",
    "task_events_delivery_moves_forward",
    "task_events_guard_settles_once",
    "attempts_state_moves_forward",
}
"""Main's hand-written edge triggers: a later edge of core's would be refused by one left standing."""


def test_the_hand_written_edge_triggers_are_gone_from_a_new_ledger(ledger: Ledger) -> None:
    with ledger.read() as connection:
        names = {
            str(row[0]) for row in connection.execute("SELECT name FROM sqlite_master WHERE type IN ('trigger', 'index')")
        }
    assert names & REPLACED == set()
    assert {name for name in names if name.startswith("rule_")} == set(rules.generated())


@pytest.mark.parametrize("version", range(1, FROZEN_VERSION + 1))
def test_a_ledger_main_made_at_any_version_is_brought_up_to_date_on_open(
    ledger_directory: Path, version: int
) -> None:
    old = ledger_directory / "old.db"
    build(old, version)
    connection = sqlite3.connect(old, isolation_level=None)
    with connection:
        insert_row(connection, "events", id=7, state="seen")
        insert_row(connection, "tasks")
        insert_row(connection, "outbox", intent_key="guard_ack:event:7", note="kept")
    connection.close()
    before = _rows(old)
    with open_ledger(old, clock=FakeClock()) as upgraded:
        assert upgraded.schema_version() == SCHEMA_VERSION
    with open_ledger(ledger_directory / "new.db", clock=FakeClock()):
        pass
    assert _rows(old) == before
    assert _schema(old) == _schema(ledger_directory / "new.db")
    assert {name for _, name, _, _ in _schema(old)} & REPLACED == set()
    with open_ledger(old, clock=FakeClock()) as upgraded, upgraded.write() as writing:
        writing.execute("UPDATE events SET lane = 'inbox' WHERE id = 7")  # migration 16's value
        with pytest.raises(sqlite3.IntegrityError, match=r"outbox\.kind.*: a value core does not name"):
            insert_row(writing, "outbox", intent_key="x", kind="worker_shout")


def test_a_ledger_with_the_rules_in_force_reopens_without_a_write(ledger_path: Path) -> None:
    open_ledger(ledger_path, clock=FakeClock()).close()
    with open_ledger(ledger_path, clock=FakeClock()) as again, again.read() as reading:
        assert rules.in_force(reading)
        assert reading.total_changes == 0


def test_a_rule_changed_in_the_file_is_written_again_on_open(ledger_path: Path) -> None:
    """A rule whose text differs from what core generates (an older program's) is replaced; a
    ``rule_`` trigger no longer generated is dropped."""
    open_ledger(ledger_path, clock=FakeClock()).close()
    connection = sqlite3.connect(ledger_path, isolation_level=None)
    with connection:
        connection.execute("DROP TRIGGER rule_outbox_state_edges")
        connection.execute("CREATE TRIGGER rule_outbox_state_edges BEFORE UPDATE OF state ON outbox BEGIN SELECT 1; END")
        connection.execute("CREATE TRIGGER rule_gone BEFORE UPDATE OF state ON outbox BEGIN SELECT 1; END")
    connection.close()
    with open_ledger(ledger_path, clock=FakeClock()) as again, again.read() as reading:
        assert rules.in_force(reading)
