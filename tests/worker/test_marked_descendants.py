"""shell.processes.end_marked_descendants: what a child started outside its group is found by the
mark in its environment among this process's descendants and ended -- and nothing without the mark.
Real processes, each started by the test that signals it and killed at teardown only while it is
provably that process."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from shell import processes
from shell.clock import SystemClock

pytestmark = pytest.mark.slow
MARK = ("CONNECTOR_TEST_MARK", "9f2c")
IGNORES_SIGTERM = (
    "import pathlib, signal, sys, time; signal.signal(signal.SIGTERM, signal.SIG_IGN);"
    " pathlib.Path(sys.argv[1]).write_text(''); time.sleep(60)"
)


@pytest.fixture
def started() -> Iterator[list[tuple[int, str]]]:
    ours: list[tuple[int, str]] = []
    yield ours
    for pid, start_time in ours:
        if processes.is_same_process(pid, start_time):
            os.kill(pid, signal.SIGKILL)


def child(argv: list[str], *, marked: bool, ours: list[tuple[int, str]]) -> subprocess.Popen[bytes]:
    environment = {**os.environ, **({MARK[0]: MARK[1]} if marked else {})}
    process = subprocess.Popen(argv, env=environment, start_new_session=True)
    ours.append((process.pid, processes.process_start_time(process.pid) or ""))
    return process


def gone(pid: int, start_time: str) -> bool:
    stat = Path(f"/proc/{pid}/stat")
    return not processes.is_same_process(pid, start_time) or not stat.exists()


def test_only_the_descendants_carrying_the_mark_are_ended_and_reaped(started: list[tuple[int, str]]) -> None:
    marked = child(["sleep", "60"], marked=True, ours=started)
    unmarked = child(["sleep", "60"], marked=False, ours=started)
    time.sleep(0.2)  # both have exec'd sleep with the environment they were given
    found = processes.end_marked_descendants("=".join(MARK), 0.5, SystemClock())
    assert found == (1, False)
    assert not Path(f"/proc/{marked.pid}").exists(), "ended, and reaped here: no zombie left"
    assert unmarked.poll() is None, "a descendant without the mark is never signaled"


def test_a_marked_descendant_that_ignores_sigterm_is_killed_after_the_grace(
    started: list[tuple[int, str]], tmp_path: Path
) -> None:
    ready = tmp_path / "ready"
    child([sys.executable, "-c", IGNORES_SIGTERM, str(ready)], marked=True, ours=started)
    while not ready.exists():
        time.sleep(0.01)
    began = time.monotonic()
    assert processes.end_marked_descendants("=".join(MARK), 0.3, SystemClock()) == (1, False)
    assert 0.3 <= time.monotonic() - began < 5
    assert gone(*started[0])
