"""A real child process for crash tests, and waiting for a condition.

The child is a Python module run from the repository; its token goes in on its first stdin
line (never argv). The test that starts it is the only one that signals it.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

REPOSITORY = Path(__file__).resolve().parents[2]


def alive(pid: int) -> bool:
    """Whether ``pid`` is a process not yet gone (a zombie is gone)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


def wait_until(condition: Callable[[], bool], timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.05)
    pytest.fail("the condition never held")


class ChildProcess:
    def __init__(
        self,
        module: str,
        arguments: Sequence[str],
        token: str,
        *,
        pause_at: str | None = None,
        environment: dict[str, str] | None = None,
    ) -> None:
        variables = {key: value for key, value in os.environ.items() if key != "CONNECTOR_PAUSE_AT"}
        variables.update(environment or {})
        if pause_at:
            variables["CONNECTOR_PAUSE_AT"] = pause_at
        self.process = subprocess.Popen(
            [sys.executable, "-m", module, *arguments],
            cwd=REPOSITORY,
            env=variables,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert self.process.stdin is not None
        self.process.stdin.write(token + "\n")
        self.process.stdin.close()

    def wait_for_stderr(self, line: str, timeout: float = 30) -> None:
        assert self.process.stderr is not None
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            text = self.process.stderr.readline()
            if line in text:
                return
            if not text and self.process.poll() is not None:
                break
        pytest.fail(f"the child never printed {line!r}")

    def first_line(self) -> str:
        assert self.process.stdout is not None
        return self.process.stdout.readline().strip()

    def kill(self) -> None:
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=10)
        assert self.process.returncode == -signal.SIGKILL

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=60)
        assert self.process.returncode == 0
