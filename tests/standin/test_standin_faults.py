"""Scripted faults: each action does what it says, to the wire and to what exists."""

from __future__ import annotations

import http.client
import json
import socket
import threading
import time
from datetime import UTC, datetime
from typing import TYPE_CHECKING

import pytest

from shell.basecamp.standin.control import SECRET_HEADER
from shell.basecamp.standin.faults import Fault, FaultAction, FaultBook, fault_from_json
from shell.basecamp.standin.server import StandIn
from shell.clock import FakeClock

if TYPE_CHECKING:
    from conftest import Client


def comments_of(standin: StandIn) -> str:
    return f"recordings/{standin.world.projects[0].recording_ids[0]}/comments.json"


def stored_comments(standin: StandIn) -> list[dict[str, object]]:
    return standin.messages("comment", standin.world.projects[0].recording_ids[0])


def post_raw(standin: StandIn, path: str, value: object, timeout: float = 5) -> int:
    """The status of a POST on a fresh connection (or the exception http.client raises)."""
    connection = http.client.HTTPConnection("127.0.0.1", standin.port, timeout=timeout)
    try:
        connection.request(
            "POST",
            f"/{standin.world.account_id}/{path}",
            json.dumps(value),
            {
                "User-Agent": "StandInTests (tests@example.com)",
                "Authorization": f"Bearer {standin.world.token}",
                "Content-Type": "application/json",
            },
        )
        response = connection.getresponse()
        response.read()
        return response.status
    finally:
        connection.close()


@pytest.mark.parametrize(("status", "expected"), [(None, 403), (422, 422), (404, 404)])
def test_refuse_answers_its_status_and_creates_nothing(
    standin: StandIn, client: Client, status: int | None, expected: int
) -> None:
    standin.add_fault(
        Fault(FaultAction.refuse, method="POST", path_contains=comments_of(standin), status=status)
    )
    refused = client.post(comments_of(standin), {"content": "x"})
    assert refused.status == expected
    assert "error" in refused.json()
    assert stored_comments(standin) == []
    assert client.post(comments_of(standin), {"content": "x"}).status == 201  # used up


@pytest.mark.parametrize(
    ("retry_after", "header", "body_retry_after"),
    [
        ("2", "2", 2),
        ("junk", "junk", None),
        ("Wed, 21 Oct 2026 07:28:00 GMT", "Wed, 21 Oct 2026 07:28:00 GMT", None),
        (None, "1", 1),
        ("", None, None),
    ],
)
def test_rate_limit_answers_429_with_retry_after_and_creates_nothing(
    standin: StandIn,
    client: Client,
    retry_after: str | None,
    header: str | None,
    body_retry_after: int | None,
) -> None:
    standin.add_fault(Fault(FaultAction.rate_limit, retry_after=retry_after))
    limited = client.post(comments_of(standin), {"content": "x"})
    assert limited.status == 429
    assert limited.headers.get("retry-after") == header
    assert limited.json()["error"] == "Rate limit exceeded"
    assert limited.json().get("retry_after") == body_retry_after
    assert stored_comments(standin) == []


@pytest.mark.parametrize(("status", "expected"), [(None, 500), (502, 502), (503, 503), (507, 507)])
def test_server_error_answers_its_status_and_creates_nothing(
    standin: StandIn, client: Client, status: int | None, expected: int
) -> None:
    standin.add_fault(Fault(FaultAction.server_error, status=status))
    assert client.post(comments_of(standin), {"content": "x"}).status == expected
    assert stored_comments(standin) == []


def test_create_then_drop_creates_the_message_and_closes_without_an_answer(standin: StandIn) -> None:
    standin.add_fault(Fault(FaultAction.create_then_drop, method="POST"))
    with pytest.raises(http.client.RemoteDisconnected):
        post_raw(standin, comments_of(standin), {"content": "did it land?"})
    assert [comment["content"] for comment in stored_comments(standin)] == ["did it land?"]
    [recorded] = standin.requests()
    assert (recorded.status, recorded.fault) == (None, FaultAction.create_then_drop)
    assert standin.post_count() == 1


def test_drop_without_create_closes_without_an_answer_and_creates_nothing(standin: StandIn) -> None:
    standin.add_fault(Fault(FaultAction.drop_without_create, method="POST"))
    with pytest.raises(http.client.RemoteDisconnected):
        post_raw(standin, comments_of(standin), {"content": "lost"})
    assert stored_comments(standin) == []
    assert standin.post_count(comments_of(standin)) == 1
    assert standin.requests()[0].body == b'{"content": "lost"}'


def test_create_then_delay_creates_at_once_and_answers_late(standin: StandIn) -> None:
    standin.add_fault(Fault(FaultAction.create_then_delay, delay=0.4, times=2))
    with pytest.raises(TimeoutError):
        post_raw(standin, comments_of(standin), {"content": "slow"}, timeout=0.1)
    assert len(stored_comments(standin)) == 1
    started = time.monotonic()
    assert post_raw(standin, comments_of(standin), {"content": "patient"}, timeout=5) == 201
    assert time.monotonic() - started >= 0.35
    assert len(stored_comments(standin)) == 2


def test_hang_waits_then_answers_normally(standin: StandIn, client: Client) -> None:
    standin.seed_message("comment", standin.world.projects[0].recording_ids[0], standin.world.agent.id, "x")
    standin.add_fault(Fault(FaultAction.hang, method="GET", path_contains="/comments.json", delay=0.3))
    started = time.monotonic()
    answer = client.get(comments_of(standin))
    assert time.monotonic() - started >= 0.25
    assert (answer.status, len(answer.json())) == (200, 1)


def test_a_hanging_listing_times_a_client_out(standin: StandIn) -> None:
    standin.add_fault(Fault(FaultAction.hang, method="GET", delay=0.4))
    connection = http.client.HTTPConnection("127.0.0.1", standin.port, timeout=0.1)
    connection.request(
        "GET", f"/{standin.world.account_id}/{comments_of(standin)}", headers={"User-Agent": "t"}
    )
    with pytest.raises(TimeoutError):
        connection.getresponse()
    connection.close()


def test_lag_hides_a_created_message_from_listings_until_the_clock_passes(connect: type[Client]) -> None:
    clock = FakeClock(datetime(2026, 11, 29, 12, 0, tzinfo=UTC))
    with StandIn(world="empty", clock=clock.now) as standin:
        client = connect(standin)
        standin.add_fault(Fault(FaultAction.lag, method="POST", delay=30))
        created = client.post(comments_of(standin), {"content": "eventually"})
        assert created.status == 201
        comment_id = created.json()["id"]
        assert client.get(comments_of(standin)).json() == []
        assert client.get(comments_of(standin)).headers["x-total-count"] == "0"
        assert client.get(f"comments/{comment_id}.json").status == 200  # read by id: found
        assert [comment["id"] for comment in stored_comments(standin)] == [comment_id]
        clock.advance(29.9)
        assert client.get(comments_of(standin)).json() == []
        clock.advance(0.1)
        assert [comment["id"] for comment in client.get(comments_of(standin)).json()] == [comment_id]


def test_bad_link_points_the_next_page_at_another_origin(standin: StandIn, client: Client) -> None:
    standin.add_fault(Fault(FaultAction.bad_link, method="GET", path_contains="/comments.json"))
    listing = client.get(comments_of(standin) + "?page=3")
    assert listing.status == 200
    assert listing.headers["link"].startswith("<http://evil.example/")
    assert "page=4" in listing.headers["link"]
    assert "link" not in client.get(comments_of(standin)).headers  # used up; nothing more to list


def test_no_id_creates_the_message_and_answers_without_its_id(standin: StandIn, client: Client) -> None:
    standin.add_fault(Fault(FaultAction.no_id, method="POST"))
    created = client.post(comments_of(standin), {"content": "which one?"})
    assert created.status == 201
    assert "id" not in created.json()
    assert created.json()["content"] == "which one?"
    assert len(stored_comments(standin)) == 1


def test_faults_match_by_method_and_path_and_the_first_added_wins(standin: StandIn, client: Client) -> None:
    project = standin.world.projects[0]
    lines = f"chats/{project.campfire_id}/lines.json"
    standin.add_fault(Fault(FaultAction.server_error, method="POST", path_contains=lines, status=503))
    standin.add_fault(Fault(FaultAction.refuse, method="POST", status=403, times=2))
    standin.add_fault(Fault(FaultAction.server_error, method="POST", status=500))
    assert client.get(lines).status == 200  # a GET matches none of them
    assert client.post(comments_of(standin), {"content": "a"}).status == 403
    assert client.post(lines, {"content": "b"}).status == 503
    assert client.post(lines, {"content": "c"}).status == 403
    assert client.post(lines, {"content": "d"}).status == 500
    assert client.post(lines, {"content": "e"}).status == 201
    refuse, server_error = FaultAction.refuse, FaultAction.server_error
    faults = [request.fault for request in standin.requests()]
    assert faults == [None, refuse, server_error, refuse, server_error, None]


def test_a_fault_with_times_none_never_wears_out(standin: StandIn, client: Client) -> None:
    standin.add_fault(Fault(FaultAction.rate_limit, times=None))
    assert all(client.get("my/profile.json").status == 429 for _ in range(4))
    standin.clear_faults()
    assert client.get("my/profile.json").status == 200


def test_concurrent_requests_never_share_the_last_use_of_a_fault() -> None:
    book = FaultBook()
    book.add(Fault(FaultAction.refuse, times=50))
    taken: list[Fault | None] = []

    def take_many() -> None:
        for _ in range(20):
            taken.append(book.take("POST", "/x"))

    threads = [threading.Thread(target=take_many) for _ in range(5)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sum(fault is not None for fault in taken) == 50


def test_a_fault_is_checked_when_made() -> None:
    with pytest.raises(ValueError, match="at least once"):
        Fault(FaultAction.refuse, times=0)
    with pytest.raises(ValueError, match="not negative"):
        Fault(FaultAction.hang, delay=-1)
    with pytest.raises(ValueError, match="explode"):
        fault_from_json({"action": "explode"})
    with pytest.raises(ValueError, match="unknown fault fields"):
        fault_from_json({"action": "refuse", "path": "/x"})
    with pytest.raises(TypeError):
        fault_from_json({"action": "refuse", "times": "two"})


def test_stopping_cuts_a_hanging_request_short() -> None:
    standin = StandIn(world="empty").start()
    standin.add_fault(Fault(FaultAction.hang, delay=30))
    caught: list[BaseException] = []

    def wait_for_answer() -> None:
        connection = http.client.HTTPConnection("127.0.0.1", standin.port, timeout=10)
        try:
            connection.request("GET", "/", headers={"User-Agent": "t"})
            connection.getresponse().read()
        except (OSError, http.client.HTTPException) as error:
            caught.append(error)
        finally:
            connection.close()

    waiter = threading.Thread(target=wait_for_answer)
    waiter.start()
    while not standin.requests():
        time.sleep(0.01)
    started = time.monotonic()
    standin.stop()
    waiter.join(5)
    assert time.monotonic() - started < 2
    assert not waiter.is_alive()
    assert len(caught) == 1  # the connection closed without an answer


def test_the_control_api_adds_faults_lists_requests_and_seeds_messages(
    standin: StandIn, client: Client
) -> None:
    card = standin.world.projects[0].recording_ids[0]

    def control(method: str, path: str, value: object = None) -> tuple[int, object]:
        connection = http.client.HTTPConnection("127.0.0.1", standin.port, timeout=5)
        body = None if value is None else json.dumps(value)
        headers = {"Content-Type": "application/json", SECRET_HEADER: standin.control_secret}
        connection.request(method, f"/__standin/{path}", body, headers)
        response = connection.getresponse()
        answer = json.loads(response.read())
        connection.close()
        return response.status, answer

    status, fault = control("POST", "faults", {"action": "refuse", "method": "POST", "status": 422})
    assert status == 201
    assert fault == {
        "action": "refuse",
        "method": "POST",
        "path_contains": None,
        "status": 422,
        "retry_after": None,
        "delay": 0.0,
        "times": 1,
        "size_mib": None,
    }
    assert control("GET", "faults")[1] == [fault]
    assert control("POST", "faults", {"action": "nonsense"})[0] == 400
    assert client.post(comments_of(standin), {"content": "x"}).status == 422

    seed = {
        "kind": "comment",
        "recording_id": card,
        "creator_id": standin.world.people[0].id,
        "content": "old",
        "created_at": "2026-01-02T03:04:05.678Z",
    }
    status, seeded = control("POST", "messages", seed)
    assert status == 201
    assert isinstance(seeded, dict)
    [comment] = client.get(comments_of(standin)).json()
    assert (comment["id"], comment["created_at"], comment["creator"]["id"]) == (
        seeded["id"],
        "2026-01-02T03:04:05.678Z",
        standin.world.people[0].id,
    )
    assert (
        control("POST", "messages", {"kind": "comment", "recording_id": 1, "creator_id": 1, "content": "x"})[
            0
        ]
        == 400
    )

    status, requests = control("GET", "requests")
    assert status == 200
    assert isinstance(requests, list)
    assert [(request["method"], request["status"], request["fault"]) for request in requests] == [
        ("POST", 422, "refuse"), ("GET", 200, None),
    ]  # fmt: skip
    assert requests[0]["headers"]["authorization"] == "REDACTED"
    assert control("GET", "nothing-here")[0] == 404


def test_the_control_api_is_not_recorded_and_needs_its_secret_not_a_token(standin: StandIn) -> None:
    for headers, status in (({}, 403), ({SECRET_HEADER: "guessed"}, 403), ({SECRET_HEADER: standin.control_secret}, 200)):
        connection = http.client.HTTPConnection("127.0.0.1", standin.port, timeout=5)
        connection.request("GET", "/__standin/requests", headers=headers)
        assert connection.getresponse().status == status
        connection.close()
    assert standin.requests() == []


def test_a_drop_closes_the_socket_without_a_byte_of_answer(standin: StandIn) -> None:
    standin.add_fault(Fault(FaultAction.drop_without_create))
    with socket.create_connection(("127.0.0.1", standin.port), timeout=5) as raw:
        path = f"/{standin.world.account_id}/my/profile.json"
        raw.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\nUser-Agent: t\r\n\r\n".encode())
        assert raw.recv(1024) == b""


def test_trickle_sends_the_headers_at_once_then_the_body_a_byte_at_a_time(standin: StandIn) -> None:
    standin.add_fault(Fault(FaultAction.trickle, method="GET", path_contains="/projects.json", delay=0.05))
    connection = http.client.HTTPConnection("127.0.0.1", standin.port, timeout=5)
    started = time.monotonic()
    connection.request("GET", f"/{standin.world.account_id}/projects.json",
                       headers={"User-Agent": "t", "Authorization": f"Bearer {standin.world.token}"})
    response = connection.getresponse()
    headers_took = time.monotonic() - started
    body = response.read()
    connection.close()
    assert response.status == 200
    assert headers_took < 0.3, "the headers at once"
    assert time.monotonic() - started >= 0.05 * (len(body) - 1) * 0.9, "then a byte every delay"
    assert [project["id"] for project in json.loads(body)] == [project.id for project in standin.world.projects]
    assert fault_from_json({"action": "trickle"}) == Fault(FaultAction.trickle), "the control API takes it"
