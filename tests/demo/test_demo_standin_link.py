"""shell.demo.play's stand-in link: the demo's Basecamp reads keep to the limit the demo shares with the
connector and its workers: paced, and a 429 waited out, never the end of the demo.

The cause of the demo tests' 429 (`test_a_doubled_and_a_missing_message_fail_the_verdict_and_the_exit`
on a fresh clone): the verdict's reads (and a scene's card title) went straight to the stand-in,
unpaced and never asked again, in the same 10 s window as a restarted connector's catch-up; one
429 among them was `StandInUnreachable`, exit 6.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator

import pytest

from core.destinations import MessageKind
from shell.basecamp.standin.faults import Fault, FaultAction, RateLimit
from shell.basecamp.standin.server import StandIn
from shell.demo.play import StandInLink
from shell.demo.script import Place

pytestmark = pytest.mark.slow


@pytest.fixture
def standin() -> Iterator[StandIn]:
    with StandIn(world="demo") as server:
        yield server


def link_to(standin: StandIn) -> StandInLink:
    return StandInLink(standin.base_url, standin.world.account_id, standin.world.token, standin.control_secret)


def test_a_read_still_rate_limited_after_the_clients_retries_waits_each_retry_after_and_is_answered(
    standin: StandIn,
) -> None:
    card = standin.world.projects[0].recording_ids[0]
    standin.seed_message("comment", card, standin.world.people[0].id, "a word before the verdict")
    standin.add_fault(Fault(FaultAction.rate_limit, method="GET", path_contains=f"/recordings/{card}/comments",
                            retry_after="1", times=4))  # fmt: skip
    said = link_to(standin).messages(Place(MessageKind.comment, card))
    assert [message.content for message in said] == ["a word before the verdict"]
    reads = [request for request in standin.requests() if f"/recordings/{card}/comments" in request.path]
    assert [request.status for request in reads] == [429, 429, 429, 429, 200]
    for refused, next_read in itertools.pairwise(reads):
        assert (next_read.at - refused.at).total_seconds() >= 1.0, "each Retry-After was waited out"


def test_the_verdicts_reads_are_all_answered_under_a_limit_below_their_number(standin: StandIn) -> None:
    standin.limiter.set_limit(RateLimit(requests=3, window=2.0))
    link = link_to(standin)
    places = [
        Place(MessageKind.comment, card)
        for project in standin.world.projects
        for card in project.recording_ids
    ]
    places += [Place(MessageKind.chat_line, project.campfire_id) for project in standin.world.projects]
    for place in places:
        assert link.messages(place) == []
    titles = [link.card_title(card) for card in standin.world.projects[0].recording_ids]
    assert all(titles)
    statuses = [request.status for request in standin.requests()]
    assert 429 in statuses, "the stand-in's limit was met, and waited out"
    assert statuses.count(200) == len(places) + len(titles)
