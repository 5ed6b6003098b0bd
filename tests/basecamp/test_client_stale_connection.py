"""A read on a kept-alive connection the server has already closed: asked once more on a fresh
connection, not a failed read (found as a feed read failing about once a minute against a
server that closes idle connections while the connector polls at the same pace)."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator

import pytest

from shell.basecamp.client import BasecampClient

PERSON = json.dumps({"id": 42, "name": "Claude Agent", "attachable_sgid": "sgid"}).encode()


class ClosingServer:
    """Answers each connection's first request with 200 and keep-alive; a second request on the
    same connection is read and the connection closed unanswered, as a server closing an idle
    connection just as the client reuses it does. (Closing at once instead would race the
    client's own check for a dropped connection.)"""

    def __init__(self) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.connections = 0
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while True:
            try:
                connection, _ = self.listener.accept()
            except OSError:
                return
            self.connections += 1
            with connection:
                if not _read_request(connection):
                    continue
                connection.sendall(
                    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: keep-alive\r\n"
                    + f"Content-Length: {len(PERSON)}\r\n\r\n".encode() + PERSON
                )
                _read_request(connection)  # the reuse: read, then closed unanswered

    def close(self) -> None:
        self.listener.close()


def _read_request(connection: socket.socket) -> bool:
    request = b""
    while b"\r\n\r\n" not in request:
        chunk = connection.recv(4096)
        if not chunk:
            return False
        request += chunk
    return True


@pytest.fixture
def server() -> Iterator[ClosingServer]:
    running = ClosingServer()
    yield running
    running.close()


def test_a_read_on_a_connection_the_server_closed_is_asked_again_on_a_fresh_one(server: ClosingServer) -> None:
    client = BasecampClient(f"http://127.0.0.1:{server.port}", 999, "token", "test")
    assert client.me().id == 42
    assert client.me().id == 42, "the pooled connection was closed by the server; the read is not lost"
    assert client.me().id == 42
    assert server.connections == 3, "one fresh connection for each read after the first"
