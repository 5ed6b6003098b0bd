"""HTTP/1.1 keep-alive: a client can pool connections, and the server closes idle ones."""

from __future__ import annotations

import http.client
import json
import time

import urllib3

from shell.basecamp.standin.server import StandIn


def headers(standin: StandIn) -> dict[str, str]:
    return {
        "User-Agent": "StandInTests (tests@example.com)",
        "Authorization": f"Bearer {standin.world.token}",
        "Content-Type": "application/json",
    }


def test_one_connection_carries_many_requests_and_answers_of_every_kind() -> None:
    with StandIn(world="empty") as standin:
        card = standin.world.projects[0].recording_ids[0]
        comments = f"/{standin.world.account_id}/recordings/{card}/comments.json"
        connection = http.client.HTTPConnection("127.0.0.1", standin.port, timeout=5)
        connection.connect()
        first_socket = connection.sock
        answers = []
        for method, path, body in [
            ("POST", comments, json.dumps({"content": "one"})),
            ("GET", comments, None),
            ("POST", comments, json.dumps({"content": ""})),  # 422 keeps the connection too
            ("GET", f"/{standin.world.account_id}/comments/1.json", None),  # 404 as well
            ("GET", f"/{standin.world.account_id}/my/profile.json", None),
        ]:
            connection.request(method, path, body, headers(standin))
            response = connection.getresponse()
            response.read()
            assert not response.will_close
            answers.append(response.status)
        assert connection.sock is first_socket
        connection.close()
    assert answers == [201, 200, 422, 404, 200]


def test_a_urllib3_pool_reuses_its_connection() -> None:
    with StandIn(world="empty") as standin:
        pool = urllib3.HTTPConnectionPool("127.0.0.1", standin.port, maxsize=1, retries=False)
        path = f"/{standin.world.account_id}/my/profile.json"
        statuses = [pool.request("GET", path, headers=headers(standin)).status for _ in range(5)]
        assert statuses == [200] * 5
        assert pool.num_connections == 1
        assert pool.num_requests == 5
        pool.close()


def test_an_idle_keep_alive_connection_is_closed_by_the_server() -> None:
    with StandIn(world="empty", keepalive_timeout=0.2) as standin:
        connection = http.client.HTTPConnection("127.0.0.1", standin.port, timeout=5)
        connection.request("GET", f"/{standin.world.account_id}/my/profile.json", headers=headers(standin))
        connection.getresponse().read()
        assert connection.sock is not None
        started = time.monotonic()
        assert connection.sock.recv(1) == b""  # blocks until the server closes its end
        assert 0.1 < time.monotonic() - started < 2
        connection.close()


def test_stopping_closes_idle_connections_at_once() -> None:
    standin = StandIn(world="empty").start()
    connection = http.client.HTTPConnection("127.0.0.1", standin.port, timeout=5)
    connection.request("GET", f"/{standin.world.account_id}/my/profile.json", headers=headers(standin))
    connection.getresponse().read()
    started = time.monotonic()
    standin.stop()
    assert time.monotonic() - started < 1
    assert connection.sock is not None
    assert connection.sock.recv(1) == b""
    connection.close()


def test_a_chunked_body_is_read_and_a_broken_length_is_a_bad_request() -> None:
    with StandIn(world="empty") as standin:
        card = standin.world.projects[0].recording_ids[0]
        path = f"/{standin.world.account_id}/recordings/{card}/comments.json"
        connection = http.client.HTTPConnection("127.0.0.1", standin.port, timeout=5)
        connection.request(
            "POST", path, iter([b'{"content": ', b'"in chunks"}']), headers(standin), encode_chunked=True
        )
        assert connection.getresponse().status == 201
        assert standin.messages("comment", card)[0]["content"] == "in chunks"
        connection.close()
        connection = http.client.HTTPConnection("127.0.0.1", standin.port, timeout=5)
        connection.putrequest("POST", path)
        for name, value in headers(standin).items():
            connection.putheader(name, value)
        connection.putheader("Content-Length", "lots")
        connection.endheaders()
        response = connection.getresponse()
        assert (response.status, response.will_close) == (400, True)
        connection.close()


def test_a_body_over_1_mib_or_a_broken_length_is_a_400_saying_what_was_wrong() -> None:
    with StandIn(world="empty") as standin:
        card = standin.world.projects[0].recording_ids[0]
        path = f"/{standin.world.account_id}/recordings/{card}/comments.json"
        for framing, says in [
            (("Content-Length", str((1 << 20) + 1)), "the body is over 1 MiB"),
            (("Transfer-Encoding", "chunked"), "the body is over 1 MiB (chunked)"),
            (("Content-Length", "lots"), "the Content-Length is not a number of bytes"),
        ]:
            connection = http.client.HTTPConnection("127.0.0.1", standin.port, timeout=5)
            connection.putrequest("POST", path)
            for name, value in [*headers(standin).items(), framing]:
                connection.putheader(name, value)
            connection.endheaders()
            if framing[0] == "Transfer-Encoding":
                connection.send(f"{(1 << 20) + 1:x}\r\n".encode())  # the size alone: refused before its bytes
            response = connection.getresponse()
            answer = json.loads(response.read())
            assert (response.status, answer["error"]) == (400, "Bad Request")
            assert says in answer["message"], answer
            connection.close()
        assert standin.messages("comment", card) == []
