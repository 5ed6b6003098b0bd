"""What the stand-in records of each request, and what a test can place or read directly."""

from __future__ import annotations

import contextlib
from datetime import UTC, datetime
from typing import TYPE_CHECKING

import pytest

from shell.basecamp.standin.faults import REDACTED, Fault, FaultAction
from shell.basecamp.standin.server import StandIn
from shell.clock import FakeClock

if TYPE_CHECKING:
    from conftest import Client


def test_every_request_is_recorded_with_its_answer_and_the_token_redacted(connect: type[Client]) -> None:
    clock = FakeClock(datetime(2026, 11, 29, 12, 0, tzinfo=UTC))
    with StandIn(world="empty", clock=clock.now) as standin:
        client = connect(standin)
        card = standin.world.projects[0].recording_ids[0]
        client.post(f"recordings/{card}/comments.json", {"content": "hello"})
        client.get(f"recordings/{card}/comments.json?page=1&direction=asc")
        connect(standin, "wrong").get("my/profile.json")
        [post, listing, unauthorized] = standin.requests()

    assert (post.method, post.path, post.status, post.fault) == (
        "POST",
        f"/{standin.world.account_id}/recordings/{card}/comments.json",
        201,
        None,
    )
    assert post.body == b'{"content": "hello"}'
    assert post.headers["authorization"] == REDACTED
    assert post.headers["content-type"] == "application/json; charset=utf-8"
    assert post.at == clock.now()
    assert (listing.query, listing.status) == ({"page": "1", "direction": "asc"}, 200)
    assert unauthorized.status == 401
    assert standin.world.token not in repr(standin.requests())


def test_post_count_counts_every_post_that_reached_the_server_whatever_its_fate(
    standin: StandIn, client: Client
) -> None:
    project = standin.world.projects[0]
    comments = f"recordings/{project.recording_ids[0]}/comments.json"
    lines = f"chats/{project.campfire_id}/lines.json"
    standin.add_fault(Fault(FaultAction.drop_without_create, path_contains="/comments.json"))
    standin.add_fault(Fault(FaultAction.server_error, path_contains="/lines.json"))
    for path in (comments, comments, lines, lines):
        with contextlib.suppress(ConnectionError):
            client.post(path, {"content": "x"})
    client.post(comments, {"content": ""})
    client.get(comments)
    assert standin.post_count() == 5
    assert standin.post_count("/comments.json") == 3
    assert standin.post_count(f"/chats/{project.campfire_id}/") == 2
    assert [request.status for request in standin.requests()] == [None, 201, 500, 201, 422, 200]


def test_seed_message_places_someone_elses_old_message(standin: StandIn, client: Client) -> None:
    other = standin.world.people[0]
    project = standin.world.projects[0]
    old = datetime(2025, 12, 30, 19, 39, tzinfo=UTC)
    line_id = standin.seed_message("chat_line", project.campfire_id, other.id, "Morning", old)
    boost_id = standin.seed_message("boost", line_id, standin.world.agent.id, "👋")

    [line] = client.get(f"chats/{project.campfire_id}/lines.json").json()
    assert (line["id"], line["creator"]["id"], line["created_at"]) == (
        line_id,
        other.id,
        "2025-12-30T19:39:00.000Z",
    )
    assert line["boosts_count"] == 1
    [boost] = standin.messages("boost", line_id)
    assert (boost["id"], boost["recording"]["id"]) == (boost_id, line_id)
    assert standin.messages("chat_line", project.campfire_id)[0] == line


def test_seed_message_refuses_what_could_not_exist(standin: StandIn) -> None:
    project = standin.world.projects[0]
    agent = standin.world.agent.id
    with pytest.raises(ValueError, match="takes a comment"):
        standin.seed_message("comment", project.campfire_id, agent, "x")
    with pytest.raises(ValueError, match="no person"):
        standin.seed_message("comment", project.recording_ids[0], 12345, "x")
    with pytest.raises(ValueError, match="naive"):
        standin.seed_message("comment", project.recording_ids[0], agent, "x", datetime(2026, 1, 1))
    with pytest.raises(ValueError, match="message"):
        standin.seed_message("message", project.recording_ids[0], agent, "x")
