"""`bin/connect demo --help` names the timings the demo really uses: it said the
guard delay was 4 s while the demo ran with 8 s."""

from __future__ import annotations

import pytest

from core.timestamps import format_duration
from shell.cli.main import main as connect
from shell.demo.script import GUARD_DELAY, RECONCILE_AFTER


def test_help_names_the_demos_own_guard_delay_and_reconcile_time(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        connect(["demo", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert f"guard delay {format_duration(GUARD_DELAY)}, reconcile after {format_duration(RECONCILE_AFTER)}" in text
