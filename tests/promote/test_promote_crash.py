"""`bin/connect shadow promote` as a real child process, SIGKILLed at each of its step boundaries:
the state directory holds either the untouched shadow or a held ledger, and promote run again
ends held with every shadow record accounted for (and the old ledger kept aside)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from core.promotion import Step
from shell.crashpoints import PAUSE_VARIABLE
from shell.ledger import promotion
from shell.state.config import SHADOW_DIRECTORY, StatePaths
from tests.promote.world import assert_promoted, records, shadow_state

REPOSITORY = Path(__file__).resolve().parents[2]
CRASH_POINTS = [f"promote_{step}" for step in Step] + ["promote_sealed"]


def promote_process(state: Path, pause_at: str | None) -> subprocess.Popen[str]:
    environment = {key: value for key, value in os.environ.items() if key != PAUSE_VARIABLE}
    if pause_at:
        environment[PAUSE_VARIABLE] = pause_at
    return subprocess.Popen(
        [sys.executable, "-m", "shell.cli.main", "shadow", "promote", "--state-dir", str(state), "--json"],
        cwd=REPOSITORY, env=environment, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True,
    )  # fmt: skip


def untouched_or_held(state: Path) -> str:
    """What a crash left: 'shadow' (its ledger there, whole, held or not) or 'held' (the
    connector's ledger held by promote); anything else fails."""
    shadow = StatePaths.at(state / SHADOW_DIRECTORY).ledger
    ledger = StatePaths.at(state).ledger
    if shadow.exists():
        assert set(records(shadow)) == {31, 32, 33, 34, 35}
        return "shadow"
    assert (promotion.hold_cause(ledger) or "").startswith("shadow promote ")
    return "held"


@pytest.mark.slow
@pytest.mark.parametrize("crash_point", CRASH_POINTS)
def test_promote_killed_at_each_step_then_run_again_ends_held(crash_point: str, tmp_path: Path) -> None:
    state = shadow_state(tmp_path)
    child = promote_process(state, crash_point)
    assert child.stderr is not None
    assert f"paused at {crash_point}" in child.stderr.readline()
    child.send_signal(signal.SIGKILL)
    child.wait(timeout=10)
    child.stdout.close()  # type: ignore[union-attr]
    child.stderr.close()
    assert child.returncode == -signal.SIGKILL
    untouched_or_held(state)
    again = promote_process(state, None)
    out, err = again.communicate(timeout=60)
    assert (again.returncode, err) == (0, ""), err
    done = json.loads(out)
    assert done["promoted"] is (crash_point != "promote_finish")
    assert_promoted(state)
