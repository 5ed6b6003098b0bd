"""What the command-line tests of this folder share: the demo world's stand-in, one a module,
and a state directory configured against it (its worker ``true``). A module with a state of its
own shape defines its own ``state``."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from shell.basecamp.standin.server import StandIn
from tests.support.configured import configure_connector


@pytest.fixture(scope="module")
def standin() -> Iterator[StandIn]:
    with StandIn(world="demo") as server:
        yield server


@pytest.fixture
def state(standin: StandIn, tmp_path: Path) -> Path:
    return configure_connector(standin, tmp_path, worker=("true",), base_url=standin.base_url)
