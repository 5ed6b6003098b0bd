"""Bad input to ``bin/connect`` is one line and a documented exit code, decided before anything
starts, in-process through the entry function (the real-process cases are in
``test_run_bad_input.py``):

ids and times too large to store or wait for are usage errors (2); a task deadline of
``99999999h``, a worker command with a placeholder it does not know, a token file that is a
directory or holds non-ASCII, and a route to a directory that is not there are configuration
errors (3), refused by ``setup`` before it writes and by ``run`` before it takes the lock or
creates a ledger. With ``--json`` an error is also one JSON object on stdout.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from core.configuration import RouteFacts, route_advice, route_problem
from shell.cli.main import main as connect
from shell.cli.resolve import main as resolve
from shell.errors import EXIT_CONFIG, EXIT_USAGE

TOO_LARGE_ID = "9" * 30


def one_error_line(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert lines, "an error line"
    assert lines[-1].startswith(("error: ", "bin/connect ", "bin/outbox-resolve")), lines
    return lines[-1]


def usage_error(capsys: pytest.CaptureFixture[str], run: object) -> str:
    with pytest.raises(SystemExit) as done:
        run()  # type: ignore[operator]
    assert done.value.code == EXIT_USAGE
    return one_error_line(capsys)


@pytest.mark.parametrize("command", ["redispatch", "discard"])
def test_an_id_too_large_to_store_is_a_usage_error(
    command: str, state: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    line = usage_error(capsys, lambda: connect([command, "--state-dir", str(state), TOO_LARGE_ID]))
    assert "larger than any id" in line


def test_outbox_resolve_refuses_an_id_too_large_to_store(state: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert resolve(["--state-dir", str(state), "show", TOO_LARGE_ID]) == EXIT_USAGE
    assert "larger than any id" in one_error_line(capsys)


@pytest.mark.parametrize("option", ["--poll-seconds", "--shutdown-seconds"])
def test_a_time_too_long_to_wait_for_is_a_usage_error(
    option: str, state: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    line = usage_error(capsys, lambda: connect(["run", "--state-dir", str(state), option, "1e30"]))
    assert "longer than a year" in line


@pytest.mark.parametrize("option", ["--deadline", "--guard-delay", "--still-running", "--reconcile-after"])
def test_setup_refuses_a_duration_past_a_year_and_writes_nothing(
    option: str, state: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = (state / "config.json").read_bytes()
    assert connect(["setup", "--state-dir", str(state), option, "99999999h", "--no-check"]) == EXIT_CONFIG
    assert "expected a positive duration up to a year" in one_error_line(capsys)
    assert (state / "config.json").read_bytes() == before


def rewrite_config(state: Path, **changes: object) -> None:
    path = state / "config.json"
    path.write_text(json.dumps({**json.loads(path.read_text()), **changes}))


def test_run_refuses_a_configured_deadline_past_a_year(state: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rewrite_config(state, task_deadline="99999999h")
    assert connect(["run", "--state-dir", str(state)]) == EXIT_CONFIG
    assert "task_deadline: expected a positive duration up to a year" in one_error_line(capsys)
    assert not (state / "ledger.sqlite3").exists()


def test_setup_refuses_an_unknown_placeholder_and_writes_nothing(
    state: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = (state / "config.json").read_bytes()
    argv = ["setup", "--state-dir", str(state), "--worker-command", "true {promt}", "--no-check"]
    assert connect(argv) == EXIT_CONFIG
    assert one_error_line(capsys) == (
        "error: setup: worker_command: unknown placeholder {promt} in the worker command; "
        "known: mcp_config, prompt, work_dir"
    )
    assert (state / "config.json").read_bytes() == before


@pytest.mark.parametrize("command", ["x {prompt", "x --mcp-config={mcp_config", "x { {prompt}"])
def test_setup_refuses_an_unclosed_placeholder_and_writes_nothing(
    state: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    before = (state / "config.json").read_bytes()
    argv = ["setup", "--state-dir", str(state), "--worker-command", command, "--no-check"]
    assert connect(argv) == EXIT_CONFIG
    line = one_error_line(capsys)
    assert line.startswith("error: setup: worker_command: unclosed placeholder '{"), line
    assert line.endswith("in the worker command (a { with no } after it); known: mcp_config, prompt, work_dir")
    assert (state / "config.json").read_bytes() == before


def test_run_refuses_an_unknown_placeholder_before_anything_starts(
    state: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rewrite_config(state, worker_command=["true", "{work_directory}"])
    assert connect(["run", "--state-dir", str(state)]) == EXIT_CONFIG
    assert one_error_line(capsys).startswith("error: worker_command: unknown placeholder {work_directory}")
    assert not (state / "ledger.sqlite3").exists()
    assert connect(["setup", "--state-dir", str(state), "--show"]) == 0  # show says it, and does not fail
    assert "missing: worker_command: unknown placeholder" in capsys.readouterr().out


def token_file(state: Path) -> Path:
    return Path(json.loads((state / "config.json").read_text())["token_file"])


def test_a_token_file_that_is_a_directory_is_one_line(state: Path, capsys: pytest.CaptureFixture[str]) -> None:
    token = token_file(state)
    token.unlink()
    token.mkdir(mode=0o700)
    assert connect(["run", "--state-dir", str(state)]) == EXIT_CONFIG
    assert one_error_line(capsys) == f"error: token file {token} is not a regular file"


@pytest.mark.parametrize("content", ["tök€n", "token\x07bell"])
def test_a_token_that_cannot_go_in_a_header_is_one_line(
    content: str, state: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    token = token_file(state)
    token.write_text(content + "\n")
    assert connect(["run", "--state-dir", str(state)]) == EXIT_CONFIG
    line = one_error_line(capsys)
    assert line.startswith(f"error: token file {token} holds a ")
    assert content not in line


def test_a_token_file_over_the_bound_is_refused_whole_never_read_cut(
    state: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    token = token_file(state)
    token.write_text("t" * (64 * 1024 + 1))  # cut at 64 KiB it would read as a token
    assert connect(["run", "--state-dir", str(state)]) == EXIT_CONFIG
    assert one_error_line(capsys) == (
        f"error: token file {token} holds more than 64 KiB; a token file holds one token or a login's credentials"
    )


def test_run_refuses_a_route_to_a_missing_directory_before_anything_starts(
    state: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    [(project, route)] = json.loads((state / "config.json").read_text())["routes"].items()
    shutil.rmtree(route["directory"])
    assert connect(["run", "--state-dir", str(state)]) == EXIT_CONFIG
    gone = RouteFacts(int(project), route["directory"], exists=False, is_directory=False, writable=False)
    assert one_error_line(capsys) == (  # core.configuration's words, as setup and doctor say them
        f"error: {route_problem(gone)}: not started; {route_advice(gone)}"
    )
    assert not (state / "ledger.sqlite3").exists()
    assert not list(state.glob("*.lock")), "refused before the lock"


def test_setup_refuses_a_route_to_a_missing_directory(
    state: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["setup", "--state-dir", str(state), "--route", f"7={tmp_path / 'nowhere'}", "--no-check"]
    assert connect(argv) == EXIT_CONFIG
    gone = RouteFacts(7, str(tmp_path / "nowhere"), exists=False, is_directory=False, writable=False)
    assert f"{route_problem(gone)}" in one_error_line(capsys)  # core.configuration's words


def json_error(capsys: pytest.CaptureFixture[str]) -> dict[str, object]:
    seen = capsys.readouterr()
    assert "Traceback" not in seen.err
    answer: dict[str, object] = json.loads(seen.out)  # one JSON object, nothing else
    assert isinstance(answer, dict)
    return answer


@pytest.mark.parametrize("command", [["status"], ["redispatch", "7"], ["discard", "7"], ["setup", "--show"]])
def test_with_json_an_error_is_one_json_object(
    command: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "missing"
    assert connect([*command, "--state-dir", str(missing), "--json"]) == EXIT_CONFIG
    answer = json_error(capsys)
    assert answer["exit_code"] == EXIT_CONFIG
    assert str(missing) in str(answer["error"])
    assert answer["errors"] == [answer["error"]]


def test_with_json_a_usage_error_is_one_json_object(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        connect(["redispatch", "--json", TOO_LARGE_ID])
    answer = json_error(capsys)
    assert answer["exit_code"] == EXIT_USAGE
    assert "larger than any id" in str(answer["error"])


def test_outbox_resolve_with_json_says_its_errors_as_one_json_object(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert resolve(["--ledger", str(tmp_path / "none.sqlite3"), "--json", "list"]) == EXIT_CONFIG
    assert json_error(capsys)["exit_code"] == EXIT_CONFIG
    assert resolve(["--json", "show", TOO_LARGE_ID, "--ledger", "x"]) == EXIT_USAGE
    assert json_error(capsys)["exit_code"] == EXIT_USAGE


@pytest.mark.parametrize("number", ["9" * 20, "-5", "x"])
def test_a_token_descriptor_the_system_cannot_take_is_a_usage_error(
    number: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["mcp", "--ledger", str(tmp_path / "ledger.sqlite3"), "--token-fd", number]
    assert "is not a descriptor number" in usage_error(capsys, lambda: connect(argv))
