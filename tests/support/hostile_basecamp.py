"""A hostile Basecamp for tests: the stand-in behind a proxy that rewrites chosen answers, and a
trap listening on another loopback address that records whatever reaches it.

Not a mock: every request is forwarded to a real stand-in over real HTTP, and its real answer
is handed to ``rewrite`` (which may return it changed), so the connector talks to a Basecamp
that behaves in every way but the one a test makes hostile.

    with Trap("127.0.0.2") as trap, HostileBasecamp(standin.base_url, rewrite) as hostile:
        ...  # configure the connector with hostile.base_url
        assert trap.received() == b""
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType

import urllib3


@dataclass
class Answered:
    """One answer as the stand-in gave it, or as ``rewrite`` changes it."""

    path: str
    status: int
    headers: dict[str, str]
    body: bytes


Rewrite = Callable[[Answered], Answered]


class HostileBasecamp:
    """A proxy on 127.0.0.1 in front of the stand-in at ``upstream``; ``rewritten`` counts the
    answers ``rewrite`` changed."""

    def __init__(self, upstream: str, rewrite: Rewrite = lambda answer: answer) -> None:
        self._upstream = upstream.rstrip("/")
        self.rewrite = rewrite  # a test may set another once it knows the proxy's address
        self._pool = urllib3.PoolManager(retries=False)
        self.rewritten = 0
        self._lock = threading.Lock()
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: object) -> None:
                pass

            def _forward(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else None
                headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "connection")}
                answer = proxy._pool.request(self.command, proxy._upstream + self.path, body=body,
                                             headers=headers, redirect=False, timeout=30)  # fmt: skip
                given = Answered(self.path, answer.status, dict(answer.headers), answer.data)
                shown = proxy.rewrite(given)
                if shown is not given:
                    with proxy._lock:
                        proxy.rewritten += 1
                self.send_response(shown.status)
                for name, value in shown.headers.items():
                    if name.lower() not in ("content-length", "connection", "transfer-encoding", "date", "server"):
                        self.send_header(name, value)
                self.send_header("Content-Length", str(len(shown.body)))
                self.end_headers()
                self.wfile.write(shown.body)

            def do_GET(self) -> None:
                self._forward()

            def do_POST(self) -> None:
                self._forward()

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> HostileBasecamp:
        self._thread.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None) -> None:
        self._server.shutdown()
        self._server.server_close()


class Trap:
    """A listener on another loopback address: it answers nothing and keeps every byte sent."""

    def __init__(self, host: str) -> None:
        self.host = host
        self._socket = socket.create_server((host, 0))
        self._received = bytearray()
        self.connections = 0
        self._lock = threading.Lock()
        self._closed = threading.Event()
        self._thread = threading.Thread(target=self._accept, daemon=True)

    @property
    def port(self) -> int:
        return int(self._socket.getsockname()[1])

    def received(self) -> bytes:
        with self._lock:
            return bytes(self._received)

    def _accept(self) -> None:
        while not self._closed.is_set():
            try:
                connection, _ = self._socket.accept()
            except OSError:
                return
            with self._lock:
                self.connections += 1
            threading.Thread(target=self._keep, args=(connection,), daemon=True).start()

    def _keep(self, connection: socket.socket) -> None:
        connection.settimeout(5)
        with connection:
            while True:
                try:
                    chunk = connection.recv(65536)
                except OSError:
                    return
                if not chunk:
                    return
                with self._lock:
                    self._received += chunk

    def __enter__(self) -> Trap:
        self._thread.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None) -> None:
        self._closed.set()
        self._socket.close()
