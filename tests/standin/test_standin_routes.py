"""Every route the stand-in serves, in its flat form and its legacy /buckets/... form."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import TYPE_CHECKING

import pytest

from shell.basecamp.standin.server import StandIn
from shell.clock import FakeClock

if TYPE_CHECKING:
    from conftest import Client

FORMS = ("flat", "legacy")
BASECAMP_TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z")


def at(form: str, bucket_id: int, rest: str) -> str:
    return rest if form == "flat" else f"buckets/{bucket_id}/{rest}"


def test_the_profile_is_the_person_of_the_token(
    standin: StandIn, client: Client, connect: type[Client]
) -> None:
    agent = standin.world.agent
    profile = client.get("my/profile.json")
    assert profile.status == 200
    assert profile.headers["content-type"].startswith("application/json")
    shown = profile.json()
    assert (shown["id"], shown["name"], shown["attachable_sgid"]) == (agent.id, agent.name, agent.sgid)
    assert shown["personable_type"] == "User"
    assert shown["email_address"] == agent.email_address
    other = standin.world.people[0]
    assert connect(standin, other.token).get("my/profile.json").json()["id"] == other.id


@pytest.mark.parametrize("form", FORMS)
def test_a_comment_is_created_listed_and_read(standin: StandIn, client: Client, form: str) -> None:
    project = standin.world.projects[0]
    card = project.recordings[0]
    created = client.post(
        at(form, project.id, f"recordings/{card.id}/comments.json"), {"content": "<div>Hi</div>"}
    )
    assert created.status == 201
    comment = created.json()
    assert comment["content"] == "<div>Hi</div>"
    assert comment["type"] == "Comment"
    assert comment["title"] == f"Re: {card.title}"
    assert comment["parent"]["id"] == card.id
    assert comment["bucket"] == {"id": project.id, "name": project.name, "type": "Project"}
    assert comment["creator"]["id"] == standin.world.agent.id
    assert comment["content_attachments"] == []
    assert created.headers["location"] == comment["app_url"]
    assert comment["url"] == f"{standin.account_url}/buckets/{project.id}/comments/{comment['id']}.json"

    listed = client.get(at(form, project.id, f"recordings/{card.id}/comments.json"))
    assert listed.status == 200
    assert [item["id"] for item in listed.json()] == [comment["id"]]
    for where in FORMS:
        read = client.get(at(where, project.id, f"comments/{comment['id']}.json"))
        assert read.status == 200
        assert read.json() == comment


@pytest.mark.parametrize("form", FORMS)
def test_a_boost_is_created_listed_and_read(standin: StandIn, client: Client, form: str) -> None:
    project = standin.world.projects[0]
    card = project.recordings[0]
    created = client.post(at(form, project.id, f"recordings/{card.id}/boosts.json"), {"content": "Nice 🚀"})
    assert created.status == 201
    boost = created.json()
    assert boost["content"] == "Nice 🚀"
    assert boost["booster"]["id"] == standin.world.agent.id
    assert boost["recording"]["id"] == card.id
    assert (
        created.headers["location"] == f"{standin.account_url}/buckets/{project.id}/boosts/{boost['id']}.json"
    )

    listed = client.get(at(form, project.id, f"recordings/{card.id}/boosts.json")).json()
    assert listed == [{key: boost[key] for key in ("id", "content", "created_at", "booster")}]
    for where in FORMS:
        read = client.get(at(where, project.id, f"boosts/{boost['id']}.json"))
        assert read.status == 200
        assert read.json() == boost


@pytest.mark.parametrize("form", FORMS)
def test_a_campfire_line_is_created_listed_and_read(standin: StandIn, client: Client, form: str) -> None:
    project = standin.world.projects[0]
    campfire = project.campfire
    created = client.post(
        at(form, project.id, f"chats/{campfire.id}/lines.json"), {"content": "Good morning"}
    )
    assert created.status == 201
    line = created.json()
    assert (line["content"], line["title"], line["type"]) == (
        "Good morning",
        "Good morning",
        "Chat::Lines::Text",
    )
    assert line["parent"]["id"] == campfire.id
    assert line["parent"]["type"] == "Chat::Transcript"
    assert line["creator"]["id"] == standin.world.agent.id
    assert (
        line["url"]
        == f"{standin.account_url}/buckets/{project.id}/chats/{campfire.id}/lines/{line['id']}.json"
    )
    assert created.headers["location"] == line["app_url"]

    listed = client.get(at(form, project.id, f"chats/{campfire.id}/lines.json")).json()
    assert [item["id"] for item in listed] == [line["id"]]
    for where in FORMS:
        read = client.get(at(where, project.id, f"chats/{campfire.id}/lines/{line['id']}.json"))
        assert read.status == 200
        assert read.json() == line


def test_a_rich_text_line_is_titled_by_its_text(standin: StandIn, client: Client) -> None:
    campfire = standin.world.projects[0].campfire
    line = client.post(
        f"chats/{campfire.id}/lines.json",
        {"content": "<strong>Hello</strong> from&nbsp;the API", "content_type": "text/html"},
    ).json()
    assert line["type"] == "Chat::Lines::RichText"
    assert line["title"] == "Hello from the API"


@pytest.mark.parametrize("form", FORMS)
def test_campfires_are_listed_and_read(demo: StandIn, demo_client: Client, form: str) -> None:
    listed = demo_client.get("chats.json?page=1")
    assert listed.status == 200
    assert int(listed.headers["x-total-count"]) == len(demo.world.projects)
    project = demo.world.projects[1]
    campfire = demo_client.get(at(form, project.id, f"chats/{project.campfire_id}.json"))
    assert campfire.status == 200
    assert (
        campfire.json()["lines_url"]
        == f"{demo.account_url}/buckets/{project.id}/chats/{project.campfire_id}/lines.json"
    )
    assert demo_client.get(f"buckets/{project.id}/chats.json").status == 404


def test_a_boost_on_a_comment_and_on_a_line(standin: StandIn, client: Client) -> None:
    project = standin.world.projects[0]
    comment = client.post(f"recordings/{project.recording_ids[0]}/comments.json", {"content": "x"}).json()
    line = client.post(f"chats/{project.campfire_id}/lines.json", {"content": "y"}).json()
    for target in (comment, line):
        boost = client.post(f"recordings/{target['id']}/boosts.json", {"content": "👍"})
        assert boost.status == 201
        assert boost.json()["recording"]["id"] == target["id"]
        assert client.get(target["url"].removeprefix(standin.base_url)).json()["boosts_count"] == 1


def test_what_a_token_creates_is_that_persons(standin: StandIn, connect: type[Client]) -> None:
    other = standin.world.people[0]
    project = standin.world.projects[0]
    as_other = connect(standin, other.token)
    comment = as_other.post(f"recordings/{project.recording_ids[0]}/comments.json", {"content": "mine"})
    line = as_other.post(f"chats/{project.campfire_id}/lines.json", {"content": "mine too"})
    boost = as_other.post(f"recordings/{project.recording_ids[0]}/boosts.json", {"content": "yay"})
    assert comment.json()["creator"]["id"] == other.id
    assert line.json()["creator"]["id"] == other.id
    assert boost.json()["booster"]["id"] == other.id


def test_ids_increase_from_one_counter_and_times_have_milliseconds(connect: type[Client]) -> None:
    clock = FakeClock(datetime(2026, 3, 23, 22, 24, 2, 130_456, tzinfo=UTC))
    with StandIn(world="empty", clock=clock.now) as standin:
        client = connect(standin)
        project = standin.world.projects[0]
        first = client.post(f"recordings/{project.recording_ids[0]}/comments.json", {"content": "a"}).json()
        clock.advance(1.5)
        second = client.post(f"chats/{project.campfire_id}/lines.json", {"content": "b"}).json()
        third = client.post(f"recordings/{project.recording_ids[0]}/boosts.json", {"content": "c"}).json()
    assert first["id"] > 1_069_479_000
    assert first["id"] < second["id"] < third["id"]
    assert first["created_at"] == "2026-03-23T22:24:02.130Z"
    assert second["created_at"] == second["updated_at"] == "2026-03-23T22:24:03.630Z"
    assert BASECAMP_TIME.fullmatch(third["created_at"])


def test_every_url_in_an_answer_is_bucket_scoped_on_the_stand_ins_origin(
    standin: StandIn, client: Client
) -> None:
    project = standin.world.projects[0]
    comment = client.post(f"recordings/{project.recording_ids[0]}/comments.json", {"content": "x"}).json()
    urls = [
        comment["url"],
        comment["app_url"],
        comment["boosts_url"],
        comment["parent"]["url"],
        comment["parent"]["app_url"],
    ]
    for url in urls:
        assert url.startswith(f"{standin.account_url}/buckets/{project.id}/"), url


def test_demo_world_has_three_projects_two_other_people_and_their_own_tokens(demo: StandIn) -> None:
    world = demo.world
    assert len(world.projects) == 3
    assert len(world.people) == 2
    assert all(project.recordings and project.campfire_id for project in world.projects)
    assert all(
        recording.type == "Kanban::Card" for project in world.projects for recording in project.recordings
    )
    tokens = {person.token for person in world.everyone}
    assert len(tokens) == 3
    assert world.token == world.agent.token
