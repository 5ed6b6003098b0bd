"""A worker's stdout and stderr on disk: each kept up to the cap, a worker past it ended, and its
attempt's record and ``status`` saying why -- a real child writing without end, a real ledger."""

from __future__ import annotations

import sys
import threading
from datetime import timedelta
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.presentation.status_report import lines, report
from core.presentation.status_values import Status
from core.snapshots import StopReason
from core.worker_output import keep, passed_cap
from shell import processes
from shell.ledger import tasks
from shell.ledger.connection import Ledger
from shell.ledger.status import read_snapshot
from shell.worker.driver import CommandDriver, RunningWorker, WorkerCommand
from tests.support.ledger_world import LedgerWorld
from tests.worker.support import Attempt

CAP = 256 << 10
FLOOD = "import sys\nline = b'x' * 65535 + b'\\n'\nwhile True:\n    sys.std{0}.buffer.write(line)\n"


@given(st.lists(st.binary(max_size=64), max_size=20), st.integers(min_value=0, max_value=300))
def test_a_stream_keeps_the_first_bytes_up_to_the_cap_and_passes_it_only_when_more_came(
    chunks: list[bytes], cap: int
) -> None:
    written, passed, kept = 0, False, b""
    for chunk in chunks:
        answer = keep(written, chunk, cap)
        kept += answer.data
        written += len(answer.data)
        passed = passed or answer.passed
    whole = b"".join(chunks)
    assert kept == whole[:cap]
    assert passed == (len(whole) > cap)


def test_the_words_name_the_cap() -> None:
    assert passed_cap(64 << 20) == "its output passed 64 MiB: the worker was ended"
    assert passed_cap(1000) == "its output passed 1000 bytes: the worker was ended"


@pytest.mark.parametrize("stream", ["out", "err"])
def test_a_worker_writing_past_the_cap_keeps_the_cap_on_disk_is_ended_and_its_attempt_says_why(
    stream: str, tmp_path: Path, world: LedgerWorld, ledger: Ledger
) -> None:
    attempt = Attempt(tmp_path, tmp_path / "project", tmp_path / "private", ledger.path)
    attempt.work_dir.mkdir()
    try:
        _flood(stream, attempt, world, ledger)
    finally:
        attempt.clean_up()


def _flood(stream: str, attempt: Attempt, world: LedgerWorld, ledger: Ledger) -> None:
    world.request(5001)
    launch = world.launch(5001, work_dir=str(attempt.work_dir))
    command = WorkerCommand(argv=(sys.executable, "-c", FLOOD.format(stream)))
    driver = CommandDriver(command, private_dir=attempt.private_dir, ledger_path=ledger.path, grace_seconds=2,
                           output_cap=CAP)  # fmt: skip
    started = driver.spawn(launch, attempt.work_dir)
    assert isinstance(started, RunningWorker)
    attempt.started.append(started)
    kept = started.stdout if stream == "out" else started.stderr
    largest = _Largest(kept)
    try:
        told = driver.supervise(started, driver.clock.now() + timedelta(seconds=10), threading.Event(), lambda: None)
    finally:
        largest.stop()
    assert told is not None, "its group ended"
    assert (told.stop_reason, told.ended_because) == (StopReason.failed, passed_cap(CAP))
    assert kept.stat().st_size == CAP, "the first bytes up to the cap, and no more"
    assert largest.size <= CAP, "never more on disk while it ran"
    assert processes.group_members(started.pgid) == ()
    with ledger.write() as connection:
        tasks.end_attempt(connection, launch.attempt_id, told.stop_reason, spawn_failed=bool(told.not_started),
                          now=ledger.clock.now(), account=told)  # fmt: skip
    with ledger.read() as connection:
        sql = "SELECT stop_reason, spawn_failed, ended_because FROM attempts WHERE id = ?"
        row = connection.execute(sql, (launch.attempt_id,)).fetchone()
    assert tuple(row) == ("failed", 0, "its output passed 262144 bytes: the worker was ended")
    status = Status(1, 2, str(attempt.root), str(ledger.path), None, read_snapshot(ledger))
    assert report(status)["dispatches"][0]["ended_because"] == passed_cap(CAP)
    assert any(line.endswith(f"; {passed_cap(CAP)}") for line in lines(status)), lines(status)


class _Largest:
    """The largest size a file had, sampled as often as a thread can while the worker runs."""

    def __init__(self, path: Path) -> None:
        self.size = 0
        self._path = path
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()

    def _sample(self) -> None:
        while not self._done.is_set():
            self.size = max(self.size, self._path.stat().st_size)

    def stop(self) -> None:
        self._done.set()
        self._thread.join(5)
