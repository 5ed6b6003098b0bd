"""Opening a ledger: the pragmas in force, what is created and how, and every refusal."""

from __future__ import annotations

import hashlib
import os
import shutil
import sqlite3
import stat
import tempfile
from pathlib import Path

import pytest

from shell.clock import FakeClock
from shell.errors import EXIT_CONFIG, EXIT_UNAVAILABLE, UserError
from shell.ledger.connection import (
    SCHEMA_VERSION,
    Ledger,
    LedgerBusy,
    LedgerError,
    LedgerMissing,
    LedgerMisuse,
    LedgerNotPrivate,
    LedgerOutOfDate,
    LedgerPathRefused,
    LedgerTooNew,
    LedgerUnreadable,
    blank_ledger,
    open_existing_ledger,
    open_ledger,
    open_ledger_read_only,
)

OPENERS = {
    "owner": open_ledger,
    "existing": open_existing_ledger,
    "read_only": open_ledger_read_only,
}


def mode_of(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def pragma(ledger: Ledger, name: str) -> object:
    with ledger.read() as connection:
        return connection.execute(f"PRAGMA {name}").fetchone()[0]


def migrated(path: Path) -> Path:
    open_ledger(path).close()
    return path


def set_recorded_version(path: Path, version: int) -> None:
    connection = sqlite3.connect(path, isolation_level=None)
    connection.execute(
        "INSERT INTO schema_migrations (version, applied_at) VALUES (?, 'x')", (version,)
    )
    connection.close()


# The pragmas.


@pytest.mark.parametrize("way_in", OPENERS)
def test_the_pragmas_are_in_force_on_every_way_in(ledger_path: Path, way_in: str) -> None:
    migrated(ledger_path)
    with OPENERS[way_in](ledger_path) as ledger:
        assert pragma(ledger, "journal_mode") == "wal"
        assert pragma(ledger, "synchronous") == 2  # FULL
        assert pragma(ledger, "foreign_keys") == 1
        assert pragma(ledger, "busy_timeout") == 5000
        assert pragma(ledger, "query_only") == (1 if way_in == "read_only" else 0)


def test_only_an_explicit_option_leaves_the_ledger_unsynced(ledger_path: Path) -> None:
    """``unsynced`` sets synchronous OFF (the simulation's throwaway ledgers);
    the connector's own code never passes it."""
    with open_ledger(ledger_path, unsynced=True) as ledger:
        assert pragma(ledger, "synchronous") == 0  # OFF
    with open_ledger(ledger_path) as ledger:
        assert pragma(ledger, "synchronous") == 2  # FULL
    shell = Path(__file__).resolve().parents[2] / "shell"
    passing = [path for path in shell.rglob("*.py") if "unsynced=True" in path.read_text("utf-8")]
    assert passing == []


def test_the_connection_is_in_autocommit_mode(ledger: Ledger) -> None:
    with ledger.write() as connection:
        assert connection.isolation_level is None
    assert not connection.in_transaction


# What the owner creates.


def test_the_owner_creates_the_directory_chain_and_file_owner_only(ledger_directory: Path) -> None:
    path = ledger_directory / "state" / "connect" / "connector.db"
    with open_ledger(path) as ledger:
        assert mode_of(ledger_directory / "state") == 0o700
        assert mode_of(path.parent) == 0o700
        assert mode_of(path) == 0o600
        for suffix in ("-wal", "-shm"):
            assert mode_of(Path(f"{path}{suffix}")) == 0o600
        assert ledger.schema_version() == SCHEMA_VERSION


def test_the_sidecars_are_made_owner_only_after_open(ledger_path: Path) -> None:
    with open_ledger(ledger_path):
        wal = Path(f"{ledger_path}-wal")
        os.chmod(wal, 0o644)
        with open_ledger(ledger_path):
            assert mode_of(wal) == 0o600


def test_a_second_owner_open_applies_nothing_again(ledger_path: Path) -> None:
    with open_ledger(ledger_path, clock=FakeClock()) as first, first.read() as connection:
        applied = connection.execute("SELECT * FROM schema_migrations").fetchall()
    later = FakeClock()
    later.advance(3600)
    with open_ledger(ledger_path, clock=later) as second, second.read() as connection:
        assert connection.execute("SELECT * FROM schema_migrations").fetchall() == applied


# Refusals of the path itself.


@pytest.mark.parametrize(
    "name",
    ["", ":memory:", "file::memory:", "file::memory:?cache=shared", "file:connector.db"],
)
@pytest.mark.parametrize("way_in", OPENERS)
def test_an_empty_in_memory_or_uri_name_is_refused(name: str, way_in: str) -> None:
    with pytest.raises(LedgerPathRefused):
        OPENERS[way_in](name)


def test_the_in_memory_refusal_says_why() -> None:
    with pytest.raises(LedgerPathRefused, match="a crash is a delay"):
        open_ledger(":memory:")


@pytest.mark.parametrize("way_in", OPENERS)
def test_an_in_memory_name_is_refused_even_where_a_file_of_that_name_could_be_made(
    ledger_directory: Path, monkeypatch: pytest.MonkeyPatch, way_in: str
) -> None:
    # In an owner-only working directory ":memory:" passes every check a file path gets (and
    # for the owner would be created there): only the in-memory rule refuses it.
    monkeypatch.chdir(ledger_directory)
    (ledger_directory / ":memory:").touch(mode=0o600)  # even an existing file of that name
    with pytest.raises(LedgerPathRefused, match="in-memory"):
        OPENERS[way_in](":memory:")
    assert [path.name for path in ledger_directory.iterdir()] == [":memory:"]
    assert (ledger_directory / ":memory:").stat().st_size == 0


@pytest.mark.parametrize("character", ["?", "#", "%"])
def test_a_path_holding_a_uri_character_is_refused(ledger_directory: Path, character: str) -> None:
    path = ledger_directory / f"connector{character}mode=memory.db"
    with pytest.raises(LedgerPathRefused, match="may not hold"):
        open_ledger(path)
    assert not path.exists()


@pytest.mark.parametrize("way_in", OPENERS)
def test_a_symlinked_ledger_is_refused(ledger_path: Path, way_in: str) -> None:
    migrated(ledger_path)
    link = ledger_path.with_name("link.db")
    link.symlink_to(ledger_path)
    with pytest.raises(LedgerPathRefused, match=r"the ledger .* is a symlink"):
        OPENERS[way_in](link)


def test_a_directory_where_the_file_should_be_is_refused(ledger_path: Path) -> None:
    ledger_path.mkdir(mode=0o700)
    with pytest.raises(LedgerPathRefused, match="not a regular file"):
        open_ledger(ledger_path)


# Refusals of privacy: refused, never tightened.


@pytest.mark.parametrize("way_in", OPENERS)
def test_a_file_others_can_read_is_refused_not_tightened(ledger_path: Path, way_in: str) -> None:
    migrated(ledger_path)
    os.chmod(ledger_path, 0o644)
    with pytest.raises(LedgerNotPrivate, match="644"):
        OPENERS[way_in](ledger_path)
    assert mode_of(ledger_path) == 0o644


@pytest.mark.parametrize("way_in", OPENERS)
def test_a_directory_others_can_list_is_refused_not_tightened(
    ledger_directory: Path, ledger_path: Path, way_in: str
) -> None:
    migrated(ledger_path)
    os.chmod(ledger_directory, 0o755)
    with pytest.raises(LedgerNotPrivate, match="755"):
        OPENERS[way_in](ledger_path)
    assert mode_of(ledger_directory) == 0o755


def test_the_owner_does_not_create_a_file_in_a_loose_directory(
    ledger_directory: Path, ledger_path: Path
) -> None:
    os.chmod(ledger_directory, 0o750)
    with pytest.raises(LedgerNotPrivate):
        open_ledger(ledger_path)
    assert not ledger_path.exists()


needs_root = pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() != 0, reason="giving a file away needs root"
)


@needs_root
def test_a_file_of_another_user_is_refused(ledger_path: Path) -> None:
    migrated(ledger_path)
    os.chown(ledger_path, 12345, -1)
    with pytest.raises(LedgerNotPrivate, match="another user"):
        open_ledger(ledger_path)


@needs_root
def test_a_directory_of_another_user_is_refused(ledger_directory: Path) -> None:
    directory = ledger_directory / "theirs"
    directory.mkdir(mode=0o700)
    os.chown(directory, 12345, -1)
    with pytest.raises(LedgerNotPrivate, match="another user"):
        open_ledger(directory / "connector.db")


# Schema versions.


@pytest.mark.parametrize("way_in", OPENERS)
def test_a_ledger_newer_than_the_program_is_refused(ledger_path: Path, way_in: str) -> None:
    migrated(ledger_path)
    set_recorded_version(ledger_path, SCHEMA_VERSION + 1)
    with pytest.raises(LedgerTooNew, match="newer"):
        OPENERS[way_in](ledger_path)


@pytest.mark.parametrize("way_in", ["existing", "read_only"])
def test_a_ledger_not_yet_migrated_is_refused_without_migrating(
    ledger_path: Path, way_in: str
) -> None:
    ledger_path.write_bytes(blank_ledger())  # a new ledger, as the owner creates it, not yet migrated
    ledger_path.chmod(0o600)
    with pytest.raises(LedgerOutOfDate, match="schema 0"):
        OPENERS[way_in](ledger_path)
    connection = sqlite3.connect(ledger_path)
    assert connection.execute("SELECT count(*) FROM sqlite_master").fetchone() == (0,)
    connection.close()


def test_a_file_that_is_not_a_database_is_refused(ledger_path: Path) -> None:
    ledger_path.write_bytes(b"not a database, just some bytes" * 100)
    os.chmod(ledger_path, 0o600)
    with pytest.raises(LedgerUnreadable):
        open_ledger(ledger_path)


# Ways in that never create.


@pytest.mark.parametrize("way_in", ["existing", "read_only"])
def test_a_missing_ledger_is_an_error_and_nothing_is_created(
    ledger_path: Path, way_in: str
) -> None:
    with pytest.raises(LedgerMissing, match="no ledger here"):
        OPENERS[way_in](ledger_path)
    assert not ledger_path.exists()
    assert not Path(f"{ledger_path}-wal").exists()


@pytest.mark.parametrize("way_in", ["existing", "read_only"])
def test_a_missing_directory_is_an_error_and_is_not_created(
    ledger_directory: Path, way_in: str
) -> None:
    directory = ledger_directory / "absent"
    with pytest.raises(LedgerMissing):
        OPENERS[way_in](directory / "connector.db")
    assert not directory.exists()


@pytest.mark.parametrize("way_in", ["existing", "read_only"])
def test_a_symlinked_directory_is_refused_as_one_not_said_to_lack_a_ledger(
    ledger_directory: Path, way_in: str
) -> None:
    real = ledger_directory / "elsewhere"
    real.mkdir(mode=0o700)
    (ledger_directory / "shadow").symlink_to(real)
    with pytest.raises(LedgerPathRefused, match="is a symlink"):
        OPENERS[way_in](ledger_directory / "shadow" / "connector.db")


def _opened_as(uid: int, ledger: Path) -> str:
    """What opening ``ledger`` read-only raises, in a child of user ``uid``: its error's class and text."""
    reader, writer = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns to pytest
        os.close(reader)
        try:
            if os.geteuid() != uid:
                os.setgid(uid)
                os.setuid(uid)
            open_ledger_read_only(ledger).close()
            said = "opened"
        except BaseException as error:  # the parent judges whatever it was
            said = f"{type(error).__name__}: {error}"
        os.write(writer, said.encode())
        os._exit(0)
    os.close(writer)
    with os.fdopen(reader, "rb") as pipe:
        said = pipe.read().decode()
    os.waitpid(pid, 0)
    return said


def test_a_directory_that_refuses_its_owner_the_look_is_said_to_refuse_it(tmp_path: Path) -> None:
    """Root reads any directory, so as root the look is made by a child of another user's id."""
    uid = 65534 if os.geteuid() == 0 else os.geteuid()
    base = Path(tempfile.mkdtemp(dir="/tmp"))  # /tmp: every user may pass through it
    try:
        state = base / "state"
        state.mkdir(mode=0o700)
        migrated(state / "connector.db")
        for path in (base, state, *state.iterdir()):
            os.chown(path, uid, uid)
        state.chmod(0o600)  # listed, but not searchable: the ledger can be neither seen nor missed
        said = _opened_as(uid, state / "connector.db")
    finally:
        state.chmod(0o700)
        shutil.rmtree(base)
    assert said.startswith("LedgerUnreadable: "), said
    assert "cannot be searched" in said
    assert "no ledger here" not in said


def test_the_existing_way_in_writes(ledger_path: Path) -> None:
    migrated(ledger_path)
    with open_existing_ledger(ledger_path) as ledger, ledger.write() as connection:
        connection.execute("INSERT INTO hold_marker (id, held_by, held_at) VALUES (1, 'ana', 'now')")
    with open_ledger_read_only(ledger_path) as reader, reader.read() as connection:
        assert connection.execute("SELECT held_by FROM hold_marker").fetchone() == ("ana",)


def test_the_read_only_way_in_never_writes(ledger_path: Path) -> None:
    migrated(ledger_path)
    before = hashlib.sha256(ledger_path.read_bytes()).hexdigest()
    with open_ledger_read_only(ledger_path) as ledger:
        with pytest.raises(LedgerMisuse, match="read-only"), ledger.write():
            pass
        with ledger.read() as connection, pytest.raises(sqlite3.OperationalError):
            connection.execute("INSERT INTO hold_marker (id, held_by, held_at) VALUES (1, 'ana', 'now')")
        assert ledger.schema_version() == SCHEMA_VERSION
    assert hashlib.sha256(ledger_path.read_bytes()).hexdigest() == before


# The errors a person sees.


@pytest.mark.parametrize(
    "error",
    [LedgerPathRefused, LedgerNotPrivate, LedgerMissing, LedgerTooNew, LedgerOutOfDate,
     LedgerUnreadable],
)
def test_every_refusal_is_a_user_error_with_the_configuration_exit_code(
    error: type[LedgerError],
) -> None:
    assert issubclass(error, UserError)
    assert error("x").exit_code == EXIT_CONFIG


def test_a_busy_ledger_is_unavailable() -> None:
    assert LedgerBusy("x").exit_code == EXIT_UNAVAILABLE


def test_a_refusal_is_one_line(ledger_path: Path) -> None:
    migrated(ledger_path)
    os.chmod(ledger_path, 0o640)
    with pytest.raises(LedgerNotPrivate) as refusal:
        open_ledger(ledger_path)
    assert "\n" not in str(refusal.value)
    assert str(ledger_path) in str(refusal.value)
