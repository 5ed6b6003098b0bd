"""Basecamp's rate limit, enforced by the stand-in: a sliding window per client address, 429
with Retry-After as Basecamp answers it, off when asked, changed over the control API."""

from __future__ import annotations

import http.client
import json
from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

from shell.basecamp.standin.control import SECRET_HEADER
from shell.basecamp.standin.faults import Fault, FaultAction, Limiter, RateLimit
from shell.basecamp.standin.server import StandIn

if TYPE_CHECKING:
    from conftest import Client


class Ticks:
    """A monotonic clock the test moves."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def limited() -> Iterator[StandIn]:
    with StandIn(world="empty", rate_limit=RateLimit(3, 10)) as running:
        yield running


def comments_path(standin: StandIn) -> str:
    return f"recordings/{standin.world.projects[0].recording_ids[0]}/comments.json"


def test_a_stand_in_enforces_basecamps_limit_unless_told_otherwise() -> None:
    assert StandIn(world="empty").limiter.limit == RateLimit(50, 10.0)
    StandIn(world="empty").stop()


def test_the_request_over_the_limit_is_answered_429_with_retry_after_and_creates_nothing(
    limited: StandIn, connect: type[Client]
) -> None:
    client = connect(limited)
    for number in range(3):
        assert client.post(comments_path(limited), {"content": f"hello {number}"}).status == 201
    refused = client.post(comments_path(limited), {"content": "one too many"})
    assert refused.status == 429
    retry_after = refused.headers["retry-after"]
    assert retry_after.isdigit()
    assert 1 <= int(retry_after) <= 10
    assert refused.json() == {"error": "Rate limit exceeded", "retry_after": int(retry_after)}
    assert [
        m["content"] for m in limited.messages("comment", limited.world.projects[0].recording_ids[0])
    ] == [
        "hello 0",
        "hello 1",
        "hello 2",
    ]
    assert client.get("my/profile.json").status == 429  # reads share the budget
    assert [request.status for request in limited.requests()][-2:] == [429, 429]


def test_a_rate_limited_request_takes_no_fault(limited: StandIn, connect: type[Client]) -> None:
    client = connect(limited)
    for _ in range(3):
        assert client.get("my/profile.json").status == 200
    limited.add_fault(Fault(FaultAction.refuse, status=403))
    assert client.get("my/profile.json").status == 429
    assert len(limited._faults.pending()) == 1


def test_the_window_slides_and_a_refusal_does_not_count() -> None:
    ticks = Ticks()
    limiter = Limiter(RateLimit(2, 10), ticks)
    assert limiter.admit("a") is None
    ticks.now += 4
    assert limiter.admit("a") is None
    ticks.now += 1
    refused = limiter.admit("a")
    assert refused is not None
    assert dict(refused.headers)["Retry-After"] == "5"
    for _ in range(5):
        assert limiter.admit("a") is not None  # refusals do not push the window on
    ticks.now += 5  # the first admitted request leaves the window
    assert limiter.admit("a") is None
    assert limiter.admit("a") is not None
    ticks.now += 4  # the second leaves it
    assert limiter.admit("a") is None


def test_each_client_address_has_its_own_window() -> None:
    limiter = Limiter(RateLimit(1, 10), Ticks())
    assert limiter.admit("127.0.0.1") is None
    assert limiter.admit("127.0.0.1") is not None
    assert limiter.admit("127.0.0.2") is None


def test_retry_after_is_whole_seconds_rounded_up_and_at_least_one() -> None:
    ticks = Ticks()
    limiter = Limiter(RateLimit(1, 10), ticks)
    assert limiter.admit("a") is None
    ticks.now += 1.5
    refused = limiter.admit("a")
    assert refused is not None
    assert dict(refused.headers)["Retry-After"] == "9"
    ticks.now += 8.49
    refused = limiter.admit("a")
    assert refused is not None
    assert dict(refused.headers)["Retry-After"] == "1"


def test_off_admits_everything() -> None:
    limiter = Limiter(RateLimit.off(), Ticks())
    assert all(limiter.admit("a") is None for _ in range(500))


@pytest.mark.parametrize(
    ("text", "limit"), [("off", RateLimit.off()), ("50/10", RateLimit(50, 10)), ("5", RateLimit(5, 10)),
                        ("100/2.5", RateLimit(100, 2.5))]
)  # fmt: skip
def test_the_option_reads_off_or_requests_per_seconds(text: str, limit: RateLimit) -> None:
    assert RateLimit.parse(text) == limit


@pytest.mark.parametrize("text", ["", "0", "fast", "50/0", "-1/10", "50/x"])
def test_the_option_refuses_anything_else(text: str) -> None:
    with pytest.raises(ValueError, match="rate limit"):
        RateLimit.parse(text)


def control(standin: StandIn, method: str, body: object = None) -> tuple[int, object]:
    connection = http.client.HTTPConnection("127.0.0.1", standin.port, timeout=5)
    try:
        payload = None if body is None else json.dumps(body)
        connection.request(method, "/__standin/rate-limit", payload, {SECRET_HEADER: standin.control_secret})
        response = connection.getresponse()
        return response.status, json.loads(response.read())
    finally:
        connection.close()


def test_the_control_api_reads_and_changes_the_limit_and_is_never_limited(
    limited: StandIn, connect: type[Client]
) -> None:
    client = connect(limited)
    for _ in range(3):
        client.get("my/profile.json")
    assert control(limited, "GET") == (200, {"requests": 3, "window": 10.0})
    assert control(limited, "PUT", {"requests": 0}) == (200, {"requests": 0, "window": 10.0})
    assert client.get("my/profile.json").status == 200
    assert control(limited, "PUT", {"requests": 2, "window": 1}) == (200, {"requests": 2, "window": 1.0})
    assert control(limited, "PUT", {"requests": "many"})[0] == 400
    assert control(limited, "PUT", {"requests": 2, "per": 1})[0] == 400
    assert control(limited, "GET") == (200, {"requests": 2, "window": 1.0})
