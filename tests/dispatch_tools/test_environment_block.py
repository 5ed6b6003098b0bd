"""``shell.environment_block``: a variable erased from what ``/proc/PID/environ`` shows, in place,
and nothing else touched. Each case is a fresh process: the block is the one it was started with."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from shell import environment_block

REPOSITORY = Path(__file__).resolve().parents[2]
ERASE = (
    "import json, os, sys\n"
    "from shell.environment_block import erase\n"
    "before = open('/proc/self/environ', 'rb').read()\n"
    "answer = erase(sys.argv[1:])\n"
    "after = open('/proc/self/environ', 'rb').read()\n"
    "print(json.dumps({'answer': answer, 'before': before.decode('latin-1'), 'after': after.decode('latin-1')}))\n"
)


def erased(names: list[str], **env: str) -> tuple[bool, str, str]:
    """(erase's answer, the block before, after) in a process started with ``env``."""
    started = subprocess.run(
        [sys.executable, "-P", "-c", ERASE, *names],
        capture_output=True, text=True, timeout=60, check=True,
        env={"PYTHONPATH": str(REPOSITORY), "PATH": os.environ.get("PATH", ""), **env},
    )  # fmt: skip
    report = json.loads(started.stdout)
    return report["answer"], report["before"], report["after"]


def strings(block: str) -> list[str]:
    return block.split("\0")


def test_the_named_variable_is_gone_from_the_block_and_every_other_string_is_as_it_was() -> None:
    answer, before, after = erased(["SECRET"], SECRET="hunter2", OTHER="kept", SECRET_TOO="also kept")
    assert answer is True
    assert "SECRET=hunter2" in strings(before)
    assert "hunter2" not in after
    entry = "SECRET=hunter2"
    assert after == before.replace(entry, "\0" * len(entry)), "overwritten where it stood; nothing else changed"
    assert "OTHER=kept" in strings(after)
    assert "SECRET_TOO=also kept" in strings(after), "a name that only begins like it is another variable"


def test_only_a_whole_string_that_begins_with_the_name_is_erased_never_a_value_that_contains_it() -> None:
    answer, _, after = erased(["TOKEN"], NOTE="TOKEN=not a token, a value", TOKEN="t0k")
    assert answer is True
    assert "NOTE=TOKEN=not a token, a value" in strings(after)
    assert not [string for string in strings(after) if string.startswith("TOKEN=")]


def test_several_names_at_once_and_a_name_not_in_the_block_is_already_gone() -> None:
    answer, _, after = erased(["A_TOKEN", "B_TOKEN", "NOT_SET"], A_TOKEN="a", B_TOKEN="b")
    assert answer is True
    assert not [string for string in strings(after) if string.startswith(("A_TOKEN=", "B_TOKEN="))]


def test_a_block_it_cannot_write_is_answered_false_never_raised(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Rule 2: the memory file missing (no /proc, a kernel that refuses) is False, not an error."""
    monkeypatch.setattr(environment_block, "_MEMORY", str(tmp_path / "no-such-memory"))
    assert environment_block.erase(["PATH"]) is False
    assert "PATH" in os.environ, "nothing of the process's own environment was touched"


def test_an_erasure_it_cannot_see_done_is_answered_false(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Rule 2: True only after a second read finds the string gone; a read that still shows it is False."""
    still_there = tmp_path / "environ"
    still_there.write_bytes(b"A=1\0SECRET=still here\0")
    monkeypatch.setattr(environment_block, "_MEMORY", os.devnull)  # writes go nowhere
    monkeypatch.setattr(environment_block, "_ENVIRONMENT", str(still_there))
    monkeypatch.setattr(environment_block, "_bounds", lambda: (1, 100))
    assert environment_block.erase(["SECRET"]) is False
