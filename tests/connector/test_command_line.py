"""What every command does with a value it cannot use, or a reader that goes away: one line (or
argparse's usage error) and a non-zero exit, never a traceback."""

from __future__ import annotations

import argparse
import os
import subprocess
from pathlib import Path

import pytest

from shell.cli.arguments import port, positive_integer, positive_seconds
from shell.cli.main import main as connect
from shell.errors import EXIT_BROKEN_PIPE, EXIT_CONFIG, EXIT_USAGE

REPOSITORY = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(("text", "seconds"), [("2.5", 2.5), ("30s", 30.0), ("1m", 60.0), ("500ms", 0.5)])
def test_a_time_is_seconds_or_a_duration(text: str, seconds: float) -> None:
    assert positive_seconds(text) == seconds


@pytest.mark.parametrize("text", ["nan", "inf", "-1", "0", "0s", "soon", ""])
def test_a_time_that_is_not_finite_and_above_zero_is_refused(text: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError):
        positive_seconds(text)


@pytest.mark.parametrize("text", ["-1", "65536", "99999", "http"])
def test_a_port_outside_0_to_65535_is_refused(text: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError):
        port(text)
    assert (port("0"), port("65535")) == (0, 65535)


@pytest.mark.parametrize("text", ["0", "-3", "1.5", "x"])
def test_an_id_is_a_whole_number_above_zero(text: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError):
        positive_integer(text)


@pytest.mark.parametrize(
    "argv",
    [["run", "--poll-seconds", "nan"], ["run", "--poll-seconds", "-1"], ["run", "--shutdown-seconds", "-5"],
     ["standin", "--port", "99999"], ["discard", "abc"], ["status", "--account", "abc"],
     ["redispatch", "7", "--agent", "0"], ["run", "--account", "-3", "--agent", "4"]],
)
def test_a_value_no_command_can_use_is_a_usage_error(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        connect(argv)
    assert done.value.code == EXIT_USAGE
    assert "Traceback" not in capsys.readouterr().err


@pytest.mark.parametrize("command", ["run", "status", "redispatch", "discard"])
def test_a_state_directory_that_is_a_file_is_one_line(
    command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    afile = tmp_path / "afile"
    afile.write_text("")
    argv = [command, "--state-dir", str(afile), *(["7"] if command in ("redispatch", "discard") else [])]
    assert connect(argv) == EXIT_CONFIG
    errors = capsys.readouterr().err.strip().splitlines()
    assert len(errors) == 1
    assert errors[0].startswith("error: ")


@pytest.mark.slow
def test_a_reader_that_goes_away_ends_the_command_quietly() -> None:
    read_end, write_end = os.pipe()
    os.close(read_end)  # like `| head -0`: nobody reads what the command prints
    try:
        ended = subprocess.run(
            [str(REPOSITORY / "bin" / "connect"), "standin", "--json"],
            stdout=write_end, stderr=subprocess.PIPE, text=True, timeout=60, check=False,
        )
    finally:
        os.close(write_end)
    assert ended.returncode == EXIT_BROKEN_PIPE
    assert ended.stderr == ""
