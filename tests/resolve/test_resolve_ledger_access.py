"""The ledger a person names: never created, never loosened; a bad one is one line and EXIT_CONFIG.
A decision is safe beside a running connector: a reader does not stop it, a writer holding the lock
past the busy timeout makes it "busy" (EXIT_UNAVAILABLE) and nothing changes."""

from __future__ import annotations

import os
import sqlite3
import stat
import time
from pathlib import Path

import pytest

from shell.errors import EXIT_CONFIG, EXIT_OK, EXIT_UNAVAILABLE, EXIT_USAGE
from shell.ledger.connection import SCHEMA_VERSION
from tests.resolve.conftest import SHORT_BUSY_TIMEOUT
from tests.resolve.resolve_world import Intents, Run

COMMANDS = [("list",), ("show", "1"), ("sent", "1", "--receipt", "5"), ("abandon", "1"), ("resend", "1")]


@pytest.mark.parametrize("argv", COMMANDS, ids=[argv[0] for argv in COMMANDS])
def test_a_missing_ledger_is_one_line_and_nothing_is_created(
    run: Run, state_directory: Path, argv: tuple[str, ...]
) -> None:
    missing = state_directory / "nothing-here.db"
    ran = run(*argv, "--by", "local:ana", ledger=missing)
    assert ran.code == EXIT_CONFIG
    assert ran.error_lines == [f"error: {missing}: no ledger here; the connector creates it on its first run"]
    assert sorted(os.listdir(state_directory)) == ["ledger.db"], "no file, no sidecar"


def test_a_ledger_in_a_missing_directory_creates_no_directory(run: Run, state_directory: Path) -> None:
    missing = state_directory / "gone" / "ledger.db"
    ran = run("resend", "1", "--by", "local:ana", ledger=missing)
    assert ran.code == EXIT_CONFIG
    assert len(ran.error_lines) == 1
    assert not missing.parent.exists()


@pytest.mark.parametrize("argv", [("list",), ("abandon", "1")], ids=["read", "decide"])
def test_a_file_that_is_not_a_ledger_is_refused(run: Run, state_directory: Path, argv: tuple[str, ...]) -> None:
    foreign = state_directory / "notes.txt"
    foreign.write_text("these are not the rows you are looking for\n" * 100)
    os.chmod(foreign, 0o600)
    before = foreign.read_bytes()
    ran = run(*argv, "--by", "local:ana", ledger=foreign)
    assert ran.code == EXIT_CONFIG
    assert len(ran.error_lines) == 1
    assert "file is not a database" in ran.err
    assert foreign.read_bytes() == before


@pytest.mark.parametrize("argv", [("list",), ("abandon", "1")], ids=["read", "decide"])
def test_another_programs_database_is_refused_and_left_as_it_is(
    run: Run, state_directory: Path, argv: tuple[str, ...]
) -> None:
    foreign = state_directory / "other.db"
    with sqlite3.connect(foreign) as connection:
        connection.execute("CREATE TABLE recipes (name TEXT)")
    connection.close()
    os.chmod(foreign, 0o600)
    before = foreign.read_bytes()
    ran = run(*argv, "--by", "local:ana", ledger=foreign)
    assert ran.code == EXIT_CONFIG
    assert len(ran.error_lines) == 1
    assert "another application's SQLite database (tables recipes)" in ran.err
    assert foreign.read_bytes() == before


@pytest.mark.parametrize("argv", [("list",), ("resend", "1")], ids=["read", "decide"])
def test_a_ledger_from_a_newer_program_is_refused(
    intents: Intents, run: Run, ledger_path: Path, argv: tuple[str, ...]
) -> None:
    intent_id = intents.indeterminate()
    with intents.ledger.write() as connection:
        connection.execute(
            "INSERT INTO schema_migrations (version, applied_at) VALUES (?, 'later')", (SCHEMA_VERSION + 1,)
        )
    ran = run(*argv, "--by", "local:ana")
    assert ran.code == EXIT_CONFIG
    assert len(ran.error_lines) == 1
    assert "newer than this program" in ran.err
    assert intents.whole(intent_id).state == "indeterminate"


@pytest.mark.parametrize("argv", [("list",), ("resend", "1")], ids=["read", "decide"])
def test_a_ledger_others_can_read_is_refused_and_left_as_it_is(
    intents: Intents, run: Run, ledger_path: Path, argv: tuple[str, ...]
) -> None:
    intent_id = intents.indeterminate()
    os.chmod(ledger_path, 0o644)
    ran = run(*argv, "--by", "local:ana")
    assert ran.code == EXIT_CONFIG
    assert len(ran.error_lines) == 1
    assert "must be owner-only" in ran.err
    assert stat.S_IMODE(os.stat(ledger_path).st_mode) == 0o644, "refused, never tightened"
    os.chmod(ledger_path, 0o600)
    assert intents.whole(intent_id).state == "indeterminate"


def test_without_a_ledger_named_the_person_is_told_how(run: Run, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CONNECTOR_LEDGER", raising=False)
    ran = run("list", ledger=None)
    assert ran.code == EXIT_USAGE
    assert ran.error_lines == ["error: name the ledger with --ledger PATH, --state-dir DIR or $CONNECTOR_LEDGER"]


def test_the_ledger_may_be_named_in_the_environment(
    intents: Intents, run: Run, ledger_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    intent_id = intents.indeterminate()
    monkeypatch.setenv("CONNECTOR_LEDGER", str(ledger_path))
    ran = run("abandon", str(intent_id), "--by", "local:ana", ledger=None)
    assert ran.code == EXIT_OK, ran.err
    assert intents.whole(intent_id).state == "abandoned"


def test_the_ledger_option_wins_over_the_environment(
    intents: Intents, run: Run, state_directory: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    intents.indeterminate()
    monkeypatch.setenv("CONNECTOR_LEDGER", str(state_directory / "elsewhere.db"))
    assert run("list").code == EXIT_OK


# -- beside a running connector --------------------------------------------------------------


def test_a_decision_goes_through_while_another_connection_reads(
    intents: Intents, run: Run, other_connection: sqlite3.Connection
) -> None:
    intent_id = intents.indeterminate()
    other_connection.execute("BEGIN")
    query = "SELECT state FROM outbox WHERE id = ?"
    assert other_connection.execute(query, (intent_id,)).fetchone() == ("indeterminate",)
    ran = run("resend", str(intent_id), "--by", "local:ana")
    assert ran.code == EXIT_OK, ran.err
    assert other_connection.execute(query, (intent_id,)).fetchone() == ("indeterminate",), "its snapshot"
    other_connection.execute("COMMIT")
    assert other_connection.execute(query, (intent_id,)).fetchone() == ("pending",)


def test_a_lock_held_past_the_busy_timeout_is_a_clear_busy_error_and_changes_nothing(
    intents: Intents, run: Run, other_connection: sqlite3.Connection
) -> None:
    intent_id = intents.indeterminate()
    other_connection.execute("BEGIN IMMEDIATE")
    started = time.monotonic()
    ran = run("resend", str(intent_id), "--by", "local:ana")
    waited = time.monotonic() - started
    assert ran.code == EXIT_UNAVAILABLE
    assert len(ran.error_lines) == 1
    assert ran.err.startswith("error: the ledger is busy, nothing was changed; try again:")
    assert SHORT_BUSY_TIMEOUT * 0.9 <= waited < SHORT_BUSY_TIMEOUT + 2, "it waited, then gave up"
    other_connection.execute("ROLLBACK")
    assert intents.whole(intent_id).state == "indeterminate"
    assert run("resend", str(intent_id), "--by", "local:ana").code == EXIT_OK


def test_reading_goes_on_while_another_connection_holds_the_write_lock(
    intents: Intents, run: Run, other_connection: sqlite3.Connection
) -> None:
    intents.indeterminate()
    other_connection.execute("BEGIN IMMEDIATE")
    ran = run("list", "--json")
    assert ran.code == EXIT_OK, ran.err
    assert ran.out.startswith("[")


def test_the_state_directory_names_its_ledger_and_both_names_at_once_are_refused(
    run: Run, intents: Intents, ledger_path: Path, state_directory: Path
) -> None:
    by_path = run("list", "--json")
    os.link(ledger_path, state_directory / "ledger.sqlite3")  # the name `setup` gives it
    by_directory = run("list", "--json", "--state-dir", str(state_directory), ledger=None)
    assert (by_directory.code, by_directory.out) == (EXIT_OK, by_path.out)
    both = run("list", "--state-dir", str(state_directory))
    assert both.code == EXIT_USAGE
    assert both.error_lines == ["error: name the ledger once: --ledger PATH or --state-dir DIR, not both"]
