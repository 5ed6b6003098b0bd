"""A refusal Basecamp will repeat is exit 3 with what to fix, never exit 6 ("restart, it passes"):
a token file so large Basecamp answers 431, and a 403 or 404 on the identity
request, against `bin/connect run` as a real process and `bin/connect doctor`; a refusal a later
try can pass (429) stays exit 6 (``core.pacing``'s plain values are in tests/basecamp/test_pacing.py)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from shell.basecamp.standin.faults import Fault, FaultAction
from shell.basecamp.standin.server import StandIn
from shell.cli.main import main as connect
from shell.errors import EXIT_CONFIG, EXIT_UNAVAILABLE
from tests.connector.test_run_bad_input import configure, rewrite, run

pytestmark = pytest.mark.slow
# Within the token file's 64 KiB bound (with its newline), but "Authorization: Bearer " makes the
# header line longer than the stand-in's 64 KiB line limit: 431.
HUGE_TOKEN = "x" * (64 * 1024 - 10)


@pytest.fixture
def standin() -> Iterator[StandIn]:
    with StandIn(world="demo") as server:
        yield server


def test_a_token_so_large_basecamp_answers_431_is_exit_3_saying_what_to_fix(
    standin: StandIn, tmp_path: Path
) -> None:
    state = configure(standin, tmp_path)
    rewrite(tmp_path / "token", HUGE_TOKEN + "\n")
    ran = run(state)
    assert ran.code == EXIT_CONFIG
    assert ran.line == (
        f"error: the request is too large for Basecamp (HTTP 431): the token file {tmp_path / 'token'} holds "
        "far more than a token; put the agent's token alone in it, or run bin/connect login again: not started"
    )
    assert ran.out == ""


@pytest.mark.parametrize("status", [403, 404])
def test_an_identity_request_refused_for_good_is_exit_3(
    standin: StandIn, tmp_path: Path, status: int
) -> None:
    state = configure(standin, tmp_path)
    standin.add_fault(Fault(FaultAction.refuse, path_contains="/my/profile.json", status=status, times=None))
    ran = run(state)
    assert ran.code == EXIT_CONFIG
    assert f"(HTTP {status})" in ran.line
    assert "bin/connect setup --account" in ran.line


def test_a_refusal_a_later_try_can_pass_is_still_exit_6(standin: StandIn, tmp_path: Path) -> None:
    state = configure(standin, tmp_path)
    standin.add_fault(Fault(FaultAction.refuse, path_contains="/my/profile.json", status=409, times=None))
    assert run(state).code == EXIT_UNAVAILABLE


def test_doctor_fails_a_token_basecamp_answers_431(
    standin: StandIn, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = configure(standin, tmp_path)
    rewrite(tmp_path / "token", HUGE_TOKEN + "\n")
    capsys.readouterr()
    assert connect(["doctor", "--state-dir", str(state), "--json"]) == 1
    checks = {check["name"]: check for check in json.loads(capsys.readouterr().out)["checks"]}
    assert checks["token"]["status"] == "failing"
    assert "(HTTP 431)" in checks["token"]["detail"]
    assert checks["token"]["advice"].startswith("the request is too large for Basecamp (HTTP 431)")
