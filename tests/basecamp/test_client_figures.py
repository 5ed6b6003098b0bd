"""What the running connector's metrics take from its client: Basecamp's answers by status, a
create's and a read's alike, 429s included, and the requests its budget holds in the window; over
real HTTP against the stand-in."""

from __future__ import annotations

from core.destinations import Destination, MessageKind
from core.posting import Created
from shell.basecamp.standin.faults import Fault, FaultAction
from shell.basecamp.standin.server import StandIn
from tests.basecamp.conftest import MakeClient


def test_every_answer_is_counted_by_status_a_creates_and_a_reads_429s_included(
    standin: StandIn, make_client: MakeClient
) -> None:
    client = make_client(requests_per_window=40)
    assert client.figures().answers == {}
    project = standin.world.projects[0]
    assert isinstance(client.post(Destination(MessageKind.comment, project.id, project.recording_ids[0]),
                                  "<div>hello</div>"), Created)  # fmt: skip
    standin.add_fault(Fault(action=FaultAction.refuse, method="GET", status=429, retry_after="1"))
    client.me()  # a 429, then its retry once the Retry-After has passed
    figures = client.figures()
    assert figures.answers == {201: 1, 429: 1, 200: 1}
    assert (figures.sent_in_window, figures.limit, figures.window_seconds) == (3, 40, 10.0)
