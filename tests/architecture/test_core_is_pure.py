"""Core's purity is a lint rule, and the rule cannot silently vanish.

``pyproject.toml`` bans I/O, clocks, randomness, threads and the shell in ``core/`` (ruff's
TID251, banned-api) and nowhere else. These tests run the real ruff, with the project's own
``pyproject.toml``, over a copy laid out like the project: a banned import under ``core/`` fails
the lint, the same import under ``shell/`` or ``tests/`` passes, and core as it stands is clean.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

TOP = Path(__file__).resolve().parents[2]

BANNED = (
    "import os",
    "import sqlite3",
    "import subprocess",
    "import socket",
    "import time",
    "import random",
    "import threading",
    "import urllib3",
    "from pathlib import Path",
    "from shell.ledger.connection import Ledger",
    "import shell.processes",
    "from datetime import datetime\nNOW = datetime.now()",
)

ALLOWED = (
    "from pathlib import PurePosixPath",
    "from datetime import UTC, datetime, timedelta",
    "from urllib.parse import urlsplit",
    "import re",
)


def ruff(where: Path, *paths: str) -> subprocess.CompletedProcess[str]:
    """The project's whole lint, as ``bin/test`` runs it: the rule must be selected there too."""
    return subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--no-cache", "--output-format", "concise", *paths],
        cwd=where,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def laid_out(tmp_path: Path, folder: str, source: str) -> Path:
    shutil.copy(TOP / "pyproject.toml", tmp_path / "pyproject.toml")
    module = tmp_path / folder / "probe.py"
    module.parent.mkdir(parents=True, exist_ok=True)
    module.write_text(f'"""A probe."""\n\n{source}\n')
    return module


@pytest.mark.parametrize("source", BANNED)
def test_a_banned_import_in_core_fails_the_lint(tmp_path: Path, source: str) -> None:
    laid_out(tmp_path, "core", source)
    result = ruff(tmp_path, "core")
    assert result.returncode == 1, result.stdout + result.stderr
    assert "TID251" in result.stdout, result.stdout
    assert "core is pure" in result.stdout or "core never imports the shell" in result.stdout


@pytest.mark.parametrize("folder", ["shell", "tests"])
def test_the_same_imports_outside_core_pass(tmp_path: Path, folder: str) -> None:
    laid_out(tmp_path, folder, "\n".join(BANNED))
    result = ruff(tmp_path, folder)
    assert "TID251" not in result.stdout, result.stdout
    assert result.stderr == ""


def test_what_core_may_import_passes(tmp_path: Path) -> None:
    laid_out(tmp_path, "core", "\n".join(ALLOWED))
    result = ruff(tmp_path, "core")
    assert "TID251" not in result.stdout, result.stdout
    assert result.stderr == ""


def test_core_as_it_stands_is_pure() -> None:
    result = ruff(TOP, "core")
    assert result.returncode == 0, result.stdout + result.stderr
