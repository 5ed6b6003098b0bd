"""A standard stream the command cannot write (``shell.cli.seam``),
as real processes: stdout on ``/dev/full`` or closed is one line naming standard output and
exit 3 -- never the ledger's disk blamed, never a traceback -- and a decision taken says it was
recorded; a closed or full stderr keeps the exit code; an ASCII-only encoding escapes what it
cannot hold. ``run`` with an unwritable stdout refuses to run, saying so."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from shell.basecamp.standin.server import StandIn
from shell.errors import EXIT_CONFIG, EXIT_NOT_FOUND, EXIT_OK
from shell.ledger.connection import open_ledger, open_ledger_read_only
from shell.ledger.hold import standing
from tests.support.configured import configure_connector

pytestmark = pytest.mark.slow
REPOSITORY = Path(__file__).resolve().parents[2]


@pytest.fixture
def state(standin: StandIn, tmp_path: Path) -> Path:
    state = configure_connector(standin, tmp_path, worker=("true",))
    open_ledger(state / "ledger.sqlite3").close()
    return state


def connect(*argv: str, stdout: object = subprocess.PIPE, stderr: object = subprocess.PIPE,
            environment: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:  # fmt: skip
    return subprocess.run(
        [str(REPOSITORY / "bin" / "connect"), *argv], stdin=subprocess.DEVNULL, stdout=stdout, stderr=stderr,
        text=True, timeout=120, check=False, env=environment,
    )  # fmt: skip


def closing(descriptor: int) -> object:
    return lambda: os.close(descriptor)


def test_status_with_stdout_on_a_full_device_says_standard_output(state: Path) -> None:
    with open("/dev/full", "w") as full:
        done = connect("status", "--state-dir", str(state), stdout=full)
    assert done.returncode == EXIT_CONFIG
    assert done.stderr == "error: standard output cannot be written (No space left on device)\n"


def test_a_decision_whose_answer_cannot_be_written_says_it_was_recorded(state: Path) -> None:
    with open("/dev/full", "w") as full:
        done = connect("hold", "--reason", "upgrade", "--by", "local:ana", "--state-dir", str(state), stdout=full)
    assert done.returncode == EXIT_CONFIG
    (line,) = done.stderr.splitlines()
    assert line.startswith("error: standard output cannot be written (No space left on device); the decision"
                           " was recorded: Held (generation 1)")  # fmt: skip
    with open_ledger_read_only(state / "ledger.sqlite3") as ledger, ledger.read() as connection:
        assert standing(connection) is not None


def test_a_closed_stdout_is_said_closed(state: Path) -> None:
    done = subprocess.run(
        [str(REPOSITORY / "bin" / "connect"), "status", "--state-dir", str(state)],
        stdin=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, timeout=120, check=False,
        preexec_fn=closing(1),
    )  # fmt: skip
    assert done.returncode == EXIT_CONFIG
    assert done.stderr == "error: standard output cannot be written (it was closed)\n"


@pytest.mark.parametrize("how", ["closed", "full"])
def test_the_exit_code_survives_an_unwritable_stderr(state: Path, how: str) -> None:
    argv = [str(REPOSITORY / "bin" / "connect"), "discard", "7", "--state-dir", str(state)]
    if how == "closed":
        done = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, text=True, timeout=120,
                              check=False, preexec_fn=closing(2))  # fmt: skip
    else:
        with open("/dev/full", "w") as full:
            done = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=full, text=True,
                                  timeout=120, check=False)  # fmt: skip
    assert done.returncode == EXIT_NOT_FOUND
    assert done.stdout == "", "the error line never lands on stdout"


def test_an_ascii_only_stdout_escapes_what_it_cannot_hold(state: Path) -> None:
    done = connect("status", "--state-dir", str(state), environment={**os.environ, "PYTHONIOENCODING": "ascii"})
    assert done.returncode == EXIT_OK, done.stderr
    assert "\\u00b7" in done.stdout
    assert "Traceback" not in done.stderr
    as_json = connect("status", "--json", "--state-dir", str(state),
                      environment={**os.environ, "PYTHONIOENCODING": "ascii"})  # fmt: skip
    assert as_json.returncode == EXIT_OK, as_json.stderr
    summary = json.loads(as_json.stdout)["summary"]  # the same text as a UTF-8 stdout's (disk figures move)
    assert "·" in summary
    assert summary == json.loads(connect("status", "--json", "--state-dir", str(state)).stdout)["summary"]


def test_run_with_stdout_on_a_full_device_refuses_naming_standard_output(state: Path) -> None:
    with open("/dev/full", "w") as full:
        done = connect("run", "--state-dir", str(state), "--no-live", stdout=full)
    assert done.returncode == EXIT_CONFIG, done.stderr
    assert done.stderr.splitlines()[-1] == "error: standard output cannot be written (No space left on device)"
    assert "ledger" not in done.stderr


@pytest.mark.parametrize("argv", [["status", "--json", "--bogus"], ["discard", "7", "--json"]], ids=["usage", "not found"])
def test_an_error_whose_json_cannot_reach_stdout_keeps_its_exit_code(state: Path, argv: list[str]) -> None:
    with open("/dev/full", "w") as full:
        done = connect(*argv, "--state-dir", str(state), stdout=full)
    assert done.returncode == (2 if "--bogus" in argv else EXIT_NOT_FOUND), done.stderr
    (line,) = done.stderr.splitlines()
    assert line.startswith("error: ")
