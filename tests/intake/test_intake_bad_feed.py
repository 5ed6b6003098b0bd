"""A feed that misbehaves ends a poll with its reason, never a silent or endless one: a ``next``
that leads back to a page already read this poll is ``IntakeFailed`` at once (not walked until
the deadline and reported as a rate-limit wait), and a failure says why, in words that carry no
position (the position-free log test in ``test_intake.py`` covers these words too).
"""

from __future__ import annotations

import logging
import time

import pytest

from shell.basecamp.client import BasecampClient
from shell.basecamp.standin.faults import Fault, FaultAction
from shell.basecamp.standin.server import StandIn
from shell.intake.poll_lane import IntakeFailed
from tests.intake.conftest import MakeIntake


def test_a_next_that_loops_ends_the_poll_at_once(
    standin: StandIn, client: BasecampClient, make_intake: MakeIntake
) -> None:
    standin.add_fault(Fault(FaultAction.loop_link, method="GET", path_contains="events", times=None))
    intake = make_intake(start=0, max_pages=1000)
    started = time.monotonic()
    with pytest.raises(IntakeFailed, match="leads back to a page already read"):
        intake.poll_once(client.deadline_in(30))
    assert time.monotonic() - started < 5
    assert len([r for r in standin.requests() if "events" in r.path]) <= 3


def test_a_feed_failure_says_why(
    standin: StandIn, client: BasecampClient, make_intake: MakeIntake, caplog: pytest.LogCaptureFixture
) -> None:
    standin.add_fault(Fault(FaultAction.server_error, method="GET", path_contains="events", status=500))
    with caplog.at_level(logging.INFO, logger="connector.intake"), pytest.raises(IntakeFailed) as failed:
        make_intake(start=0).poll_once(client.deadline_in(10))
    assert "the event feed answered HTTP 500" in str(failed.value)
    assert any("HTTP 500" in record.getMessage() for record in caplog.records)
