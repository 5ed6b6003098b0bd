"""The instance lock: one connector per (account, agent), dropped by the kernel on death."""

import signal
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

from shell.state.lock import AlreadyRunning, acquire, lock_path, peek

NOW = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)
REPOSITORY = Path(__file__).resolve().parents[2]
HOLD = (
    "import sys, time; from datetime import UTC, datetime; from pathlib import Path; from shell.state.lock import acquire;"
    " held = acquire(Path(sys.argv[1]), 2914079, 42, datetime.now(UTC)); print('held', flush=True); time.sleep(60)"
)


def holder(state: Path) -> subprocess.Popen[str]:
    child = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(state)], cwd=REPOSITORY, stdout=subprocess.PIPE, text=True
    )
    assert child.stdout is not None
    assert child.stdout.readline().strip() == "held"
    return child


def test_a_second_connector_is_refused_naming_the_holder(tmp_path: Path) -> None:
    child = holder(tmp_path)
    try:
        with pytest.raises(AlreadyRunning, match=f"pid {child.pid}"):
            acquire(tmp_path, 2914079, 42, NOW)
        seen = peek(tmp_path, 2914079, 42)
        assert seen is not None
        assert (seen.pid, seen.pid_present) == (child.pid, True)
    finally:
        child.kill()
        child.wait()


def test_the_kernel_drops_the_lock_when_its_holder_is_killed(tmp_path: Path) -> None:
    child = holder(tmp_path)
    child.send_signal(signal.SIGKILL)
    child.wait()
    with acquire(tmp_path, 2914079, 42, NOW) as taken:
        assert taken.path == lock_path(tmp_path, 2914079, 42)


def test_another_agent_or_account_has_its_own_lock(tmp_path: Path) -> None:
    with (
        acquire(tmp_path, 2914079, 42, NOW),
        acquire(tmp_path, 2914079, 43, NOW),
        acquire(tmp_path, 1, 42, NOW),
    ):
        pass


def test_a_lock_is_named_only_from_positive_ids(tmp_path: Path) -> None:
    for account, agent in ((0, 42), (2914079, -1)):
        with pytest.raises(Exception, match="positive"):
            lock_path(tmp_path, account, agent)


def test_released_it_can_be_taken_again_and_the_metadata_goes(tmp_path: Path) -> None:
    first = acquire(tmp_path, 2914079, 42, NOW)
    first.release()
    assert peek(tmp_path, 2914079, 42) is None
    acquire(tmp_path, 2914079, 42, NOW).release()


def test_the_lock_and_its_metadata_are_owner_only(tmp_path: Path) -> None:
    with acquire(tmp_path, 2914079, 42, NOW) as taken:
        assert taken.path.stat().st_mode & 0o077 == 0
        assert Path(f"{taken.path}.json").stat().st_mode & 0o077 == 0
