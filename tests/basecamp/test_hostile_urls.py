"""A hostile Basecamp's URLs and answers, against the client (real HTTP: the stand-in behind a
proxy that rewrites what it answers, and a trap listening on 127.0.0.2):

- a listing's ``Link`` or ``projects.json``'s that parsers read differently is a failed read,
  and nothing reaches the trap (``core.links``);
- every request is a path on the configured origin's own pool (``shell.basecamp.wire``);
- the stream ticket's answer and Launchpad's are read within the bound (``shell.basecamp.client``,
  ``shell.basecamp.tokens``), and a deep one is a refusal, never a ``RecursionError``."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

import pytest

from core.destinations import Destination, MessageKind
from core.oauth import TOKEN_PATH, app, refresh_form
from shell.basecamp.client import BasecampClient
from shell.basecamp.errors import BasecampError, ListingFailed
from shell.basecamp.standin.faults import Fault, FaultAction
from shell.basecamp.standin.launchpad import CLIENT_ID
from shell.basecamp.standin.server import StandIn
from shell.basecamp.tokens import LaunchpadFailed, token_request
from shell.basecamp.wire import MAX_ANSWER_BYTES, Wire
from shell.clock import SystemClock
from tests.support.hostile_basecamp import Answered, HostileBasecamp, Trap

LONG_AGO = datetime(2020, 1, 1, tzinfo=UTC)
DEEP = b"[" * 100_000 + b"]" * 100_000


def client_of(base_url: str, standin: StandIn) -> BasecampClient:
    return BasecampClient(base_url, standin.world.account_id, standin.world.token, "tests (t@example.com)",
                          requests_per_window=10_000)  # fmt: skip


def with_link(path_part: str, link: str) -> Callable[[Answered], Answered]:
    def rewrite(answer: Answered) -> Answered:
        if path_part not in answer.path or answer.status != 200:
            return answer
        return Answered(answer.path, answer.status, {**answer.headers, "Link": f'<{link}>; rel="next"'}, answer.body)

    return rewrite


@pytest.mark.parametrize("shape", ["http://{trap}\\@{origin}{path}?page=2", "http://{trap}@{origin}{path}?page=2"])
def test_a_listing_link_parsers_read_differently_fails_the_listing_and_reaches_no_other_host(shape: str) -> None:
    with StandIn(world="demo") as standin, Trap("127.0.0.2") as trap, HostileBasecamp(standin.base_url) as hostile:
        project = standin.world.projects[0]
        client = client_of(hostile.base_url, standin)
        origin = hostile.base_url.removeprefix("http://")
        projects = f"/{standin.world.account_id}/projects.json"
        hostile.rewrite = with_link("projects.json", shape.format(trap=f"{trap.host}:{trap.port}", origin=origin,
                                                                  path=projects))  # fmt: skip
        with pytest.raises(ListingFailed, match="another origin"):
            client.projects(client.deadline_in(10))
        comments = f"/{standin.world.account_id}/recordings/{project.recording_ids[0]}/comments.json"
        hostile.rewrite = with_link("comments.json", shape.format(trap=f"{trap.host}:{trap.port}",
                                                                  origin=origin, path=comments))  # fmt: skip
        with pytest.raises(ListingFailed):
            client.list(Destination(MessageKind.comment, project.id, project.recording_ids[0]), LONG_AGO,
                        standin.world.agent.id, client.deadline_in(10))  # fmt: skip
        with pytest.raises(ListingFailed, match="not followed"):  # read() itself refuses it, whoever asks
            client.read(shape.format(trap=f"{trap.host}:{trap.port}", origin=origin, path=projects),
                        client.deadline_in(10))  # fmt: skip
    assert trap.connections == 0


def test_every_request_is_a_path_on_the_configured_origins_own_pool(standin: StandIn) -> None:
    wire = Wire(standin.base_url, "tests (t@example.com)", SystemClock())
    answer = wire.get_once(f"/{standin.world.account_id}/my/profile.json", 10, standin.world.token)
    assert answer.status == 200
    assert answer.body["id"] == standin.world.agent.id
    with pytest.raises(ListingFailed, match="not a path on the configured origin"):
        wire.get_once("//127.0.0.2/x", 10, standin.world.token)


def test_a_stream_ticket_answer_past_the_bound_or_deep_is_no_ticket(standin: StandIn) -> None:
    client = client_of(standin.base_url, standin)
    standin.add_fault(Fault(FaultAction.oversize, path_contains="stream_ticket", size_mib=MAX_ANSWER_BYTES / 2**20 + 1))
    with pytest.raises(BasecampError, match=f"larger than {MAX_ANSWER_BYTES} bytes"):
        client.stream_ticket(client.deadline_in(10))
    with HostileBasecamp(standin.base_url, lambda a: Answered(a.path, a.status, a.headers, DEEP)) as hostile:
        deep = client_of(hostile.base_url, standin)
        with pytest.raises(BasecampError, match="no stream ticket"):
            deep.stream_ticket(deep.deadline_in(10))
    assert client.stream_ticket(client.deadline_in(10)).expires_in > 0


def test_launchpads_answer_past_the_bound_or_deep_is_a_failed_refresh(standin: StandIn) -> None:
    now = datetime.now(UTC)
    registered = app(f"{standin.base_url}{TOKEN_PATH}", CLIENT_ID, standin.control_secret, now)
    standin.add_fault(Fault(FaultAction.oversize, path_contains="/authorization/token", size_mib=MAX_ANSWER_BYTES / 2**20 + 1))
    with pytest.raises(LaunchpadFailed, match=f"larger than {MAX_ANSWER_BYTES} bytes"):
        token_request(refresh_form(registered), registered, now)
    with HostileBasecamp(standin.base_url, lambda a: Answered(a.path, 200, a.headers, DEEP)) as hostile:
        deep = app(f"{hostile.base_url}{TOKEN_PATH}", CLIENT_ID, standin.control_secret, now)
        with pytest.raises(LaunchpadFailed):
            token_request(refresh_form(deep), deep, now)

