"""One connector per (account, agent) per machine, whatever its state directory: the pair lock,
held by a real second process, and ``setup``'s refusal of a second state directory."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

from shell.basecamp.standin.server import StandIn
from shell.cli.main import main as connect
from shell.errors import EXIT_CONFIG, EXIT_OK, EXIT_UNAVAILABLE
from shell.state import pair_lock
from shell.state.pair_lock import RUNTIME_ENV, PairServed, acquire, record_home, serving_elsewhere
from tests.support.configured import POLL_SECONDS, configure_connector

NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
REPOSITORY = Path(__file__).resolve().parents[2]
HOLD = (
    "import sys, time; from datetime import UTC, datetime; from pathlib import Path;"
    " from shell.state.pair_lock import acquire;"
    " held = acquire(2914079, 42, Path(sys.argv[1]), datetime.now(UTC)); print('held', flush=True); time.sleep(60)"
)


def holder(state: Path) -> subprocess.Popen[str]:
    child = subprocess.Popen([sys.executable, "-c", HOLD, str(state)], cwd=REPOSITORY, stdout=subprocess.PIPE, text=True)
    assert child.stdout is not None
    assert child.stdout.readline().strip() == "held"
    return child


def test_a_second_state_directory_of_one_pair_is_refused_naming_the_first_and_its_pid(tmp_path: Path) -> None:
    child = holder(tmp_path / "first")
    try:
        with pytest.raises(PairServed, match=f"state directory {tmp_path / 'first'}, pid {child.pid}") as refused:
            acquire(2914079, 42, tmp_path / "second", NOW)
        assert refused.value.exit_code == EXIT_UNAVAILABLE
        with acquire(2914079, 43, tmp_path / "second", NOW), acquire(1, 42, tmp_path / "third", NOW):
            pass  # another agent or account is another pair
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
    with acquire(2914079, 42, tmp_path / "second", NOW):
        pass  # the kernel dropped the dead holder's lock: nothing stale to clean


def test_the_pair_lock_lives_in_one_owner_only_place_whatever_the_state_home(
    tmp_path: Path, runtime_directory: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for home in ("elsewhere", "another"):
        monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / home))
        monkeypatch.setenv("HOME", str(tmp_path / home))
        with monkeypatch.context() as unset:
            unset.delenv(RUNTIME_ENV)
            assert pair_lock.runtime_directory() == Path(f"/tmp/basecamp-connector-{os.geteuid()}")
    with acquire(2914079, 42, tmp_path / "a", NOW) as held:
        assert held.path.parent == runtime_directory  # the tests' own, given by RUNTIME_ENV
        assert os.stat(held.path).st_mode & 0o077 == 0


def test_a_recorded_home_names_another_directory_only_while_it_holds_the_pair(tmp_path: Path) -> None:
    first = tmp_path / "first"
    first.mkdir()
    (first / "config.json").write_text('{"account_id": 2914079, "agent_id": 42}')
    record_home(2914079, 42, first)
    assert serving_elsewhere(2914079, 42, first) is None
    assert serving_elsewhere(2914079, 42, tmp_path / "second") == first
    (first / "config.json").write_text('{"account_id": 2914079, "agent_id": 43}')
    assert serving_elsewhere(2914079, 42, tmp_path / "second") is None, "it holds another pair now: stale"
    (first / "config.json").unlink()
    assert serving_elsewhere(2914079, 42, tmp_path / "second") is None, "a record whose directory is gone is stale"


@pytest.mark.slow
def test_two_connectors_with_two_state_directories_of_one_pair_cannot_both_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with StandIn(world="demo") as standin:
        (tmp_path / "a").mkdir()
        (tmp_path / "b").mkdir()
        first = configure_connector(standin, tmp_path / "a")
        assert connect(["setup", "--state-dir", str(tmp_path / "b" / "state"), "--account",
                        str(standin.world.account_id), "--agent", str(standin.world.agent.id),
                        "--base-url", standin.base_url, "--token-file", str(tmp_path / "a" / "token")]) == EXIT_CONFIG
        assert f"already served from {first}" in capsys.readouterr().err
        command = [str(REPOSITORY / "bin" / "connect"), "run", "--poll-seconds", str(POLL_SECONDS), "--state-dir"]
        process = subprocess.Popen([*command, str(first)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            assert process.stdout is not None
            assert process.stdout.readline().startswith("running account=")
            second = configure_connector(standin, tmp_path / "b", "--force")  # moved here while the first runs
            refused = subprocess.run([*command, str(second)], capture_output=True, text=True, timeout=60, check=False)
            assert refused.returncode == EXIT_UNAVAILABLE, refused.stderr
            assert f"state directory {first}, pid {process.pid}" in refused.stderr
        finally:
            process.send_signal(signal.SIGTERM)
            process.communicate(timeout=60)
        assert process.returncode == EXIT_OK
        moved = subprocess.run([*command, str(first)], capture_output=True, text=True, timeout=60, check=False)
        assert moved.returncode == EXIT_CONFIG, moved.stderr
        assert f"is served from {second}, not {first}" in moved.stderr


@pytest.mark.skipif(os.geteuid() != 0, reason="making a directory another user's takes root")
def test_a_runtime_directory_another_user_made_first_is_named_with_what_to_do(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A squatter's directory in the shared /tmp is never used, and the refusal says how out."""
    squatted = tmp_path / "basecamp-connector-squatted"
    squatted.mkdir(mode=0o700)
    os.chown(squatted, 65534, 65534)
    monkeypatch.setenv(RUNTIME_ENV, str(squatted))
    with pytest.raises(pair_lock.RuntimeDirectorySquatted) as refused:
        acquire(2914079, 42, tmp_path / "state", NOW)
    assert refused.value.exit_code == EXIT_CONFIG
    said = str(refused.value)
    assert f"runtime directory {squatted} belongs to another user (uid 65534)" in said
    assert f"{RUNTIME_ENV} (for example $XDG_RUNTIME_DIR/basecamp-connector)" in said
    assert f"have an administrator remove {squatted}" in said
    assert list(squatted.iterdir()) == []  # nothing was made in it


def test_this_users_runtime_directory_left_open_is_refused_with_the_chmod_that_closes_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    opened = tmp_path / "runtime-open"
    opened.mkdir()
    opened.chmod(0o777)
    monkeypatch.setenv(RUNTIME_ENV, str(opened))
    with pytest.raises(pair_lock.private_files.Exposed, match=f"chmod 700 {opened}"):
        acquire(2914079, 42, tmp_path / "state", NOW)
