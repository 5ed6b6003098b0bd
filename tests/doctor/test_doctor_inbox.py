"""``bin/connect doctor``'s inbox check on a real state directory against the stand-in: Basecamp
serves the agent's inbox to this token (ok), serves none to its principal (a warning: the
connector runs as before), or the inbox fails (a warning); and the check's read moves nothing."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from core.doctor import CheckStatus, inbox_check
from core.intake_status import InboxVerdict
from shell.basecamp.standin.faults import Fault, FaultAction
from shell.basecamp.standin.server import StandIn
from shell.cli.main import main as connect
from tests.support.configured import configure_connector


@pytest.fixture
def standin() -> Iterator[StandIn]:
    with StandIn(world="demo") as running:
        yield running


def inbox(standin: StandIn, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, Any]]:
    tmp_path.chmod(0o700)
    state = configure_connector(standin, tmp_path)
    capsys.readouterr()
    code = connect(["doctor", "--state-dir", str(state), "--json"])
    (found,) = [check for check in json.loads(capsys.readouterr().out)["checks"] if check["name"] == "inbox"]
    return code, found


def test_an_agent_tokens_inbox_is_available(
    standin: StandIn, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, found = inbox(standin, tmp_path, capsys)
    assert (code, found["status"]) == (0, "ok")
    assert found["detail"].startswith("available to this token")
    (asked,) = [request for request in standin.requests() if "inbox.json" in request.path]
    assert asked.method == "GET"


def test_a_principal_without_an_inbox_is_a_warning_not_a_failure(
    standin: StandIn, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    standin.inbox.agents.clear()
    code, found = inbox(standin, tmp_path, capsys)
    assert (code, found["status"]) == (0, "warning")
    assert "403: agents only" in found["detail"]
    assert "agent principal's token" in found["advice"]


def test_an_inbox_that_fails_is_a_warning_that_says_why(
    standin: StandIn, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    standin.add_fault(Fault(FaultAction.server_error, path_contains="inbox.json", status=500, times=None))
    code, found = inbox(standin, tmp_path, capsys)
    assert (code, found["status"]) == (0, "warning")
    assert found["detail"].startswith("the inbox could not be read: ")


def test_not_asked_is_a_warning() -> None:
    assert inbox_check(None).status is CheckStatus.warning
    assert inbox_check(InboxVerdict.available).status is CheckStatus.ok
