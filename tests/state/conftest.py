"""Fixtures for the configuration's tests: a running demo stand-in, a private state home, token files."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from shell.basecamp.standin.server import StandIn


@pytest.fixture(scope="module")
def standin() -> Iterator[StandIn]:
    with StandIn(world="demo") as running:
        yield running


@pytest.fixture
def state_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "state"
    monkeypatch.setenv("XDG_STATE_HOME", str(home))
    return home


def write_token(path: Path, token: str, mode: int = 0o600) -> Path:
    path.write_text(token + "\n")
    os.chmod(path, mode)
    return path


@pytest.fixture
def token_file(tmp_path: Path, standin: StandIn) -> Path:
    return write_token(tmp_path / "agent.token", standin.world.token)


@pytest.fixture
def work_dir(tmp_path: Path) -> Path:
    """A route's directory beside the state and the token file, holding neither."""
    directory = tmp_path / "work"
    directory.mkdir()
    return directory
