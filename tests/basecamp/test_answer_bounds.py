"""What the client reads is bounded: an answer past ``MAX_ANSWER_BYTES`` is not read (a feed of
400 MB once took the process to 850 MB), and a ``Link`` that leads back to a page already read
fails the listing at once instead of being walked until the deadline.

Real HTTP against the stand-in's ``oversize`` and ``loop_link`` faults.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime

import pytest

from core.destinations import Destination, MessageKind
from core.posting import Uncertain
from shell.basecamp.errors import ListingFailed
from shell.basecamp.standin.faults import Fault, FaultAction
from shell.basecamp.standin.server import StandIn
from shell.basecamp.wire import MAX_ANSWER_BYTES
from tests.basecamp.conftest import MakeClient

LONG_AGO = datetime(2020, 1, 1, tzinfo=UTC)
OVER_THE_CAP_MIB = MAX_ANSWER_BYTES / (1024 * 1024) + 1


def comments(standin: StandIn) -> Destination:
    project = standin.world.projects[0]
    return Destination(MessageKind.comment, project.id, project.recording_ids[0])


def test_a_listing_answer_past_the_cap_is_a_failed_read(standin: StandIn, make_client: MakeClient) -> None:
    standin.add_fault(Fault(FaultAction.oversize, method="GET", size_mib=OVER_THE_CAP_MIB))
    client = make_client()
    with pytest.raises(ListingFailed, match=f"larger than {MAX_ANSWER_BYTES} bytes"):
        client.list(comments(standin), LONG_AGO, standin.world.agent.id, client.deadline_in(10))
    assert client.list(comments(standin), LONG_AGO, standin.world.agent.id, client.deadline_in(10)) == []


def test_an_answer_within_the_cap_is_read_whole(standin: StandIn, make_client: MakeClient) -> None:
    standin.add_fault(Fault(FaultAction.oversize, method="GET", size_mib=1))
    client = make_client()
    assert client.list(comments(standin), LONG_AGO, standin.world.agent.id, client.deadline_in(10)) == []


def test_a_create_answered_past_the_cap_is_uncertain(standin: StandIn, make_client: MakeClient) -> None:
    standin.add_fault(Fault(FaultAction.oversize, method="POST", size_mib=OVER_THE_CAP_MIB))
    client = make_client()
    outcome = client.post(comments(standin), "hello", client.deadline_in(10))
    assert isinstance(outcome, Uncertain), outcome
    assert f"larger than {MAX_ANSWER_BYTES} bytes" in outcome.detail


def test_a_link_that_loops_fails_the_listing_at_once(standin: StandIn, make_client: MakeClient) -> None:
    standin.add_fault(Fault(FaultAction.loop_link, method="GET", times=None))
    client = make_client()
    started = time.monotonic()
    with pytest.raises(ListingFailed, match="leads back to a page read"):
        client.list(comments(standin), LONG_AGO, standin.world.agent.id, client.deadline_in(30))
    assert time.monotonic() - started < 5, "not walked until the deadline"
    assert len(standin.requests()) <= 2
