"""A ledger is this connector's or it is refused (``shell.ledger.connection.refuse_foreign``): a
new one carries ``application_id`` from its first byte
and ``user_version`` at its schema; an empty file, an empty database and another application's
database are refused by every way in, exit 3, byte for byte untouched; a ledger an older
connector made before the identity is stamped once by its owner. Real SQLite files, and the
real commands (``run``, ``discard``, ``status``) in process."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from shell.basecamp.standin.server import StandIn
from shell.cli.main import main as connect
from shell.errors import EXIT_CONFIG
from shell.ledger.connection import (
    APPLICATION_ID,
    SCHEMA_VERSION,
    LedgerForeign,
    blank_ledger,
    create_private_file,
    open_existing_ledger,
    open_ledger,
    open_ledger_read_only,
)
from tests.support.configured import configure_connector

WAYS_IN: dict[str, Callable[[Path], object]] = {
    "owner": open_ledger,
    "existing": open_existing_ledger,
    "read_only": open_ledger_read_only,
}


def _header(path: Path) -> tuple[int, int]:
    connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return (connection.execute("PRAGMA application_id").fetchone()[0],
                connection.execute("PRAGMA user_version").fetchone()[0])  # fmt: skip
    finally:
        connection.close()


def _empty_file(path: Path) -> None:
    path.write_bytes(b"")


def _empty_database(path: Path) -> None:
    connection = sqlite3.connect(path)
    connection.execute("PRAGMA user_version = 3")  # a header, and nothing else
    connection.close()


def _recipes(path: Path) -> None:
    connection = sqlite3.connect(path)
    connection.execute("CREATE TABLE recipes (name TEXT)")
    connection.execute("INSERT INTO recipes VALUES ('bread')")
    connection.commit()
    connection.close()


def _other_application(path: Path) -> None:
    connection = sqlite3.connect(path)
    connection.execute("PRAGMA application_id = 1598903374")  # another program's own number
    connection.execute("CREATE TABLE schema_migrations (version INTEGER)")
    connection.commit()
    connection.close()


FOREIGN: dict[str, tuple[Callable[[Path], None], str]] = {
    "empty file": (_empty_file, "an empty file (0 bytes), not a ledger"),
    "empty database": (_empty_database, "an empty SQLite database, not this connector's ledger"),
    "another program's tables": (_recipes, "another application's SQLite database (tables recipes)"),
    "another application_id": (_other_application, "another application's SQLite database (application_id 0x5f4d544e)"),
}  # fmt: skip


def test_a_new_ledger_carries_the_identity_and_its_schema_version(ledger_path: Path) -> None:
    open_ledger(ledger_path).close()
    assert _header(ledger_path) == (APPLICATION_ID, SCHEMA_VERSION)


@pytest.mark.parametrize("kind", FOREIGN)
@pytest.mark.parametrize("way_in", WAYS_IN)
def test_a_file_that_is_not_this_connectors_ledger_is_refused_untouched(
    ledger_path: Path, way_in: str, kind: str
) -> None:
    make, said = FOREIGN[kind]
    make(ledger_path)
    os.chmod(ledger_path, 0o600)
    before = ledger_path.read_bytes()
    with pytest.raises(LedgerForeign) as refused:
        WAYS_IN[way_in](ledger_path)
    assert said in str(refused.value)
    assert refused.value.exit_code == EXIT_CONFIG
    assert ledger_path.read_bytes() == before
    assert sorted(path.name for path in ledger_path.parent.iterdir()) == [ledger_path.name], "no -wal, no -shm"


def test_an_older_connectors_ledger_is_read_as_it_is_and_stamped_by_its_owner(ledger_path: Path) -> None:
    open_ledger(ledger_path).close()
    connection = sqlite3.connect(ledger_path)
    connection.execute("PRAGMA application_id = 0")  # as every ledger was before the identity
    connection.execute("PRAGMA user_version = 0")
    connection.close()
    with open_ledger_read_only(ledger_path) as ledger:
        assert ledger.schema_version() == SCHEMA_VERSION
    assert _header(ledger_path) == (0, 0), "a reader never writes"
    open_ledger(ledger_path).close()
    assert _header(ledger_path) == (APPLICATION_ID, SCHEMA_VERSION)


@pytest.fixture(scope="module")
def standin() -> Iterator[StandIn]:
    with StandIn(world="demo") as server:
        yield server


@pytest.mark.parametrize("kind", ["empty file", "another program's tables"])
@pytest.mark.parametrize("argv", [["run"], ["discard", "7"], ["status"]], ids=["run", "discard", "status"])
def test_the_commands_refuse_a_foreign_ledger_with_3_and_leave_it_as_it_was(
    standin: StandIn, tmp_path: Path, kind: str, argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    state = configure_connector(standin, tmp_path, worker=("true",), base_url=standin.base_url)
    ledger_path = state / "ledger.sqlite3"
    make, said = FOREIGN[kind]
    make(ledger_path)
    os.chmod(ledger_path, 0o600)
    before = ledger_path.read_bytes()
    capsys.readouterr()
    assert connect([*argv, "--state-dir", str(state)]) == EXIT_CONFIG
    errors = capsys.readouterr().err.splitlines()
    assert len(errors) == 1, errors
    assert errors[0].startswith("error: ")
    assert said in errors[0]
    assert ledger_path.read_bytes() == before


def test_a_ledger_a_crash_left_before_its_first_migration_opens_and_migrates(ledger_path: Path) -> None:
    """What the owner's way in creates first, alone, as a crash right after it would leave it: the
    file is never empty, so the next start knows it for its own (never 'an empty file')."""
    create_private_file(ledger_path, blank_ledger())
    assert ledger_path.stat().st_size > 0
    with open_ledger(ledger_path) as ledger:
        assert ledger.schema_version() == SCHEMA_VERSION
