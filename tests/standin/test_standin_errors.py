"""Each error Basecamp answers, answered the same way (API.md section 6)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from shell.basecamp.standin.server import StandIn

if TYPE_CHECKING:
    from conftest import Client


def comments_of(standin: StandIn) -> str:
    return f"recordings/{standin.world.projects[0].recording_ids[0]}/comments.json"


@pytest.mark.parametrize(
    "authorization", [None, "Bearer wrong-token", "Bearer ", "Basic dXNlcjpwYXNz", "token-alone"]
)
def test_a_missing_or_wrong_bearer_token_is_unauthorized(
    standin: StandIn, client: Client, authorization: str | None
) -> None:
    for answer in (
        client.get("my/profile.json", headers={"Authorization": authorization}),
        client.post(comments_of(standin), {"content": "x"}, headers={"Authorization": authorization}),
    ):
        assert answer.status == 401
        assert answer.json() == {"error": "Unauthorized"}
    assert standin.messages("comment", standin.world.projects[0].recording_ids[0]) == []


def test_a_missing_user_agent_is_a_bad_request_in_plain_text(standin: StandIn, client: Client) -> None:
    for answer in (
        client.get("my/profile.json", headers={"User-Agent": None}),
        client.post(comments_of(standin), {"content": "x"}, headers={"User-Agent": None}),
    ):
        assert answer.status == 400
        assert answer.headers["content-type"].startswith("text/plain")
        assert not answer.body.lstrip().startswith((b"{", b"["))
    assert standin.messages("comment", standin.world.projects[0].recording_ids[0]) == []


@pytest.mark.parametrize("content_type", [None, "text/plain", "application/x-www-form-urlencoded"])
def test_a_post_without_a_json_content_type_is_unsupported(
    standin: StandIn, client: Client, content_type: str | None
) -> None:
    answer = client.post(comments_of(standin), {"content": "x"}, headers={"Content-Type": content_type})
    assert answer.status == 415
    assert "error" in answer.json()


def test_a_json_content_type_with_parameters_is_accepted(standin: StandIn, client: Client) -> None:
    answer = client.post(comments_of(standin), {"content": "x"}, headers={"Content-Type": "Application/JSON"})
    assert answer.status == 201


@pytest.mark.parametrize(
    "value", [{}, {"content": ""}, {"content": "   \n"}, {"content": None}, {"content": 7}, []]
)
def test_missing_or_blank_content_is_unprocessable(standin: StandIn, client: Client, value: object) -> None:
    project = standin.world.projects[0]
    for path in (
        comments_of(standin),
        f"recordings/{project.recording_ids[0]}/boosts.json",
        f"chats/{project.campfire_id}/lines.json",
    ):
        answer = client.post(path, value)
        assert answer.status == 422, path
        assert isinstance(answer.json()["error"], str)
    assert client.get(comments_of(standin)).json() == []


def test_a_boost_over_sixteen_code_points_is_unprocessable(standin: StandIn, client: Client) -> None:
    boosts = f"recordings/{standin.world.projects[0].recording_ids[0]}/boosts.json"
    assert client.post(boosts, {"content": "🚀" * 16}).status == 201
    too_long = client.post(boosts, {"content": "x" * 17})
    assert too_long.status == 422
    assert "too long" in too_long.json()["error"]
    assert len(client.get(boosts).json()) == 1


def test_the_boost_length_rule_can_be_switched_off(connect: type[Client]) -> None:
    with StandIn(world="empty", enforce_boost_length=False) as standin:
        boosts = f"recordings/{standin.world.projects[0].recording_ids[0]}/boosts.json"
        assert connect(standin).post(boosts, {"content": "x" * 40}).status == 201


@pytest.mark.parametrize("body", [b"{", b"not json", b"\xff\xfe", b""])
def test_malformed_json_is_a_bad_request(standin: StandIn, client: Client, body: bytes) -> None:
    answer = client.post(comments_of(standin), body=body)
    assert answer.status == 400
    assert answer.json()["error"] == "Bad Request"


@pytest.mark.parametrize(
    "path",
    [
        "recordings/1/comments.json",
        "comments/1.json",
        "recordings/1/boosts.json",
        "boosts/1.json",
        "chats/1.json",
        "chats/1/lines.json",
        "chats/1/lines/1.json",
        "no/such/route.json",
    ],
)
def test_an_unknown_recording_or_chat_is_not_found(client: Client, path: str) -> None:
    answer = client.get(path)
    assert answer.status == 404
    assert answer.json() == {"error": "Not Found"}


def test_posting_to_an_unknown_or_wrong_place_is_not_found(standin: StandIn, client: Client) -> None:
    project = standin.world.projects[0]
    card, campfire = project.recording_ids[0], project.campfire_id
    comment = client.post(f"recordings/{card}/comments.json", {"content": "x"}).json()
    for path in (
        "recordings/1/comments.json",
        "chats/1/lines.json",
        "recordings/1/boosts.json",
        f"recordings/{campfire}/comments.json",  # a Campfire takes lines, not comments
        f"recordings/{comment['id']}/comments.json",  # a comment is not commentable
        f"chats/{card}/lines.json",  # a card is not a Campfire
        f"buckets/{project.id + 1}/recordings/{card}/comments.json",  # not that project's
        f"/{standin.world.account_id + 1}/recordings/{card}/comments.json",  # not that account
    ):
        assert client.post(path, {"content": "x"}).status == 404, path
    assert len(client.get(f"recordings/{card}/comments.json").json()) == 1


def test_reading_through_the_wrong_bucket_or_campfire_is_not_found(standin: StandIn, client: Client) -> None:
    project = standin.world.projects[0]
    line = client.post(f"chats/{project.campfire_id}/lines.json", {"content": "x"}).json()
    assert (
        client.get(f"buckets/{project.id + 1}/chats/{project.campfire_id}/lines/{line['id']}.json").status
        == 404
    )
    assert client.get(f"chats/{project.recording_ids[0]}/lines/{line['id']}.json").status == 404
    assert client.get(f"comments/{line['id']}.json").status == 404


def test_a_method_a_route_does_not_take_is_not_allowed(standin: StandIn, client: Client) -> None:
    answer = client.request("DELETE", "my/profile.json", None, client.headers())
    assert answer.status == 405
    assert answer.headers["allow"] == "GET"
