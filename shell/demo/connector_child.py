"""The connector the demo runs: ``bin/connect run`` as a child process of its own.

Rules:
1. It is this checkout's ``python -m shell.cli.main run`` (the same interpreter, the repository
   first on its path, ``-P`` as ``bin/connect`` runs it), with ``CONNECTOR_PAUSE_AT`` removed:
   the demo is never a crash test's pause.
2. Its output (stdout and stderr) goes to a log file in the demo's directory; ``start`` waits
   for its ``running ...`` line and answers it, or raises ``ConnectorFailed`` with the log's
   last lines if the child exits or takes longer than ``START_SECONDS``.
3. Only the pid this object started is ever signaled, through ``shell.processes.signal_child``:
   ``crash`` is SIGKILL (the scene's crash), ``stop`` is ``stop_child``: SIGTERM with a bound,
   then SIGUSR1 (the connector writes its threads' stacks to the log) and SIGKILL.
4. ``end_left_workers`` ends the worker process groups a dead connector left, each only after
   ``shell.processes.terminate_group`` has checked its leader is the recorded process.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import IO

from shell.demo.ledger_view import LedgerView
from shell.processes import signal_child, stop_child, terminate_group

REPOSITORY = Path(__file__).resolve().parents[2]
START_SECONDS = 60.0
STOP_SECONDS = 60.0
POLL_SECONDS = 0.05


class ConnectorFailed(Exception):
    """The connector did not start, or did not stop when asked."""


class ConnectorChild:
    def __init__(self, state_dir: Path, log_path: Path, poll_seconds: float) -> None:
        self.state_dir = state_dir
        self.log_path = log_path
        self.poll_seconds = poll_seconds
        self._process: subprocess.Popen[bytes] | None = None
        self._log: IO[bytes] | None = None

    @property
    def pid(self) -> int:
        return self._process.pid if self._process is not None else 0

    def start(self) -> str:
        """Start it and wait for its ``running`` line (rules 1 and 2)."""
        if self._process is not None:
            raise ConnectorFailed("the demo's connector is already running")
        environment = {key: value for key, value in os.environ.items() if key != "CONNECTOR_PAUSE_AT"}
        environment["PYTHONPATH"] = str(REPOSITORY) + (
            os.pathsep + environment["PYTHONPATH"] if environment.get("PYTHONPATH") else ""
        )
        already = self._running_lines()
        self._log = self.log_path.open("ab")
        self._process = subprocess.Popen(
            [sys.executable, "-P", "-m", "shell.cli.main", "run", "--state-dir", str(self.state_dir),
             "--poll-seconds", f"{self.poll_seconds:g}", "--shutdown-seconds", "30"],
            stdin=subprocess.DEVNULL, stdout=self._log, stderr=self._log, env=environment,
        )  # fmt: skip
        deadline = time.monotonic() + START_SECONDS
        while time.monotonic() < deadline:
            lines = self._running_lines()
            if len(lines) > len(already):
                return lines[-1]
            if self._process.poll() is not None:
                self._forget()
                raise ConnectorFailed(f"the connector exited at its start:\n{self.tail()}")
            time.sleep(POLL_SECONDS)
        self.crash()
        raise ConnectorFailed(f"the connector did not start within {START_SECONDS:g} s:\n{self.tail()}")

    def crash(self) -> None:
        """SIGKILL, the scene's crash (rule 3)."""
        if self._process is None:
            return
        signal_child(self._process, signal.SIGKILL)
        self._process.wait()
        self._forget()

    def stop(self) -> int:
        """SIGTERM, then wait ``STOP_SECONDS``; SIGKILL after that. Its exit code (rule 3)."""
        if self._process is None:
            return 0
        code = stop_child(self._process, STOP_SECONDS, last_words=signal.SIGUSR1)
        self._forget()
        if code is None:
            raise ConnectorFailed(
                f"the connector did not stop within {STOP_SECONDS:g} s (its threads' stacks: {self.log_path})"
            )
        return code

    def end_left_workers(self, ledger: LedgerView) -> list[str]:
        """Rule 4: the attempts whose worker group was still there and is now ended."""
        ended = []
        for worker in ledger.live_workers():
            result = terminate_group(worker.pgid, worker.pid, worker.process_started, grace_seconds=2.0)
            ended.append(f"{worker.attempt_id}: {result.outcome} ({result.reason})")
        return ended

    def tail(self, lines: int = 20) -> str:
        try:
            text = self.log_path.read_text(errors="replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-lines:])

    def _running_lines(self) -> list[str]:
        try:
            text = self.log_path.read_text(errors="replace")
        except OSError:
            return []
        return [line for line in text.splitlines() if line.startswith("running account=")]

    def _forget(self) -> None:
        self._process = None
        if self._log is not None:
            self._log.close()
            self._log = None
