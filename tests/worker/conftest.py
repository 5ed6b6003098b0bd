"""Fixtures for the worker driver's tests."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.worker.support import Attempt


@pytest.fixture
def attempt(tmp_path: Path) -> Iterator[Attempt]:
    work_dir = tmp_path / "project"
    work_dir.mkdir()
    state = tmp_path / "state"
    state.mkdir(mode=0o700)
    made = Attempt(tmp_path, work_dir, tmp_path / "private", state / "ledger.sqlite3")
    yield made
    made.clean_up()
