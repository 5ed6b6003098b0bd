"""``bin/connect run`` as a real process against the stand-in, signalled at any moment of its
start (``shell.cli.start_signals``): a SIGTERM or SIGINT from 0.01 s to 0.3 s after the process
began -- in the launcher, while the interpreter starts, while it imports, reads the configuration,
takes its locks, opens the ledger, asks who the token is, or in the connector's own start -- ends
it with exit 0, one line saying it stopped and no traceback; never 143, never lost. A SIGHUP is
ignored, said on stderr, and the connector goes on until SIGTERM."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from shell.basecamp.standin.server import StandIn
from shell.state.pair_lock import RUNTIME_ENV
from tests.support.configured import POLL_SECONDS, configure_connector

pytestmark = pytest.mark.slow
REPOSITORY = Path(__file__).resolve().parents[2]
TRIES = 20
DUMP_TRIES = 6
EARLIEST, LATEST = 0.01, 0.3
BOUND_SECONDS = 30


@pytest.fixture(scope="module")
def state(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    root = tmp_path_factory.mktemp("signals-at-start")
    os.chmod(root, 0o700)
    runtime = tmp_path_factory.mktemp("signals-at-start-runtime")
    runtime.chmod(0o700)
    # A module's fixture runs before the autouse per-test pair-lock directory (tests/conftest.py):
    # its setup gets one of its own too, never the machine's, which other runs may hold.
    with pytest.MonkeyPatch.context() as patch, StandIn(world="demo") as standin:
        patch.setenv(RUNTIME_ENV, str(runtime))
        yield configure_connector(standin, root, worker=("true",))


def _started(state: Path, environment: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [str(REPOSITORY / "bin" / "connect"), "run", "--state-dir", str(state), "--no-live",
         "--poll-seconds", str(POLL_SECONDS), "--shutdown-seconds", "5"],
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env=environment,
    )  # fmt: skip


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_stop_at_any_moment_of_the_start_exits_0_with_one_line(
    signum: signal.Signals, state: Path
) -> None:
    environment = dict(os.environ)
    for attempt in range(TRIES):
        delay = EARLIEST + (LATEST - EARLIEST) * attempt / (TRIES - 1)
        process = _started(state, environment)
        time.sleep(delay)
        process.send_signal(signum)
        try:
            _, errors = process.communicate(timeout=BOUND_SECONDS)
        except subprocess.TimeoutExpired:  # the stop was lost: the connector ran on
            process.kill()
            _, errors = process.communicate()
            pytest.fail(f"try {attempt + 1} ({delay:.2f} s): the stop was lost; stderr: {errors[-400:]}")
        assert process.returncode == 0, f"try {attempt + 1} ({delay:.2f} s): exit {process.returncode}: {errors[-400:]}"
        assert "Traceback" not in errors, errors
        assert _said_stopped(errors), f"try {attempt + 1} ({delay:.2f} s): {errors[-400:]}"


def test_a_stack_dump_asked_at_any_moment_of_the_start_is_written_and_the_connector_goes_on(state: Path) -> None:
    environment = dict(os.environ)
    for attempt in range(DUMP_TRIES):
        delay = EARLIEST + (LATEST - EARLIEST) * attempt / (DUMP_TRIES - 1)
        process = _started(state, environment)
        try:
            time.sleep(delay)
            process.send_signal(signal.SIGUSR1)
            assert process.stdout is not None
            line = process.stdout.readline()
            assert line.startswith("running account="), f"try {attempt + 1} ({delay:.2f} s): {process.poll()}"
        finally:
            process.send_signal(signal.SIGTERM)
            _, errors = process.communicate(timeout=BOUND_SECONDS)
        assert process.returncode == 0, f"try {attempt + 1} ({delay:.2f} s): exit {process.returncode}"
        assert "(SIGUSR1; the connector goes on)" in errors, f"try {attempt + 1} ({delay:.2f} s): {errors[-400:]}"


def _said_stopped(errors: str) -> bool:
    lines = [line for line in errors.splitlines() if line.strip()]
    return bool(lines) and (lines[-1] == "stopped" or lines[-1].startswith("stopped before the start ("))


def test_a_hangup_is_ignored_and_said_and_the_connector_goes_on(state: Path) -> None:
    process = _started(state, dict(os.environ))
    try:
        assert process.stdout is not None
        assert process.stdout.readline().startswith("running account=")
        process.send_signal(signal.SIGHUP)
        time.sleep(POLL_SECONDS * 3)  # a few of the main thread's looks for a stop
        assert process.poll() is None, "a SIGHUP ended the connector"
    finally:
        process.send_signal(signal.SIGTERM)
        _, errors = process.communicate(timeout=BOUND_SECONDS)
    assert process.returncode == 0, errors[-2000:]
    assert "SIGHUP ignored: the connector goes on" in errors
    assert errors.rstrip().endswith("stopped")


def test_every_other_command_ends_on_sigterm_as_it_always_did() -> None:
    """The launcher blocks the signals for every command; only ``run`` keeps a handler of its own.
    A serving command (the stand-in) still ends on SIGTERM, as it always did (its own stop, 0)."""
    assert _standin_signaled(signal.SIGTERM) in (0, -signal.SIGTERM)


def test_every_other_command_has_sigusr1_back_as_it_always_was() -> None:
    """The launcher blocks SIGUSR1 too; every command but ``run`` unblocks it under the default,
    so neither it nor a child it starts keeps it blocked (the default ends the stand-in)."""
    assert _standin_signaled(signal.SIGUSR1) == -signal.SIGUSR1


def _standin_signaled(signum: signal.Signals) -> int:
    """``bin/connect standin``, sent ``signum`` once it serves: its exit code."""
    with subprocess.Popen(
        [str(REPOSITORY / "bin" / "connect"), "standin", "--world", "demo"],
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    ) as process:  # fmt: skip
        assert process.stdout is not None
        assert process.stdout.readline().startswith("Basecamp stand-in at ")
        process.send_signal(signum)
        try:
            return process.wait(timeout=BOUND_SECONDS)
        except subprocess.TimeoutExpired:
            process.kill()
            pytest.fail(f"{signum.name} stayed blocked: the stand-in ran on")
