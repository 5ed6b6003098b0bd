"""A create never outlives its deadline, even when the server trickles its answer; found in
review, a test that failed before its fix."""

from __future__ import annotations

import socket
import threading
import time

from core.destinations import Destination, MessageKind
from core.posting import Created
from shell.basecamp.client import BasecampClient


def _trickling_server(seconds: float) -> tuple[int, threading.Thread]:
    """A server that reads a request, then answers one byte every 0.2 s for ``seconds``."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    port = listener.getsockname()[1]

    def serve() -> None:
        connection, _ = listener.accept()
        connection.recv(65536)
        answer = b"HTTP/1.1 201 Created\r\nContent-Type: application/json\r\n"
        answer += b"X-Pad: " + b"a" * int(seconds / 0.2) + b"\r\n"
        try:
            for byte in answer:
                connection.sendall(bytes([byte]) if byte != ord("a") else b"a")
                if byte == ord("a"):
                    time.sleep(0.2)
            connection.sendall(b'Content-Length: 9\r\n\r\n{"id": 1}')
        except OSError:
            pass
        finally:
            connection.close()
            listener.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    return port, thread


def test_a_create_never_outlives_its_deadline() -> None:
    port, server = _trickling_server(seconds=4.0)
    client = BasecampClient(f"http://127.0.0.1:{port}", 1, "secret-token", "review (review@example.com)")
    started = time.monotonic()
    outcome = client.post(Destination(MessageKind.comment, 1, 2), "<div>hi</div>", deadline=started + 1.0)
    elapsed = time.monotonic() - started
    server.join(6)
    assert elapsed < 1.5, f"the request ran {elapsed:.1f} s past a 1 s deadline (outcome {outcome})"
    assert not isinstance(outcome, Created)

