"""A person's commands on a disk that will not take their writes (``shell.cli.decisions``,
``shell.state.lock.acquire``, ``shell.state.config.save_config``): a full disk, a read-only state
directory and a file-size bound (``ulimit -f``) are each one ``error:`` line, exit 3, saying the
decision was not recorded (or nothing was changed or written) -- never a traceback -- and the
ledger is byte for byte as it was. The full and read-only disks are a real tmpfs (skipped without
the privilege to mount); the file-size bound is a real child process under ``RLIMIT_FSIZE``."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from shell.basecamp.standin.server import StandIn
from shell.cli.main import main as connect
from shell.cli.resolve import main as resolve
from shell.errors import EXIT_CONFIG
from shell.ledger.connection import open_ledger
from tests.support.configured import configure_connector
from tests.support.disks import file_size_bound, fill, mounted_tmpfs, remount

REPOSITORY = Path(__file__).resolve().parents[2]
NOT_RECORDED = ("the decision was not recorded", "nothing was changed", "nothing was written")


@pytest.fixture(scope="module")
def standin() -> Iterator[StandIn]:
    with StandIn(world="demo") as server:
        yield server


@pytest.fixture
def mounted_state(standin: StandIn, tmp_path: Path) -> Iterator[Path]:
    with mounted_tmpfs(tmp_path / "mnt", size="4m") as mount:
        state = configure_connector(standin, mount, worker=("true",), base_url=standin.base_url)
        open_ledger(state / "ledger.sqlite3").close()
        yield state


def commands(state: Path, tmp_path: Path) -> dict[str, list[str]]:
    entries = tmp_path / "entries.json"
    entries.write_text(json.dumps({"version": 1, "entries": [{"event_id": 123, "decision": "done"}]}))
    token = next(state.parent.glob("token"))
    return {
        "hold": ["hold", "--reason", "upgrade"],
        "release": ["release"],
        "redispatch": ["redispatch", "7"],
        "discard": ["discard", "7"],
        "import": ["import", str(entries)],
        "setup": ["setup", "--base-url", "http://127.0.0.1:1", "--account", "1", "--agent", "2",
                  "--token-file", str(token), "--no-check", "--state-dir", str(state.parent / "another")],
    }  # fmt: skip


def one_line_not_recorded(capsys: pytest.CaptureFixture[str]) -> str:
    seen = capsys.readouterr()
    lines = seen.err.splitlines()
    assert len(lines) == 1, seen.err
    assert lines[0].startswith("error: ")
    assert any(words in lines[0] for words in NOT_RECORDED), lines[0]
    return lines[0]


def where(name: str, state: Path) -> list[str]:
    return [] if name == "setup" else ["--state-dir", str(state)]


@pytest.mark.parametrize("name", ["hold", "release", "redispatch", "discard", "import", "setup"])
def test_a_full_disk_is_one_line_and_records_nothing(
    name: str, mounted_state: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = commands(mounted_state, tmp_path)[name]
    ledger = mounted_state / "ledger.sqlite3"
    before = ledger.read_bytes()
    fill(mounted_state.parent)
    capsys.readouterr()
    assert connect([*argv, *where(name, mounted_state)]) == EXIT_CONFIG
    line = one_line_not_recorded(capsys)
    assert "No space left on device" in line or "no space" in line
    assert ledger.read_bytes() == before
    assert not (mounted_state.parent / "another" / "config.json").exists()


@pytest.mark.parametrize("name", ["hold", "release", "redispatch", "discard", "import"])
def test_a_read_only_state_directory_is_one_line_and_records_nothing(
    name: str, mounted_state: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = commands(mounted_state, tmp_path)[name]
    before = (mounted_state / "ledger.sqlite3").read_bytes()
    remount(mounted_state.parent, "ro")
    capsys.readouterr()
    assert connect([*argv, *where(name, mounted_state)]) == EXIT_CONFIG
    one_line_not_recorded(capsys)
    assert (mounted_state / "ledger.sqlite3").read_bytes() == before


@pytest.fixture
def state(standin: StandIn, tmp_path: Path) -> Path:
    state = configure_connector(standin, tmp_path, worker=("true",), base_url=standin.base_url)
    open_ledger(state / "ledger.sqlite3").close()
    return state


@pytest.mark.slow
@pytest.mark.parametrize("name", ["hold", "import", "discard"])
def test_a_file_size_bound_is_one_line_naming_it_and_records_nothing(name: str, state: Path, tmp_path: Path) -> None:
    argv = [str(REPOSITORY / "bin" / "connect"), *commands(state, tmp_path)[name], "--state-dir", str(state)]
    before = (state / "ledger.sqlite3").read_bytes()
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120, check=False,
                          preexec_fn=file_size_bound(8192))  # fmt: skip
    assert done.returncode == EXIT_CONFIG, done.stderr
    (line,) = done.stderr.splitlines()
    assert "ulimit -f" in line
    assert "the decision was not recorded" in line
    assert (state / "ledger.sqlite3").read_bytes() == before


@pytest.mark.parametrize("verb", [["abandon", "1"], ["resend", "1"], ["sent", "1", "--receipt", "9", "--unchecked"]])
@pytest.mark.parametrize("disk", ["full", "read-only"])
def test_outbox_resolves_decision_on_a_bad_disk_says_it_was_not_recorded(
    verb: list[str], disk: str, mounted_state: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = (mounted_state / "ledger.sqlite3").read_bytes()
    if disk == "full":
        fill(mounted_state.parent)
    else:
        remount(mounted_state.parent, "ro")
    capsys.readouterr()
    assert resolve(["--state-dir", str(mounted_state), "--by", "local:ana", *verb]) == EXIT_CONFIG
    assert "the decision was not recorded" in one_line_not_recorded(capsys)
    assert (mounted_state / "ledger.sqlite3").read_bytes() == before
