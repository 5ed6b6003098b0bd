"""Helpers for the worker driver's tests: an attempt's paths, and real workers that are always
cleaned up -- by their own recorded identity, so a test never signals a process it did not start.
"""

from __future__ import annotations

import os
import signal
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from shell import processes
from shell.worker.command import WorkerCommand
from shell.worker.driver import RunningWorker, SpawnFailed, spawn

ATTEMPT = "att_" + "0123456789abcdef01234567"
TOKEN = "tok_Zm9vYmFyYmF6cXV4cXV1eF9ub3RfYV9yZWFsX3Rva2Vu"
PROMPT = "You are a worker started by the Basecamp agent connector. (test prompt)"


@dataclass
class Attempt:
    """The paths of one attempt: the route's directory, the private directory, the ledger."""

    root: Path
    work_dir: Path
    private_dir: Path
    ledger_path: Path
    started: list[RunningWorker] = field(default_factory=list)
    strays: list[tuple[int, str]] = field(default_factory=list)  # (pid, start time) we started

    def spawn(self, command: WorkerCommand, attempt_id: str = ATTEMPT, **extra: object) -> RunningWorker:
        outcome = spawn(
            command,
            attempt_id=attempt_id,
            prompt=str(extra.pop("prompt", PROMPT)),
            work_dir=self.work_dir,
            private_dir=self.private_dir,
            ledger_path=self.ledger_path,
            token=TOKEN,
            **extra,  # type: ignore[arg-type]
        )
        assert not isinstance(outcome, SpawnFailed), outcome
        self.started.append(outcome)
        return outcome

    def python(self, script: str, attempt_id: str = ATTEMPT) -> RunningWorker:
        """A real worker: this interpreter running ``script``, with the work dir as its argument."""
        return self.spawn(WorkerCommand(argv=(sys.executable, "-c", script, "{work_dir}")), attempt_id)

    def clean_up(self) -> None:
        """End what is still running of what this attempt started, while it is provably ours."""
        for running in self.started:
            _end_started(running)
        for pid, started in self.strays:
            if processes.is_same_process(pid, started) and live(pid):
                os.kill(pid, signal.SIGKILL)

    def stray(self, pid: int) -> None:
        """Remember a process a worker started, to end it at teardown if it is still that one."""
        started = processes.process_start_time(pid)
        if started is not None:
            self.strays.append((pid, started))


def _end_started(running: RunningWorker) -> None:
    if running.pid <= 1:
        return
    if (
        running.leads_its_group
        and running.process.poll() is None
        and processes.is_same_process(running.pid, running.process_started)
    ):
        os.killpg(running.pgid, signal.SIGKILL)
        running.process.wait(5)


def wait_for(condition: Callable[[], bool], timeout: float = 5.0) -> None:
    until = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < until, "timed out waiting"
        time.sleep(0.01)


def live(pid: int) -> bool:
    """True while ``pid`` is a process that is not a zombie."""
    try:
        state = (Path("/proc") / str(pid) / "stat").read_text().rpartition(")")[2].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state not in ("Z", "X")


def group_alive(pgid: int) -> bool:
    """True when any process, a zombie included, is in group ``pgid`` (``killpg(pgid, 0)``)."""
    if pgid <= 1:
        return False
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # it exists; it is someone else's
    return True
