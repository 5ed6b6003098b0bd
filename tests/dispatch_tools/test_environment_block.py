"""``shell.process_secrets``: a variable erased from what ``/proc/PID/environ`` shows, in place,
and nothing else touched. Each case is a fresh process: the block is the one it was started with."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from shell import process_secrets

REPOSITORY = Path(__file__).resolve().parents[2]
ERASE = (
    "import json, os, sys\n"
    "from shell.process_secrets import erase_environment as erase\n"
    "before = open('/proc/self/environ', 'rb').read()\n"
    "for name in sys.argv[2:]:\n"
    "    os.environ.pop(name, None)  # the caller's part\n"
    "answer = erase(sys.argv[2:], sys.argv[1].encode())\n"
    "after = open('/proc/self/environ', 'rb').read()\n"
    "print(json.dumps({'answer': answer, 'before': before.decode('latin-1'), 'after': after.decode('latin-1')}))\n"
)


def erased(names: list[str], secret: str, **env: str) -> tuple[bool, str, str]:
    """(erase's answer, the block before, after) in a process started with ``env``."""
    started = subprocess.run(
        [sys.executable, "-P", "-c", ERASE, secret, *names],
        capture_output=True, text=True, timeout=60, check=True,
        env={"PYTHONPATH": str(REPOSITORY), "PATH": os.environ.get("PATH", ""), **env},
    )  # fmt: skip
    report = json.loads(started.stdout)
    return report["answer"], report["before"], report["after"]


def strings(block: str) -> list[str]:
    return block.split("\0")


def test_the_named_variable_is_gone_from_the_block_and_every_other_string_is_as_it_was() -> None:
    answer, before, after = erased(["SECRET"], "hunter2", SECRET="hunter2", OTHER="kept", SECRET_TOO="also kept")
    assert answer is True
    assert "SECRET=hunter2" in strings(before)
    assert "hunter2" not in after
    entry = "SECRET=hunter2"
    assert after == before.replace(entry, "\0" * len(entry)), "overwritten where it stood; nothing else changed"
    assert "OTHER=kept" in strings(after)
    assert "SECRET_TOO=also kept" in strings(after), "a name that only begins like it is another variable"


def test_only_a_whole_string_that_begins_with_the_name_is_erased_never_a_value_that_contains_it() -> None:
    answer, _, after = erased(["TOKEN"], "t0k", NOTE="TOKEN=not a token, a value", TOKEN="t0k")
    assert answer is True
    assert "NOTE=TOKEN=not a token, a value" in strings(after)
    assert not [string for string in strings(after) if string.startswith("TOKEN=")]


def test_several_names_at_once_and_a_name_not_in_the_block_is_already_gone() -> None:
    answer, _, after = erased(["A_TOKEN", "B_TOKEN", "NOT_SET"], "a-token", A_TOKEN="a-token", B_TOKEN="b-token")
    assert answer is True
    assert not [string for string in strings(after) if string.startswith(("A_TOKEN=", "B_TOKEN="))]


def test_a_block_it_cannot_write_is_answered_false_never_raised(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The memory file missing (no /proc, a kernel that refuses) is False, not an error."""
    monkeypatch.setattr(process_secrets, "_MEMORY", str(tmp_path / "no-such-memory"))
    assert process_secrets.erase_environment(["PATH"], b"/usr") is False
    assert "PATH" in os.environ, "nothing of the process's own environment was touched"


def test_an_erasure_it_cannot_see_done_is_answered_false(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """True only after a second read finds the string gone; a read that still shows it is False."""
    still_there = tmp_path / "environ"
    still_there.write_bytes(b"A=1\0SECRET=still here\0")
    monkeypatch.setattr(process_secrets, "_MEMORY", os.devnull)  # writes go nowhere
    monkeypatch.setattr(process_secrets, "_ENVIRONMENT", str(still_there))
    monkeypatch.setattr(process_secrets, "_bounds", lambda: (1, 100))
    assert process_secrets.erase_environment(["SECRET"], b"still here") is False


def test_the_secret_left_under_another_name_is_no_erasure() -> None:
    answer, _, after = erased(["SECRET"], "hunter2", SECRET="hunter2", COPY="hunter2")
    assert answer is False, "the secret is still in the block: the caller must not count on it"
    assert not [string for string in strings(after) if string.startswith("SECRET=")]


class ShortWrites:
    """A memory file that writes at most four bytes a call, as a short write would."""

    def __init__(self, path: str, mode: str, buffering: int = -1) -> None:
        self.file = open(path, mode, buffering=buffering)  # noqa: SIM115 -- closed in __exit__

    def __enter__(self) -> ShortWrites:
        return self

    def __exit__(self, *_: object) -> None:
        self.file.close()

    def seek(self, offset: int) -> int:
        return self.file.seek(offset)

    def read(self, size: int) -> bytes:
        return self.file.read(size)

    def write(self, data: bytes) -> int:
        return int(self.file.write(data[:4]))


def test_a_short_write_is_answered_false(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    block = tmp_path / "block"
    block.write_bytes(b"A=1\0SECRET=a long secret value\0")
    monkeypatch.setattr(process_secrets, "_MEMORY", str(block))
    monkeypatch.setattr(process_secrets, "_ENVIRONMENT", os.devnull)  # a second read that shows nothing
    monkeypatch.setattr(process_secrets, "_bounds", lambda: (0, len(block.read_bytes())))
    monkeypatch.setattr(process_secrets, "open", ShortWrites, raising=False)
    assert process_secrets.erase_environment(["SECRET"], b"a long secret value") is False


@pytest.mark.parametrize(
    ("line", "bounds"),
    [
        (b"7 (python) S" + b" 9" * 46 + b" 4096 8192 0\n", (4096, 8192)),
        (b"7 (a) R 1 2 (odd) S" + b" 9" * 46 + b" 4096 8192 0\n", (4096, 8192)),  # a name holding ") "
        (b"7 (python) S" + b" 9" * 40 + b"\n", None),  # a kernel without env_start and env_end
        (b"7 (python) S" + b" 9" * 46 + b" 0 0 0\n", None),  # no block
    ],
)
def test_the_blocks_bounds_are_read_after_the_programs_name_or_refused(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, line: bytes, bounds: tuple[int, int] | None
) -> None:
    stat = tmp_path / "stat"
    stat.write_bytes(line)
    monkeypatch.setattr(process_secrets, "_STAT", str(stat))
    if bounds is not None:
        assert process_secrets._bounds() == bounds
    else:
        with pytest.raises(ValueError, match=r"env_start|no environment block"):
            process_secrets._bounds()
        assert process_secrets.erase_environment(["SECRET"], b"x") is False, "answered False, never raised"
