"""The seam's error line carries every text escaped (``shell.cli.seam``): a path or a name
holding a carriage return, a newline or an escape sequence is shown as its escape, so each of an
error's own lines stays one line that a terminal shows and never obeys."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

REPOSITORY = Path(__file__).resolve().parents[2]


def _errors(*argv: str, cwd: Path) -> tuple[int, list[str]]:
    done = subprocess.run(
        [str(REPOSITORY / "bin" / argv[0]), *argv[1:]], capture_output=True, text=True, cwd=cwd,
        stdin=subprocess.DEVNULL, timeout=60, check=False,
    )  # fmt: skip
    return done.returncode, [line for line in done.stderr.splitlines() if line.strip()]


@pytest.mark.parametrize("odd", ["a\rb", "a\nb", "a\x1b[2Jb"], ids=["CR", "LF", "ESC"])
def test_a_path_with_a_control_character_is_shown_escaped_on_one_line(tmp_path: Path, odd: str) -> None:
    code, lines = _errors("outbox-resolve", "--ledger", odd, "list", cwd=tmp_path)
    assert code == 3
    assert len(lines) == 1, lines
    assert lines[0].startswith("error: ")
    assert odd.encode("unicode_escape").decode("ascii") in lines[0]
    assert not any(character in lines[0] for character in "\r\x1b")
