"""The stand-in's agent inbox (``GET /{account}/inbox.json``) on the wire, and Basecamp's own SDK
(0.29.1, ``event_feed.poll_inbox``, unmodified) reading it: the contract, as the SDK documents it
(its OpenAPI document, which the project carries, predates the inbox)."""

from __future__ import annotations

import typing
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest

from shell.basecamp.standin.faults import Fault, FaultAction
from shell.basecamp.standin.server import StandIn
from shell.clock import FakeClock

if TYPE_CHECKING:
    from conftest import Client


THIRTY_ONE_DAYS = 31 * 86_400


@pytest.fixture
def clock() -> FakeClock:
    """The stand-in's clock, moved by the test (retention is 30 days of it)."""
    return FakeClock(datetime(2026, 12, 1, 9, 0, tzinfo=UTC))


@pytest.fixture
def standin(clock: FakeClock) -> Iterator[StandIn]:
    with StandIn(world="demo", clock=clock.now) as running:
        running.inbox.page_size = 2
        yield running


@pytest.fixture
def agent(standin: StandIn, connect: type[Client]) -> Client:
    return connect(standin)


def inbox_path(client: Client, **query: str) -> str:
    return f"/{client.standin.world.account_id}/inbox.json?{urlencode(query)}"


def relative(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.path}?{parts.query}"


def walk(client: Client, **query: str) -> tuple[list[dict[str, Any]], str]:
    """Every item from ``query`` on, following ``next``; (items, the last position)."""
    answer = client.get(inbox_path(client, **query))
    items: list[dict[str, Any]] = []
    while True:
        assert answer.status == 200, answer.body
        body = answer.json()
        items += body["items"]
        if "next" not in body:
            return items, body["position"]
        assert body["next"].startswith(client.standin.base_url + "/")
        answer = client.get(relative(body["next"]))


def card(standin: StandIn, project: int = 0) -> int:
    return standin.world.projects[project].recording_ids[0]


def test_mentions_assignments_and_subscriptions_address_the_agent_each_its_own_item(
    standin: StandIn, agent: Client
) -> None:
    ada = standin.world.people[0]
    standin.subscribe(standin.world.agent, card(standin))
    mentioned = standin.mention(ada, card(standin), "both mentioned and subscribed")
    assigned = standin.assign(ada, card(standin, 1), standin.world.agent.id)
    standin.seed_message("comment", card(standin, 1), ada.id, "nobody addressed")
    own = standin.mention(standin.world.agent, card(standin), "never self-addressed")

    items, _ = walk(agent, since="0")
    assert [(item["event"]["id"], item["reason"]) for item in items] == [
        (mentioned, "mentioned"), (mentioned, "subscribed"), (assigned, "assigned"),
    ]  # fmt: skip
    assert own not in {item["event"]["id"] for item in items}
    ids = [item["addressing_id"] for item in items]
    assert ids == sorted(set(ids)), "each item its own id, oldest first"
    assert set(items[0]) == {"addressing_id", "reason", "addressed_at", "event"}


def test_filters_narrow_and_a_bad_filter_or_since_is_400(standin: StandIn, agent: Client) -> None:
    ada = standin.world.people[0]
    standin.subscribe(standin.world.agent, card(standin))
    mentioned = standin.mention(ada, card(standin), "hello")
    standin.assign(ada, card(standin, 1), standin.world.agent.id)
    assert [i["event"]["id"] for i in walk(agent, since="0", reasons="mentioned")[0]] == [mentioned]
    assert [i["reason"] for i in walk(agent, since="0", types="card.assignment_changed")[0]] == ["assigned"]
    buckets = str(standin.world.projects[1].id)
    assert [i["reason"] for i in walk(agent, since="0", buckets=buckets)[0]] == ["assigned"]
    for query in ({"reasons": "loved"}, {"buckets": "x"}):
        answer = agent.get(inbox_path(agent, **query))
        assert (answer.status, answer.json()["reason"]) == (400, "invalid_filter")
    answer = agent.get(inbox_path(agent, since="yesterday"))
    assert (answer.status, answer.json()["reason"]) == (400, "invalid_since")


def test_since_now_and_the_position_carry_on_and_positions_are_bound(
    standin: StandIn, agent: Client, connect: type[Client]
) -> None:
    ada = standin.world.people[0]
    standin.mention(ada, card(standin), "before")
    position = agent.get(inbox_path(agent, since="now")).json()["position"]
    later = standin.mention(ada, card(standin), "after")
    assert [i["event"]["id"] for i in walk(agent, position=position)[0]] == [later]
    other_filters = agent.get(inbox_path(agent, position=position, reasons="assigned"))
    assert other_filters.status == 409
    assert set(other_filters.json()) == {"error", "filters_digest", "position_digest"}
    bad = agent.get(inbox_path(agent, position=position[:-2] + "00"))
    assert (bad.status, bad.json()["reason"]) == (400, "invalid_position")
    feed_position = agent.get(f"/{standin.world.account_id}/events.json?since=0").json()["position"]
    refused = agent.get(inbox_path(agent, position=feed_position))
    assert (refused.status, refused.json()["reason"]) == (400, "invalid_position"), "never a feed position"


def test_a_person_gets_a_bare_403(standin: StandIn, agent: Client, connect: type[Client]) -> None:
    answer = connect(standin, standin.world.people[0].token).get(inbox_path(agent, since="0"))
    assert (answer.status, answer.body) == (403, b"")
    standin.inbox.agents.clear()  # the token's person is not an agent principal
    assert agent.get(inbox_path(agent, since="0")).status == 403


def test_retention_keeps_30_days_and_a_position_behind_it_is_410_resuming_at_since_0(
    standin: StandIn, agent: Client, clock: FakeClock
) -> None:
    ada = standin.world.people[0]
    position = agent.get(inbox_path(agent, since="now", reasons="mentioned")).json()["position"]
    standin.mention(ada, card(standin), "an old one")
    clock.advance(THIRTY_ONE_DAYS)
    kept = standin.mention(ada, card(standin), "a fresh one")
    assert [i["event"]["id"] for i in walk(agent, since="0")[0]] == [kept]
    gone = agent.get(inbox_path(agent, position=position, reasons="mentioned"))
    assert gone.status == 410
    body = gone.json()
    assert set(body) == {"error", "resume"}, "no epoch: the inbox's own 410"
    assert parse_qs(urlsplit(body["resume"]).query) == {"reasons": ["mentioned"], "since": ["0"]}
    assert [i["event"]["id"] for i in agent.get(relative(body["resume"])).json()["items"]] == [kept]


def test_a_braked_event_is_absent_from_the_feed_and_present_in_the_inbox(standin: StandIn, agent: Client) -> None:
    ada = standin.world.people[0]
    standin.feed.brake_next()
    braked = standin.mention(ada, card(standin), "braked")
    heard = standin.mention(ada, card(standin), "not braked")
    feed = agent.get(f"/{standin.world.account_id}/events.json?since=0").json()["events"]
    assert [event["id"] for event in feed] == [heard]
    assert [item["event"]["id"] for item in walk(agent, since="0")[0]] == [braked, heard]


def test_an_item_in_a_project_the_agent_no_longer_sees_is_dropped_at_read_time(
    standin: StandIn, agent: Client
) -> None:
    ada = standin.world.people[0]
    hidden = standin.mention(ada, card(standin, 1), "in a project withheld later")
    shown = standin.mention(ada, card(standin), "visible")
    standin.feed.withhold(standin.world.projects[1].id)
    assert [i["event"]["id"] for i in walk(agent, since="0")[0]] == [shown]
    standin.feed.grant(standin.world.projects[1].id)
    assert [i["event"]["id"] for i in walk(agent, since="0")[0]] == [hidden, shown]


def test_the_inbox_takes_the_stand_ins_faults(standin: StandIn, agent: Client) -> None:
    standin.add_fault(Fault(FaultAction.server_error, path_contains="inbox.json", status=503))
    assert agent.get(inbox_path(agent, since="0")).status == 503
    standin.add_fault(Fault(FaultAction.loop_link, path_contains="inbox.json"))
    looped = agent.get(inbox_path(agent, since="0")).json()
    assert relative(looped["next"]) == inbox_path(agent, since="0")


# -- the official SDK (unmodified) against the stand-in -----------------------------------------


def sdk_feed(standin: StandIn, token: str | None = None) -> Any:
    from basecamp import Client as SdkClient
    from basecamp.config import Config

    sdk = SdkClient(config=Config(base_url=standin.base_url, max_retries=0),
                    access_token=token or standin.world.token,
                    user_agent="stand-in contract tests (tests@example.com)")  # fmt: skip
    return sdk.for_account(str(standin.world.account_id)).event_feed


def keys_of(typed_dict: Any) -> tuple[set[str], set[str]]:
    """(every key, the required keys) of one of the SDK's TypedDicts."""
    hints = typing.get_type_hints(typed_dict, include_extras=True)
    optional = {name for name, hint in hints.items() if typing.get_origin(hint) is typing.NotRequired}
    return set(hints), set(hints) - optional


def conforms(value: dict[str, Any], typed_dict: Any) -> None:
    every, required = keys_of(typed_dict)
    assert required <= set(value) <= every, (typed_dict.__name__, sorted(value))


def test_the_official_sdks_poll_inbox_walks_the_standins_inbox(standin: StandIn) -> None:
    """A contract test: every page the SDK's poll_inbox reads has the SDK's own response shape."""
    from basecamp.generated.types import FeedEvent, InboxItem, PollInboxResponseContent

    ada = standin.world.people[0]
    standin.subscribe(standin.world.agent, card(standin))
    made = [standin.mention(ada, card(standin), f"number {n}") for n in range(3)]
    feed = sdk_feed(standin)
    page = feed.poll_inbox(since="0", reasons="mentioned")
    items: list[dict[str, Any]] = []
    while True:
        conforms(page, PollInboxResponseContent)
        for item in page["items"]:
            conforms(item, InboxItem)
            conforms(item["event"], FeedEvent)
        items += page["items"]
        if "next" not in page:
            break
        page = feed.poll_inbox(position=page["position"], reasons="mentioned")
    assert [item["event"]["id"] for item in items] == made
    later = standin.mention(ada, card(standin), "after the walk")
    resumed = feed.poll_inbox(position=page["position"], reasons="mentioned")
    assert [item["event"]["id"] for item in resumed["items"]] == [later]
    assert feed.poll_inbox(since="now")["items"] == []


def test_the_official_sdk_sees_a_person_refused_and_a_410_it_can_resume_from(
    standin: StandIn, clock: FakeClock
) -> None:
    from basecamp.errors import ApiError, ForbiddenError

    with pytest.raises(ForbiddenError):
        sdk_feed(standin, standin.world.people[0].token).poll_inbox(since="0")
    feed = sdk_feed(standin)
    position = feed.poll_inbox(since="now")["position"]
    standin.mention(standin.world.people[0], card(standin), "expires")
    clock.advance(THIRTY_ONE_DAYS)
    with pytest.raises(ApiError) as gone:
        feed.poll_inbox(position=position)
    assert gone.value.http_status == 410
    assert feed.poll_inbox(since="0")["items"] == []
