"""A ledger the disk or SQLite will not serve is one ``LedgerError`` naming why, at open, before
anything reads or writes it: damaged in the middle (``quick_check``), no space while migrating
(rolled back, nothing lost: the next open with room migrates it whole), a state directory on a
read-only file system. ``bin/connect run`` turns each into one line and exit 3 (a read-only
state directory is refused already at the instance lock).

The full and read-only disks are real: a small tmpfs mounted for the test, which needs the
privilege to mount; without it those tests are skipped (the damaged ledger needs nothing).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from core.configuration import RouteFacts, route_advice, route_problem
from shell.basecamp.standin.server import StandIn
from shell.cli.main import main as connect
from shell.errors import EXIT_CONFIG
from shell.ledger.connection import (
    SCHEMA_VERSION,
    LedgerCorrupt,
    LedgerNoSpace,
    LedgerNotWritable,
    open_ledger,
)
from tests.support.configured import configure_connector
from tests.support.disks import mounted_tmpfs, remount


def damage_the_middle(path: Path) -> None:
    with open_ledger(path) as ledger, ledger.write() as connection:
        connection.execute("CREATE TABLE filler (x TEXT)")
        connection.executemany("INSERT INTO filler VALUES (?)", [("x" * 200,)] * 2000)
    with open_ledger(path) as ledger:  # fold the WAL into the file
        ledger._connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    size = path.stat().st_size
    with open(path, "r+b") as handle:
        handle.seek(size // 2 // 4096 * 4096)
        handle.write(b"\xa5" * 4096)


def test_a_ledger_damaged_in_the_middle_is_refused_at_open_and_left_as_it_is(tmp_path: Path) -> None:
    os.chmod(tmp_path, 0o700)
    path = tmp_path / "ledger.sqlite3"
    damage_the_middle(path)
    before = path.read_bytes()
    with pytest.raises(LedgerCorrupt, match="the ledger is damaged") as refused:
        open_ledger(path)
    assert refused.value.exit_code == EXIT_CONFIG
    assert str(refused.value).endswith("restore it from a copy")
    assert path.read_bytes() == before


@pytest.fixture
def tmpfs(tmp_path: Path) -> Iterator[Path]:
    with mounted_tmpfs(tmp_path / "mnt") as mount:
        yield mount


def test_a_full_disk_during_a_migration_is_no_space_and_loses_nothing(tmpfs: Path) -> None:
    path = tmpfs / "ledger.sqlite3"
    with pytest.raises(LedgerNoSpace, match="no space to open and migrate the ledger") as refused:
        open_ledger(path)
    assert refused.value.exit_code == EXIT_CONFIG
    assert "rolled back" in str(refused.value)
    remount(tmpfs, "size=4m")
    with open_ledger(path) as ledger:  # room again: the same file migrates whole
        assert ledger.schema_version() == SCHEMA_VERSION
        assert ledger._connection.execute("PRAGMA integrity_check").fetchone() == ("ok",)


def test_a_read_only_state_directory_is_not_writable(tmpfs: Path) -> None:
    remount(tmpfs, "size=4m")
    path = tmpfs / "ledger.sqlite3"
    open_ledger(path).close()
    remount(tmpfs, "ro")
    with pytest.raises(LedgerNotWritable, match="the state directory must be writable"):
        open_ledger(path)
    with pytest.raises(LedgerNotWritable, match="Read-only file system"):
        open_ledger(tmpfs / "another.sqlite3")


def test_run_on_a_read_only_state_directory_is_one_line_and_exit_3(
    tmpfs: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    remount(tmpfs, "size=4m")
    with StandIn(world="demo") as standin:
        # no route: one on this mount would be refused first, as no directory a worker can write
        state = configure_connector(standin, tmpfs, routed=(), worker=("true",), base_url=standin.base_url)
    capsys.readouterr()
    remount(tmpfs, "ro")
    assert connect(["run", "--state-dir", str(state)]) == EXIT_CONFIG
    err = capsys.readouterr().err
    assert err == (
        f"error: {state}: cannot take the instance lock: Read-only file system; "
        "the state directory must be writable; nothing was changed\n"
    )


def test_run_refuses_a_route_directory_this_user_cannot_write(
    tmpfs: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The route preflight judges writability for run as for doctor: a worker could not work there."""
    remount(tmpfs, "size=4m")
    with StandIn(world="demo") as standin:
        state = configure_connector(standin, tmpfs, worker=("true",), base_url=standin.base_url)
        project = standin.world.projects[0].id
    capsys.readouterr()
    remount(tmpfs, "ro")
    assert connect(["run", "--state-dir", str(state)]) == EXIT_CONFIG
    readonly = RouteFacts(project, str(tmpfs / f"work-{project}"), exists=True, is_directory=True, writable=False)
    assert capsys.readouterr().err == f"error: {route_problem(readonly)}: not started; {route_advice(readonly)}\n"
