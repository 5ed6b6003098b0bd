"""The stand-in refuses the impossible, through its control API over real HTTP:
finite, bounded numbers everywhere (delays, windows, sizes, lifetimes, counts), a clear 400 for
every bad body that changes nothing, faults removable, no secret or OAuth code in its record of
requests, a mention posted as Basecamp marks one up, a card placed as any person's, and a world with an account id of its own."""

from __future__ import annotations

import json
from urllib.parse import urlencode

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.mentions import mentioned_person_ids
from shell.basecamp.standin.control import MAX_TOKEN_LIFETIME_SECONDS
from shell.basecamp.standin.faults import (
    MAX_OVERSIZE_MIB,
    MAX_SECONDS,
    REDACTED,
    Fault,
    FaultAction,
    RateLimit,
)
from shell.basecamp.standin.launchpad import CLIENT_ID
from shell.basecamp.standin.server import StandIn
from shell.cli.main import build_parser
from shell.cli.standin import as_text, describe
from tests.standin.conftest import Answer, Client


def control(client: Client, method: str, path: str, body: bytes | None = None) -> Answer:
    headers = client.headers({"Content-Type": "application/json"})
    return client.request(method, f"/__standin/{path}", body, headers)


def refused(client: Client, method: str, path: str, body: bytes, says: str) -> None:
    answer = control(client, method, path, body)
    assert answer.status == 400, (body, answer)
    assert says in answer.json()["message"], answer.json()


@pytest.mark.parametrize(
    ("body", "says"),
    [
        (b'{"action": "hang", "delay": NaN}', "NaN"),
        (b'{"action": "hang", "delay": Infinity}', "Infinity"),
        (b'{"action": "hang", "delay": 1e400}', "too large to be finite"),
        (json.dumps({"action": "hang", "delay": MAX_SECONDS + 1}).encode(), "finite number of seconds"),
        (json.dumps({"action": "hang", "delay": -1}).encode(), "not negative"),
        (json.dumps({"action": "oversize", "size_mib": 1_000}).encode(), f"at most {MAX_OVERSIZE_MIB}"),
        (json.dumps({"action": "oversize", "size_mib": 0}).encode(), "more than 0 MiB"),
        (json.dumps({"action": "oversize", "size_mib": "9"}).encode(), "a number of MiB"),
        (json.dumps({"action": "oversize", "delay": 9}).encode(), "an oversize fault has no delay"),
        (json.dumps({"action": "hang", "size_mib": 9}).encode(), "only an oversize fault has a size_mib"),
        (json.dumps({"action": "refuse", "times": 10**12}).encode(), "a fault's times"),
        (json.dumps({"action": "refuse", "delay": True}).encode(), "a fault's delay"),
        (b"[" * 100_000, "nested more than"),
        (b"\xff\xfe", "not UTF-8"),
        (b'{"action": ', "not JSON"),
    ],
)
def test_a_fault_out_of_bounds_is_a_400_that_adds_nothing(client: Client, body: bytes, says: str) -> None:
    refused(client, "POST", "faults", body, says)
    assert control(client, "GET", "faults").json() == []


def test_a_live_fault_out_of_bounds_is_a_400(client: Client) -> None:
    refused(client, "POST", "live/faults", b'{"action": "stall", "delay": Infinity}', "Infinity")
    refused(client, "POST", "live/faults", json.dumps({"action": "stall", "delay": 1e9}).encode(), "seconds")
    assert control(client, "GET", "live/faults").json() == []


@pytest.mark.parametrize(
    "body",
    [b'{"requests": 5, "window": NaN}', b'{"requests": 5, "window": 1e12}', b'{"requests": 5, "window": 0}',
     b'{"requests": 1000000000000}'],
)  # fmt: skip
def test_a_rate_limit_out_of_bounds_is_a_400_that_keeps_the_limit(client: Client, body: bytes) -> None:
    before = control(client, "GET", "rate-limit").json()
    assert control(client, "PUT", "rate-limit", body).status == 400
    assert control(client, "GET", "rate-limit").json() == before


def test_a_token_lifetime_past_ten_years_is_a_400_and_logins_go_on(client: Client) -> None:
    lifetime = json.dumps({"token_lifetime": 10**20}).encode()
    refused(client, "POST", "launchpad", lifetime, f"to {MAX_TOKEN_LIFETIME_SECONDS}")
    assert control(client, "POST", "launchpad", b"{}").json()["token_lifetime"] == 1_209_600


def test_a_rate_limit_and_a_feed_delay_on_the_command_line_are_bounded() -> None:
    parser = build_parser()
    for option in (["--feed-delay", "nan"], ["--feed-delay", "inf"], ["--feed-delay", "1e9"],
                   ["--rate-limit", "5/nan"], ["--rate-limit", "5/inf"], ["--rate-limit", "99999999999/1"]):  # fmt: skip
        with pytest.raises(SystemExit):
            parser.parse_args(["standin", *option])
    with pytest.raises(ValueError, match="finite"):
        RateLimit(5, float("nan"))


CONTROL_PATHS = [("POST", "faults"), ("POST", "messages"), ("POST", "mentions"), ("PUT", "rate-limit"),
                 ("POST", "launchpad"), ("POST", "live/faults"), ("POST", "cards")]  # fmt: skip
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
        st.sampled_from(["action", "delay", "times", "status", "kind", "recording_id", "creator_id", "content",
                         "text", "requests", "window", "token_lifetime", "created_at", "project_id", "title",
                         "x"]), inner, max_size=5),
    max_leaves=12,
)  # fmt: skip


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.sampled_from(CONTROL_PATHS), JSON)
def test_every_body_is_answered_never_dropped(client: Client, route: tuple[str, str], value: object) -> None:
    method, path = route
    answer = control(client, method, path, json.dumps(value).encode())
    assert answer.status in (200, 201, 400), answer
    if answer.status == 400:
        assert answer.json()["message"]
    control(client, "DELETE", "faults")


def test_delete_removes_every_fault_a_permanent_one_too(client: Client) -> None:
    client.standin.add_fault(Fault(FaultAction.refuse, path_contains="/my/profile.json", times=None))
    assert client.get("my/profile.json").status == 403
    assert client.get("my/profile.json").status == 403
    assert control(client, "DELETE", "faults").json() == {"removed": 1}
    assert control(client, "GET", "faults").json() == []
    assert client.get("my/profile.json").status == 200


def test_the_record_of_requests_keeps_no_client_secret_and_no_code(client: Client) -> None:
    form = {"grant_type": "authorization_code", "code": "the-one-time-code", "client_id": CLIENT_ID,
            "client_secret": client.standin.control_secret, "redirect_uri": "http://127.0.0.1:1/callback"}  # fmt: skip
    headers = client.headers({"Content-Type": "application/x-www-form-urlencoded", "Authorization": None})
    client.request("POST", f"/authorization/token?{urlencode({'refresh_token': 'the-refresh'})}",
                   urlencode(form).encode(), headers)  # fmt: skip
    record = control(client, "GET", "requests").body.decode()
    for secret in (client.standin.control_secret, "the-one-time-code", "the-refresh"):
        assert secret not in record
    kept = client.standin.requests()[-1]
    assert kept.query == {"refresh_token": REDACTED}
    assert f"client_secret={REDACTED}" in kept.body.decode()
    assert f"client_id={CLIENT_ID}" in kept.body.decode()


def test_a_mention_posted_through_the_control_api_is_the_operators_and_mentions_the_agent(
    demo_client: Client,
) -> None:
    world = demo_client.standin.world
    card = world.projects[0].recording_ids[0]
    answer = control(demo_client, "POST", "mentions", json.dumps({"recording_id": card, "text": "look"}).encode())
    assert answer.status == 201, answer
    comment = demo_client.get(f"comments/{answer.json()['id']}").json()
    assert comment["creator"]["id"] == world.operator.id
    assert mentioned_person_ids(comment["content"]) == (world.agent.id,)
    event = demo_client.standin.feed.event_about(answer.json()["id"])
    assert event is not None
    assert (event.id, event.creator_id) == (answer.json()["event_id"], world.operator.id)
    refused(demo_client, "POST", "mentions", json.dumps({"recording_id": card}).encode(), "a mention is")
    refused(demo_client, "POST", "mentions", json.dumps({"recording_id": -1, "text": "x"}).encode(), "recording_id")


def test_a_card_placed_through_the_control_api_is_its_creators_with_its_event(demo_client: Client) -> None:
    world = demo_client.standin.world
    grace, project = world.people[1].id, world.projects[0].id
    body = {"project_id": project, "title": "Grace's card", "creator_id": grace, "content": "<div>why</div>"}
    answer = control(demo_client, "POST", "cards", json.dumps(body).encode())
    assert answer.status == 201, answer
    card = demo_client.get(f"card_tables/cards/{answer.json()['id']}").json()
    assert (card["creator"]["id"], card["title"], card["content"]) == (grace, "Grace's card", "<div>why</div>")
    assert card["bucket"]["id"] == project
    (event,) = [found for found in demo_client.standin.feed.events() if found.recording_id == card["id"]]
    assert (event.id, event.event_type, event.creator_id) == (answer.json()["event_id"], "card.created", grace)
    for bad, says in (({**body, "creator_id": 1}, "a person of it"), ({**body, "project_id": 1}, "a project"),
                      ({"title": "x"}, "a card is"), ({**body, "x": 1}, "a card is"), ({**body, "title": 3}, "strings")):
        refused(demo_client, "POST", "cards", json.dumps(bad).encode(), says)


@pytest.mark.parametrize("content", [{"text": "hi"}, ["hi"], 7, None, True])
def test_a_seeded_message_whose_content_is_not_a_string_is_a_400_and_creates_nothing(
    demo_client: Client, content: object
) -> None:
    world = demo_client.standin.world
    card = world.projects[0].recording_ids[0]
    seed = {"kind": "comment", "recording_id": card, "creator_id": world.operator.id, "content": content}
    refused(demo_client, "POST", "messages", json.dumps(seed).encode(), "a message's content is a string")
    assert demo_client.standin.messages("comment", card) == []
    seed["content"] = "a string"
    assert control(demo_client, "POST", "messages", json.dumps(seed).encode()).status == 201


def test_a_world_with_an_account_id_of_its_own_serves_under_it_and_says_it_first() -> None:
    with StandIn(world="demo", account_id=777_000_001) as standin:
        summary = describe(standin)
        assert Client(standin).get("my/profile.json").status == 200
    assert summary["account_id"] == 777_000_001
    assert summary["account_url"].endswith("/777000001")
    line = as_text(summary)
    assert "account 777000001 " in line
    assert f"operator {standin.world.operator.id} " in line
    assert build_parser().parse_args(["standin", "--account", "777000001"]).account == 777_000_001
    with pytest.raises(ValueError, match="account id"):
        StandIn(world="demo", account_id=0)
