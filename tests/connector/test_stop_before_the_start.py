"""A stop noted before ``run`` reaches the connector's start (``shell.cli.run``,
``shell.cli.start_signals``): the next step never runs -- no lock taken, no ledger made, no hold
set, no question asked of Basecamp -- and it says so in one line, exit 0. In process, the stop
noted by the real handler as a signal would note it."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from shell.basecamp.standin.server import StandIn
from shell.cli import start_signals
from shell.cli.main import main as connect
from tests.support.configured import configure_connector


@pytest.fixture
def standing_handler() -> Iterator[None]:
    saved = {signum: signal.getsignal(signum) for signum in (*start_signals.STOP_SIGNALS, start_signals.HANGUP)}
    start_signals.take_early(["run"])  # as shell.cli.__main__ does first
    try:
        yield
    finally:
        for signum, handler in saved.items():
            signal.signal(signum, handler)
        start_signals.STOPS.clear()


def test_a_stop_before_the_start_touches_nothing_and_says_so(
    tmp_path: Path, standing_handler: None, capsys: pytest.CaptureFixture[str]
) -> None:
    with StandIn(world="demo") as standin:
        state = configure_connector(standin, tmp_path, worker=("true",), base_url=standin.base_url)
        capsys.readouterr()
        start_signals.STOPS.append(signal.SIGTERM)  # as the handler notes a SIGTERM during the imports
        assert connect(["run", "--state-dir", str(state), "--hold", "--reason", "never set"]) == 0
        asked = [request for request in standin.requests() if "profile" in request.path]
    assert capsys.readouterr().err == "stopped before the start (SIGTERM): nothing was started\n"
    assert not (state / "ledger.sqlite3").exists()
    assert asked == []
