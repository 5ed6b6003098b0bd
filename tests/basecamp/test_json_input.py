"""``core.json_input``: every JSON the program reads, decoded in one place within bounds -- and
each reader refusing a deep or broken one in its own terms, never with a ``RecursionError``."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from returns.result import Failure

from core.feed import Unreadable, read_frame
from core.import_file import NotAFile, parse
from core.json_input import MAX_DEPTH, Decoded, JsonRefused, decode_json, json_or_none
from core.oauth import read_token_text
from shell.cli.main import main as connect

DEEP = "[" * 100_000 + "]" * 100_000


@pytest.mark.parametrize("opening", ["[", '{"a":'])
def test_nesting_past_the_bound_is_refused_before_the_parser_sees_it(opening: str) -> None:
    closing = "]" if opening == "[" else "}"
    assert decode_json(opening * MAX_DEPTH + "1" + closing * MAX_DEPTH) == Decoded(
        json.loads(opening * MAX_DEPTH + "1" + closing * MAX_DEPTH)
    )
    too_deep = opening * (MAX_DEPTH + 1) + "1" + closing * (MAX_DEPTH + 1)
    assert decode_json(too_deep) == JsonRefused(f"nested deeper than {MAX_DEPTH}")
    assert decode_json(DEEP) == JsonRefused(f"nested deeper than {MAX_DEPTH}")


def test_brackets_inside_strings_are_text_not_nesting() -> None:
    text = json.dumps({"content": "[" * 1000 + '\\"{' * 100, "n": ['"]]]"']})
    assert decode_json(text) == Decoded(json.loads(text))


def test_size_not_utf8_not_json_and_nan_are_refused_quoting_nothing() -> None:
    assert decode_json(b"[1]" + b" " * 100, max_bytes=50) == JsonRefused("larger than 50 bytes")
    assert decode_json(b"\xff[]") == JsonRefused("not JSON (not UTF-8 at byte 0)")
    refused = decode_json('{"token": "SECRET"')
    assert isinstance(refused, JsonRefused)
    assert "SECRET" not in refused.reason
    assert isinstance(decode_json("[NaN]"), JsonRefused)
    assert isinstance(decode_json('"' + '\\"' * 1000), JsonRefused)  # a string never closed
    assert json_or_none(DEEP) is None
    assert json_or_none("[1]") == [1]


@given(st.recursive(st.none() | st.booleans() | st.integers() | st.text(), lambda inner: (
    st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3)), max_leaves=30))
def test_any_json_within_the_bounds_reads_as_the_parser_reads_it(value: Any) -> None:
    text = json.dumps(value)
    assert decode_json(text) == Decoded(json.loads(text))


def test_each_reader_refuses_a_deep_value_in_its_own_terms() -> None:
    assert read_frame(DEEP) == Unreadable(f"nested deeper than {MAX_DEPTH}")  # a live-lane frame
    with pytest.raises(ValueError, match="neither a bare token nor the JSON"):
        read_token_text("{" + DEEP[1:-1] + "}")  # the token file
    refused = parse(DEEP.encode())  # an import file
    assert isinstance(refused, Failure)
    assert isinstance(refused.failure(), NotAFile)


def _deep_configuration(tmp_path: Path) -> Path:
    state = tmp_path / "state"
    state.mkdir(mode=0o700)
    config = state / "config.json"
    config.write_text(DEEP)
    os.chmod(config, 0o600)
    return state


@pytest.mark.parametrize("command", ["status", "run"])
def test_a_configuration_nested_100000_deep_is_one_line_and_exit_3(
    tmp_path: Path, command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert connect([command, "--state-dir", str(_deep_configuration(tmp_path))]) == 3
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith("error: ")
    assert "nested deeper than" in line


def test_doctor_fails_the_configuration_check_of_one_nested_100000_deep(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert connect(["doctor", "--state-dir", str(_deep_configuration(tmp_path))]) == 1
    (line,) = [line for line in capsys.readouterr().out.splitlines() if "configuration" in line]
    assert line.startswith("failing")
    assert "nested deeper than" in line
