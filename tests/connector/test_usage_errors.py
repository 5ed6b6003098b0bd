"""Bad usage of either command line is an error like any other (``shell.cli.seam``): one
``error:`` line naming the command and its ``--help``, exit 2, and with ``--json`` the documented
JSON object on stdout -- never argparse's ``usage: ... / prog: error: ...``. Ids are ASCII digits
alone (``core.ids``), and flags that contradict each other are bad usage
(``shell.state.config.locate_state``). In-process through the entry functions, on a real
configured state directory."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.ids import id_digits
from shell.cli.main import main as connect
from shell.cli.resolve import main as resolve
from shell.errors import EXIT_USAGE


def connect_code(argv: list[str]) -> int:
    try:
        return connect(argv)
    except SystemExit as done:
        return done.code if isinstance(done.code, int) else -1


USAGE = [
    ["--bogus", "status"], ["bogus"], ["status", "--bogus"], ["redispatch"], ["discard", "7", "8"],
    ["settle-launch", "7"], ["settle-launch", "7", "--ran", "--did-not-run"], ["hold"], ["shadow"],
    ["shadow", "x"], [],
]  # fmt: skip


@pytest.mark.parametrize("argv", USAGE, ids=[" ".join(argv) or "nothing" for argv in USAGE])
def test_bad_usage_is_one_error_line_and_2(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert connect_code(argv) == EXIT_USAGE
    seen = capsys.readouterr()
    assert seen.out == ""
    lines = seen.err.splitlines()
    assert len(lines) == 1, seen.err
    assert lines[0].startswith("error: bin/connect")
    assert "--help`)" in lines[0]
    assert "usage:" not in seen.err


@pytest.mark.parametrize("argv", [["show", "-1"], ["show", "abc"], ["sent", "5", "--receipt", "abc"], [], ["bogus"]])
def test_outbox_resolve_bad_usage_is_one_error_line_and_2(
    argv: list[str], state: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert resolve(["--state-dir", str(state), *argv]) == EXIT_USAGE
    seen = capsys.readouterr()
    lines = seen.err.splitlines()
    assert len(lines) == 1, seen.err
    assert lines[0].startswith("error: bin/outbox-resolve")


@pytest.mark.parametrize("argv", [["status", "--json", "--bogus"], ["discard", "--json"], ["hold", "--json"]])
def test_bad_usage_with_json_is_the_documented_object(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert connect_code(argv) == EXIT_USAGE
    seen = capsys.readouterr()
    said = json.loads(seen.out)
    assert said["exit_code"] == EXIT_USAGE
    assert seen.err == f"error: {said['error']}\n"
    assert said["errors"] == [said["error"]]


@pytest.mark.parametrize("text", ["٣", "７", "+7000000005", " 7000000005", "7000000005 ", "7_000", "²", "0x7"])
def test_an_id_is_ascii_digits_alone(text: str, state: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert id_digits(text) is None
    assert connect_code(["discard", text, "--state-dir", str(state)]) == EXIT_USAGE
    (line,) = capsys.readouterr().err.splitlines()
    assert "ASCII digits" in line
    assert id_digits("7000000005") == 7000000005


def test_a_configured_id_in_other_digits_is_refused() -> None:
    from core.configuration import positive_id

    problems: list[str] = []
    assert positive_id("٣٣", "account_id", problems) is None
    assert problems


@pytest.mark.parametrize(
    "flags",
    [["--account", "5550001"], ["--agent", "1049715901"], ["--account", "5550001", "--agent", "9"],
     ["--account", "9", "--agent", "1049715901"]],
)  # fmt: skip
@pytest.mark.parametrize("command", [["status"], ["discard", "7"], ["hold", "--reason", "x"]])
def test_flags_that_contradict_each_other_are_bad_usage_and_change_nothing(
    flags: list[str], command: list[str], state: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = (state / "ledger.sqlite3").stat().st_mtime_ns if (state / "ledger.sqlite3").exists() else None
    assert connect_code([*command, "--state-dir", str(state), *flags]) == EXIT_USAGE
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith("error: --")
    after = (state / "ledger.sqlite3").stat().st_mtime_ns if (state / "ledger.sqlite3").exists() else None
    assert after == before


def test_an_account_alone_is_bad_usage_without_a_state_directory_too(capsys: pytest.CaptureFixture[str]) -> None:
    assert connect_code(["status", "--account", "5550001"]) == EXIT_USAGE
    assert capsys.readouterr().err == "error: --account and --agent name one pair: give both, or neither\n"


def test_the_state_directorys_own_pair_beside_it_is_no_contradiction(
    state: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["status", "--state-dir", str(state), "--account", "5550001", "--agent", "1049715901"]
    assert connect_code(argv) == 3  # status ran: no ledger yet
    assert "no ledger here" in capsys.readouterr().err


def test_bad_usage_shows_what_was_typed_escaped_on_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert connect_code(["status", "two\nlines", "\x1b[2J"]) == EXIT_USAGE
    (line,) = capsys.readouterr().err.splitlines()
    assert "two\\nlines \\x1b[2J" in line
    assert "\x1b" not in line
