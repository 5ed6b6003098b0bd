"""``status`` shows the running connector's own failed ledger writes, not only measured free space.

A real failing write: a child process opens the ledger as ``bin/connect run`` does
(``watch_write_failures``), then writes past a file-size limit (``RLIMIT_FSIZE``, SIGXFSZ ignored:
the write fails with EFBIG, which SQLite reports as a full disk). ``status`` in another process
then shows when and why; the next good write clears it. A refused move is no failed write."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from shell.basecamp.standin.server import StandIn
from shell.clock import FakeClock
from shell.ledger import connection as write_failures
from shell.ledger.connection import open_ledger
from tests.support.configured import REPOSITORY, configure_connector

pytestmark = pytest.mark.slow

CHILD = textwrap.dedent(
    """
    import os, resource, signal, sys
    from pathlib import Path
    from shell.ledger import connection as write_failures
    from shell.ledger.connection import open_ledger

    state, size = Path(sys.argv[1]), int(sys.argv[2])
    with open_ledger(state / "ledger.sqlite3") as ledger:
        write_failures.watch_write_failures(ledger)  # as bin/connect run does
        if size:
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails (EFBIG)
            largest = max(path.stat().st_size for path in state.iterdir() if path.is_file())
            resource.setrlimit(resource.RLIMIT_FSIZE, (largest + 64 * 1024, resource.RLIM_INFINITY))
        try:
            with ledger.write() as connection:
                connection.execute("INSERT INTO ballast VALUES (zeroblob(?))", (size,))
        except Exception as error:
            print(type(error).__name__, error)
            sys.exit(3)
    """
)


@pytest.fixture
def state(tmp_path: Path) -> Path:
    with StandIn(world="demo") as standin:
        state = configure_connector(standin, tmp_path)
    with open_ledger(state / "ledger.sqlite3", clock=FakeClock()) as ledger, ledger.write() as connection:
        connection.execute("CREATE TABLE ballast (b BLOB)")  # room for a write of any size
    return state


def write_in_a_child(state: Path, size: int) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", CHILD, str(state), str(size)],
        cwd=REPOSITORY, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip


def status(state: Path) -> dict[str, object]:
    ran = subprocess.run(
        [str(REPOSITORY / "bin" / "connect"), "status", "--state-dir", str(state), "--json"],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    shown: dict[str, object] = json.loads(ran.stdout)
    return shown


def test_status_shows_the_connectors_failed_write_until_its_next_good_one(state: Path) -> None:
    assert status(state)["write_failure"] is None

    failed = write_in_a_child(state, 8 * 1024 * 1024)
    assert failed.returncode == 3, failed.stderr  # the write failed, in the child's own words
    assert "full" in failed.stdout or "I/O" in failed.stdout, failed.stdout
    shown = status(state)
    failure = shown["write_failure"]
    assert isinstance(failure, dict)
    assert failure["why"] in failed.stdout
    assert isinstance(failure["pid"], int)
    assert failure["pid"] != os.getpid()  # the child's: the process whose write failed
    assert str(failure["at"]).endswith("Z")
    assert "ledger writes failing since" in str(shown["summary"])

    good = write_in_a_child(state, 16)
    assert good.returncode == 0, good.stdout + good.stderr
    cleared = status(state)
    assert cleared["write_failure"] is None
    assert "ledger writes" not in str(cleared["summary"])


def test_a_refused_move_is_no_failed_write(tmp_path: Path) -> None:
    directory = tmp_path / "state"
    directory.mkdir(mode=0o700)
    with open_ledger(directory / "ledger.sqlite3", clock=FakeClock()) as ledger:
        write_failures.watch_write_failures(ledger)
        with ledger.write() as connection:
            connection.execute("CREATE TABLE strict (x NOT NULL)")
        with pytest.raises(sqlite3.IntegrityError), ledger.write() as connection:
            connection.execute("INSERT INTO strict VALUES (NULL)")
        assert write_failures.read_write_failure(ledger.path) is None
