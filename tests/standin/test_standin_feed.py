"""The stand-in's account event feed on the wire: pages, next, filters, positions, errors."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, urlsplit

import pytest

from shell.basecamp.standin.server import StandIn

if TYPE_CHECKING:
    from conftest import Client


@pytest.fixture
def feed_standin() -> Iterator[StandIn]:
    with StandIn(world="demo", feed_page_size=2) as running:
        yield running


@pytest.fixture
def feed(feed_standin: StandIn, connect: type[Client]) -> Client:
    return connect(feed_standin)


def events_path(client: Client, **query: str) -> str:
    from urllib.parse import urlencode

    return f"/{client.standin.world.account_id}/events.json?{urlencode(query)}"


def relative(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.path}?{parts.query}"


def walk(client: Client, **query: str) -> tuple[list[dict[str, Any]], str, int]:
    """Every event from ``query`` on, following ``next``; (events, last position, pages)."""
    answer = client.get(events_path(client, **query))
    pages = 1
    events: list[dict[str, Any]] = []
    while True:
        assert answer.status == 200, answer.body
        body = answer.json()
        events += body["events"]
        if "next" not in body:
            return events, body["position"], pages
        assert body["next"].startswith(client.standin.base_url + "/")
        answer = client.get(relative(body["next"]))
        pages += 1


def card(standin: StandIn, project: int = 0) -> int:
    return standin.world.projects[project].recording_ids[0]


def test_comments_and_lines_posted_or_seeded_are_events_in_id_order(
    feed_standin: StandIn, feed: Client, connect: type[Client]
) -> None:
    ada = feed_standin.world.people[0]
    as_ada = connect(feed_standin, ada.token)
    posted = as_ada.post(f"recordings/{card(feed_standin)}/comments.json", {"content": "hi"}).json()
    seeded = feed_standin.seed_message(
        "comment", card(feed_standin, 1), ada.id, "old", datetime(2020, 1, 1, tzinfo=UTC)
    )
    campfire = feed_standin.world.projects[0].campfire_id
    line = as_ada.post(f"chats/{campfire}/lines.json", {"content": "a line"}).json()
    as_ada.post(f"recordings/{card(feed_standin)}/boosts.json", {"content": "+1"})  # no event

    events, _, pages = walk(feed, since="0")

    assert [(e["event_type"], e["recording_id"]) for e in events] == [
        ("comment.created", posted["id"]),
        ("comment.created", seeded),
        ("chat.line.created", line["id"]),
    ]
    assert pages == 2
    ids = [e["id"] for e in events]
    assert ids == sorted(ids)
    assert len(set(ids)) == 3
    first = events[0]
    assert set(first) == {
        "id",
        "kind",
        "action",
        "event_type",
        "bucket_id",
        "creator_id",
        "performed_by_id",
        "recording_id",
        "created_at",
        "details",
    }
    assert first["kind"] == "comment"
    assert first["action"] == "created"
    assert first["creator_id"] == ada.id
    assert first["performed_by_id"] is None
    assert first["bucket_id"] == feed_standin.world.projects[0].id
    assert first["details"] == {"parent_recording_id": card(feed_standin)}


def test_since_now_serves_only_what_comes_after_and_the_position_carries_on(
    feed_standin: StandIn, feed: Client
) -> None:
    ada = feed_standin.world.people[0]
    feed_standin.mention(ada, card(feed_standin), "before")
    first = feed.get(events_path(feed)).json()  # neither since nor position: now
    assert first["events"] == []
    assert "next" not in first

    later = [feed_standin.mention(ada, card(feed_standin), f"after {n}") for n in range(3)]
    body = feed.get(events_path(feed, position=first["position"])).json()
    assert [e["id"] for e in body["events"]] == later[:2]
    rest = feed.get(relative(body["next"])).json()
    assert [e["id"] for e in rest["events"]] == later[2:]
    assert "next" not in rest
    again = feed.get(events_path(feed, position=rest["position"])).json()
    assert again["events"] == []


def test_since_an_id_starts_just_after_it(feed_standin: StandIn, feed: Client) -> None:
    ada = feed_standin.world.people[0]
    ids = [feed_standin.mention(ada, card(feed_standin), str(n)) for n in range(3)]
    events, _, _ = walk(feed, since=str(ids[0]))
    assert [e["id"] for e in events] == ids[1:]
    assert feed.get(events_path(feed, since="yesterday")).json()["reason"] == "invalid_since"


def test_mention_carries_the_agents_sgid_and_assign_its_added_people(feed_standin: StandIn) -> None:
    world = feed_standin.world
    ada = world.people[0]
    mention = feed_standin.mention(ada, card(feed_standin), "please look")
    assigned = feed_standin.assign(ada.id, card(feed_standin), world.agent.id)
    events = {event.id: event for event in feed_standin.feed.events()}

    comment = feed_standin.messages("comment", card(feed_standin))[-1]
    assert events[mention].recording_id == comment["id"]
    assert f'sgid="{world.agent.sgid}"' in comment["content"]
    assert "application/vnd.basecamp.mention" in comment["content"]
    assert events[assigned].event_type == "card.assignment_changed"
    assert events[assigned].details == {"added_person_ids": [world.agent.id], "removed_person_ids": []}
    assert assigned > mention
    with pytest.raises(ValueError, match="no card"):
        feed_standin.assign(ada, world.projects[0].campfire_id, world.agent.id)


def test_filters_buckets_types_exclude_self_and_actor_types(
    feed_standin: StandIn, feed: Client, connect: type[Client]
) -> None:
    world = feed_standin.world
    ada, agent = world.people[0], world.agent
    in_first = feed_standin.mention(ada, card(feed_standin, 0), "one")
    in_second = feed_standin.mention(ada, card(feed_standin, 1), "two")
    by_agent = connect(feed_standin).post(
        f"recordings/{card(feed_standin)}/comments.json", {"content": "mine"}
    )
    assert by_agent.status == 201
    own = feed_standin.feed.events()[-1].id
    assigned = feed_standin.assign(ada, card(feed_standin, 1), agent.id)

    def ids(**query: str) -> list[int]:
        return [e["id"] for e in walk(feed, since="0", **query)[0]]

    assert ids() == [in_first, in_second, own, assigned]
    assert ids(buckets=str(world.projects[1].id)) == [in_second, assigned]
    assert ids(types="card.assignment_changed") == [assigned]
    assert ids(exclude_performers="self") == [in_first, in_second, assigned]
    assert ids(actor_types="agent") == [own]
    assert ids(actor_types="person", types="comment.created,chat.line.created") == [in_first, in_second]
    assert ids(creators=str(ada.id)) == [in_first, in_second, assigned]
    bad = feed.get(events_path(feed, buckets="project-one"))
    assert bad.status == 400
    assert bad.json()["reason"] == "invalid_filter"
    too_many = feed.get(events_path(feed, buckets=",".join(str(n) for n in range(1, 102))))
    assert too_many.status == 400
    assert too_many.json()["reason"] == "invalid_filter"
    assert feed.get(events_path(feed, actor_types="robot")).json()["reason"] == "invalid_filter"


def test_a_last_page_moves_past_what_the_filters_skipped(feed_standin: StandIn, feed: Client) -> None:
    ada = feed_standin.world.people[0]
    first = feed.get(events_path(feed, types="card.assignment_changed")).json()
    skipped = feed_standin.mention(ada, card(feed_standin), "not an assignment")
    body = feed.get(events_path(feed, types="card.assignment_changed", position=first["position"])).json()
    assert body["events"] == []
    assert body["position"] != first["position"]
    payload = body["position"].split(".")[0]
    assert json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))["i"] == skipped


def test_a_bad_position_is_400_invalid_position(feed_standin: StandIn, feed: Client) -> None:
    position = feed.get(events_path(feed)).json()["position"]
    payload, _, signature = position.partition(".")
    forged = base64.urlsafe_b64encode(b'{"a":1,"d":"x","i":0,"e":0}').decode() + "." + signature
    for bad in ("garbage", position[:-1] + ("0" if position[-1] != "0" else "1"), forged, payload):
        answer = feed.get(events_path(feed, position=bad))
        assert answer.status == 400, bad
        assert answer.json()["reason"] == "invalid_position"
        assert "error" in answer.json()


def test_a_position_from_another_standin_is_invalid(feed: Client, connect: type[Client]) -> None:
    with StandIn(world="demo") as other:
        foreign = connect(other).get(events_path(connect(other))).json()["position"]
    answer = feed.get(events_path(feed, position=foreign))
    assert answer.status == 400
    assert answer.json()["reason"] == "invalid_position"


def test_a_position_for_another_filter_set_is_409(feed_standin: StandIn, feed: Client) -> None:
    position = feed.get(events_path(feed, types="comment.created")).json()["position"]
    answer = feed.get(events_path(feed, types="chat.line.created", position=position))
    assert answer.status == 409
    body = answer.json()
    assert {"error", "filters_digest", "position_digest"} <= set(body)
    assert body["filters_digest"] != body["position_digest"]


def test_a_position_before_the_epoch_is_410_with_where_to_resume(feed_standin: StandIn, feed: Client) -> None:
    ada = feed_standin.world.people[0]
    position = feed.get(events_path(feed, since="0", exclude_performers="self")).json()["position"]
    feed_standin.mention(ada, card(feed_standin), "lost to the epoch")
    after = feed_standin.feed.begin_epoch()
    kept = feed_standin.mention(ada, card(feed_standin), "after the epoch")

    answer = feed.get(events_path(feed, exclude_performers="self", position=position))
    assert answer.status == 410
    body = answer.json()
    assert body["epoch_after_id"] == after
    assert "error" in body
    assert parse_qs(urlsplit(body["resume"]).query) == {"exclude_performers": ["self"], "since": [str(after)]}
    resumed = feed.get(relative(body["resume"])).json()
    assert [e["id"] for e in resumed["events"]] == [kept]


def test_the_feed_asks_for_a_token_and_takes_only_get(feed: Client, connect: type[Client]) -> None:
    assert connect(feed.standin, "nope").get(events_path(feed)).status == 401
    assert feed.post("events.json", {}).status == 405
    assert feed.get(f"buckets/{feed.standin.world.projects[0].id}/events.json").status == 404


def test_a_safety_delay_holds_back_young_events(connect: type[Client]) -> None:
    now = [datetime(2026, 11, 29, 12, 0, tzinfo=UTC)]
    with StandIn(world="empty", clock=lambda: now[0], feed_delay=30.0) as standin:
        client = connect(standin)
        ada = standin.world.people[0]
        event = standin.mention(ada, standin.world.projects[0].recording_ids[0], "young")
        assert client.get(events_path(client, since="0")).json()["events"] == []
        now[0] += timedelta(seconds=30)
        assert [e["id"] for e in client.get(events_path(client, since="0")).json()["events"]] == [event]
