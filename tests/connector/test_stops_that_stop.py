"""SIGTERM ends `bin/connect run` within its bound whatever its output streams are, and leaves
nothing behind: real connectors against the stand-in, with stderr (and stdout) a pipe already
full that nobody reads or one whose reader is gone, and with a worker (and its child) that ignore
SIGTERM."""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from shell.basecamp.standin.server import StandIn
from shell.ledger.connection import open_ledger_read_only
from tests.support.child import alive, wait_until
from tests.support.configured import POLL_SECONDS, configure_connector

pytestmark = pytest.mark.slow
REPOSITORY = Path(__file__).resolve().parents[2]
SHUTDOWN_SECONDS = 5
EXIT_SLACK = 2.0  # the interpreter's own exit, and output that cannot be written (README)

IGNORES_SIGTERM = """\
import os, signal, subprocess, sys, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])  # inherits SIG_IGN
with open(sys.argv[1] + ".tmp", "w") as pids:
    pids.write(f"{os.getpid()} {child.pid}")
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
time.sleep(600)
"""


def full_pipe() -> tuple[int, int]:
    """A pipe filled to the brim (its write end blocking again), that this test never reads."""
    readable, writable = os.pipe()
    os.set_blocking(writable, False)
    try:
        while True:
            os.write(writable, b"x" * 65536)
    except BlockingIOError:
        pass
    os.set_blocking(writable, True)
    return readable, writable


def says_running(process: subprocess.Popen[bytes], holder: str) -> None:
    """``process`` prints its `running` line within 60 s, whatever ``holder`` is."""
    assert process.stdout is not None
    ready, _, _ = select.select([process.stdout], [], [], 60)
    assert ready, f"{holder} held the start: no `running` line in 60 s"
    assert process.stdout.readline().startswith(b"running account=")


def connector(state: Path, *, stdout: object, stderr: object, verbose: bool = False) -> subprocess.Popen[bytes]:
    environment = {key: value for key, value in os.environ.items() if key != "CONNECTOR_PAUSE_AT"}
    return subprocess.Popen(
        [str(REPOSITORY / "bin" / "connect"), *(["--verbose"] if verbose else []), "run", "--state-dir", str(state),
         "--poll-seconds", str(POLL_SECONDS), "--shutdown-seconds", str(SHUTDOWN_SECONDS)],
        env=environment, stdin=subprocess.DEVNULL, stdout=stdout, stderr=stderr,
    )  # fmt: skip


def stop_in_bound(process: subprocess.Popen[bytes]) -> float:
    """SIGTERM, then how long the connector took to exit 0 (it is killed if it never does)."""
    asked = time.monotonic()
    process.send_signal(signal.SIGTERM)
    try:
        code = process.wait(timeout=SHUTDOWN_SECONDS + 30)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
        pytest.fail("SIGTERM never ended the connector")
    took = time.monotonic() - asked
    assert code == 0
    assert took < SHUTDOWN_SECONDS + EXIT_SLACK, f"the stop took {took:.1f} s"
    return took


@pytest.fixture
def killed_at_the_end() -> Iterator[list[subprocess.Popen[bytes]]]:
    started: list[subprocess.Popen[bytes]] = []
    yield started
    for process in started:  # only the connectors this test started, when a failure left them
        if process.poll() is None:
            process.kill()
            process.wait()


def test_sigterm_ends_a_verbose_connector_whose_stderr_is_a_full_pipe_nobody_reads(
    standin: StandIn, state: Path, killed_at_the_end: list[subprocess.Popen[bytes]]
) -> None:
    readable, writable = full_pipe()
    try:
        process = connector(state, stdout=subprocess.PIPE, stderr=writable, verbose=True)
        killed_at_the_end.append(process)
        os.close(writable)
        says_running(process, "a full stderr")
        stop_in_bound(process)
    finally:
        os.close(readable)


def test_sigterm_ends_a_connector_whose_stdout_and_stderr_are_both_full_pipes(
    standin: StandIn, state: Path, killed_at_the_end: list[subprocess.Popen[bytes]]
) -> None:
    out_read, out_write = full_pipe()
    err_read, err_write = full_pipe()
    try:
        before = len(standin.requests())
        process = connector(state, stdout=out_write, stderr=err_write, verbose=True)
        killed_at_the_end.append(process)
        os.close(out_write)
        os.close(err_write)
        feed_reads = lambda: sum(1 for r in standin.requests()[before:] if "events.json" in r.path)  # noqa: E731
        wait_until(lambda: feed_reads() >= 2, timeout=60)  # the start's read, then the intake loop's
        stop_in_bound(process)
    finally:
        os.close(out_read)
        os.close(err_read)


def test_sigterm_ends_a_connector_whose_stderr_reader_is_gone(
    standin: StandIn, state: Path, killed_at_the_end: list[subprocess.Popen[bytes]]
) -> None:
    readable, writable = os.pipe()
    os.close(readable)  # every write to stderr is EPIPE from the first
    try:
        process = connector(state, stdout=subprocess.PIPE, stderr=writable, verbose=True)
        killed_at_the_end.append(process)
    finally:
        os.close(writable)
    says_running(process, "a stderr nobody can read")
    stop_in_bound(process)


def test_sigterm_ends_a_connector_whose_stdout_reader_went_away_after_running(
    standin: StandIn, state: Path, killed_at_the_end: list[subprocess.Popen[bytes]]
) -> None:
    process = connector(state, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    killed_at_the_end.append(process)
    assert process.stdout is not None
    assert process.stdout.readline().startswith(b"running account=")
    process.stdout.close()  # the reader is gone: the next transition's write is EPIPE
    before = len(standin.requests())
    standin.mention(standin.world.people[0], standin.world.projects[0].recording_ids[0], "please look")
    feed_reads = lambda: sum(1 for r in standin.requests()[before:] if "events.json" in r.path)  # noqa: E731
    wait_until(lambda: feed_reads() >= 2, timeout=60)  # the mention read, its verdict line not written
    stop_in_bound(process)


def test_sigterm_with_a_worker_that_ignores_it_leaves_no_worker_and_no_running_attempt(
    standin: StandIn, tmp_path: Path, killed_at_the_end: list[subprocess.Popen[bytes]]
) -> None:
    script, pids = tmp_path / "ignores_sigterm.py", tmp_path / "pids"
    script.write_text(IGNORES_SIGTERM)
    state = configure_connector(standin, tmp_path, worker=(sys.executable, str(script), str(pids)),
                                base_url=standin.base_url)  # fmt: skip
    process = connector(state, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    killed_at_the_end.append(process)
    worker: list[int] = []
    try:
        assert process.stdout is not None
        assert process.stdout.readline().startswith(b"running account=")
        standin.mention(standin.world.people[0], standin.world.projects[0].recording_ids[0], "please look")
        wait_until(pids.exists, timeout=60)
        worker = [int(pid) for pid in pids.read_text().split()]
        stop_in_bound(process)
        assert [pid for pid in worker if alive(pid)] == [], "the worker or its child outlived the connector"
        with open_ledger_read_only(state / "ledger.sqlite3") as ledger, ledger.read() as connection:
            attempts = [tuple(row) for row in connection.execute("SELECT state, stop_reason FROM attempts")]
        assert attempts == [("ended", "shutdown")]
    finally:
        for pid in worker:  # the test's own worker, if the connector left it
            if alive(pid):
                os.kill(pid, signal.SIGKILL)
