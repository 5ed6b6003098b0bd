"""``shell.processes.stop_child``: SIGTERM, the grace, then the last-words signal, then SIGKILL."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from shell.processes import stop_child
from tests.support.child import REPOSITORY

STUBBORN = """
import signal, time
from shell import stack_dumps
signal.signal(signal.SIGTERM, signal.SIG_IGN)
def stuck_here():
    while True:
        time.sleep(0.05)
with stack_dumps.on_sigusr1():  # as the connector writes its stacks
    print("ready", flush=True)
    stuck_here()
"""


def test_a_child_that_ignores_sigterm_says_where_it_was_before_it_is_killed(tmp_path: Path) -> None:
    errors_path = tmp_path / "stderr.txt"
    with errors_path.open("w") as errors:
        child = subprocess.Popen([sys.executable, "-c", STUBBORN], stdout=subprocess.PIPE, stderr=errors,
                                 env={**os.environ, "PYTHONPATH": str(REPOSITORY)})  # fmt: skip
        assert child.stdout is not None
        assert child.stdout.readline() == b"ready\n"
        began = time.monotonic()
        assert stop_child(child, 0.3, last_words=signal.SIGUSR1) is None
    assert time.monotonic() - began < 10
    assert child.returncode == -signal.SIGKILL
    assert "stuck_here" in errors_path.read_text()


def test_a_child_that_stops_is_not_asked_for_last_words(tmp_path: Path) -> None:
    child = subprocess.Popen([sys.executable, "-c", "import time; print('ready', flush=True); time.sleep(60)"],
                             stdout=subprocess.PIPE)  # fmt: skip
    assert child.stdout is not None
    assert child.stdout.readline() == b"ready\n"
    assert stop_child(child, 10, last_words=signal.SIGUSR1) == -signal.SIGTERM
