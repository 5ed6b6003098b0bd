"""The real Claude Code for the tests that drive it: the pinned build ``bin/test`` installs into
``.claude-code/`` (``bin/_claude_code``), found by ``CLAUDE_CODE_BIN`` or in that directory.

Rules:
1. A test that needs it and finds none fails, saying why and how to install it: it never skips,
   so a machine without npm cannot pass the suite by running less of it.
2. ``worker_environment`` is what such a test gives the connector: this machine's ``PATH`` with
   the pinned Claude Code first (the default worker command runs ``claude``), and a ``HOME`` of
   the test's own, so Claude Code keeps its files there and reads no settings of this machine's.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPOSITORY = Path(__file__).resolve().parents[2]
INSTALLED = REPOSITORY / ".claude-code"
INSTALLER = REPOSITORY / "bin" / "_claude_code"


def pinned_version() -> str:
    """The version ``bin/_claude_code`` pins (its one home)."""
    for line in INSTALLER.read_text().splitlines():
        if line.startswith("CLAUDE_CODE_VERSION="):
            return line.split("=", 1)[1].strip()
    raise AssertionError("bin/_claude_code pins no CLAUDE_CODE_VERSION")


def claude_code() -> Path:
    """The pinned Claude Code's program, or the test fails (rule 1)."""
    given = os.environ.get("CLAUDE_CODE_BIN")
    program = Path(given) if given else INSTALLED / "node_modules" / ".bin" / "claude"
    stamp = INSTALLED / ".installed"
    pinned = given or (stamp.is_file() and stamp.read_text().strip() == pinned_version())
    if not (pinned and program.is_file() and os.access(program, os.X_OK)):
        pytest.fail(
            f"the real Claude Code {pinned_version()} is not installed at {program}: bin/test installs it "
            "from the npm registry (npm must be on PATH), or run `top=$PWD; . bin/_claude_code`",
            pytrace=False,
        )
    return program


def worker_environment(home: Path, **more: str) -> dict[str, str]:
    """The connector's environment for a test whose worker is the real Claude Code (rule 2)."""
    home.mkdir(parents=True, exist_ok=True)
    environment = {key: value for key, value in os.environ.items() if key != "CONNECTOR_PAUSE_AT"}
    environment["PATH"] = f"{claude_code().parent}{os.pathsep}{environment.get('PATH', '')}"
    environment["HOME"] = str(home)
    environment.update(more)
    return environment
