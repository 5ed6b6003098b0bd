"""The stand-in's HTTP transport: a threaded HTTP/1.1 server on 127.0.0.1, one handler a
connection.

Rules:
1. HTTP/1.1 with keep-alive: every answer carries its ``Content-Length``, so a client can pool
   connections; one idle for ``keepalive_timeout`` seconds is closed.
2. A request is read whole, recorded, then may be answered 429 by the rate limit
   (``shell.basecamp.standin.ratelimit``, taking no fault), else its fault is taken, then it is
   answered; a dropped POST is still recorded.
3. "Drop" means: close the connection without writing a byte of an answer.
4. Stopping wakes the accept loop, closes every connection and cuts every fault's wait short.
5. Nothing is printed; each request is logged (method, path, status), never a header, a body or
   the query string."""

from __future__ import annotations

import contextlib
import logging
import secrets
import selectors
import socket
import threading
from collections.abc import Callable
from datetime import datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from shell.basecamp.standin.api import BasecampApi
from shell.basecamp.standin.control import PREFIX, SECRET_HEADER, Control
from shell.basecamp.standin.exchange import Incoming, Reply, error_reply
from shell.basecamp.standin.faults import FaultBook, act
from shell.basecamp.standin.ratelimit import Limiter
from shell.basecamp.standin.recorder import RequestLog

LOGGER = logging.getLogger("shell.basecamp.standin")
HOST = "127.0.0.1"
MAX_BODY_BYTES = 1 << 20


class HttpServer(ThreadingHTTPServer):
    """The listening socket and what every handler shares. ``api`` and ``control`` are set
    by ``StandIn`` once the port (and so the origin) is known, before serving starts."""

    daemon_threads = True
    api: BasecampApi
    control: Control
    control_secret: str

    def __init__(
        self,
        port: int,
        *,
        faults: FaultBook,
        limiter: Limiter,
        log: RequestLog,
        now: Callable[[], datetime],
        keepalive_timeout: float,
    ) -> None:
        self.faults = faults
        self.limiter = limiter
        self.log = log
        self.now = now
        self.keepalive_timeout = keepalive_timeout
        self.stopping = threading.Event()
        self._connections: set[socket.socket] = set()
        self._connections_lock = threading.Lock()
        self._wake_reader, self._wake_writer = socket.socketpair()
        super().__init__((HOST, port), Handler)  # binds; on failure, closes all of the above

    @property
    def origin(self) -> str:
        return f"http://{HOST}:{self.server_address[1]}"

    def wait(self, seconds: float) -> bool:
        """Sleep ``seconds``; False (at once) when the server stops meanwhile."""
        return not self.stopping.wait(max(0.0, seconds))

    def track(self, connection: socket.socket) -> None:
        with self._connections_lock:
            self._connections.add(connection)
        if self.stopping.is_set():
            _close(connection)

    def untrack(self, connection: socket.socket) -> None:
        with self._connections_lock:
            self._connections.discard(connection)

    def serve(self) -> None:
        """Accept connections until ``stop``; a stop wakes the loop at once (no polling)."""
        with selectors.DefaultSelector() as selector:
            selector.register(self, selectors.EVENT_READ)
            selector.register(self._wake_reader, selectors.EVENT_READ)
            while not self.stopping.is_set():
                for key, _ in selector.select():
                    if key.fileobj is self and not self.stopping.is_set():
                        self.handle_request()

    def stop(self) -> None:
        """Make ``serve`` return and close every open connection (from any thread)."""
        self.stopping.set()
        with contextlib.suppress(OSError):
            self._wake_writer.send(b"\0")
        with self._connections_lock:
            connections = list(self._connections)
        for connection in connections:
            _close(connection)

    def server_close(self) -> None:
        """Close the listening socket and wait for the handlers to finish."""
        super().server_close()
        self._wake_reader.close()
        self._wake_writer.close()

    def handle_error(self, request: Any, client_address: Any) -> None:
        LOGGER.debug("connection from %s ended with an error", client_address, exc_info=True)


def _close(connection: socket.socket) -> None:
    with contextlib.suppress(OSError):
        connection.shutdown(socket.SHUT_RDWR)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "BasecampStandIn/1.0"
    disable_nagle_algorithm = True
    server: HttpServer

    def setup(self) -> None:
        super().setup()
        self.connection.settimeout(self.server.keepalive_timeout)
        self.server.track(self.connection)

    def finish(self) -> None:
        try:
            super().finish()
        finally:
            self.server.untrack(self.connection)

    def do_GET(self) -> None:
        self._serve()

    def do_POST(self) -> None:
        self._serve()

    def do_PUT(self) -> None:
        self._serve()

    def do_PATCH(self) -> None:
        self._serve()

    def do_DELETE(self) -> None:
        self._serve()

    def _serve(self) -> None:
        request = self._read()
        if request is None:
            return
        if request.path.startswith(PREFIX):
            self._control(request)
            return
        server = self.server
        number = server.log.record(request, server.now())
        limited = server.limiter.admit(self.client_address[0])
        fault = None if limited is not None else server.faults.take(request.method, request.path)
        try:
            if limited is not None:
                reply: Reply | None = limited
            elif fault is None:
                reply = server.api.answer(request)
            else:
                server.log.note_fault(number, fault.action)
                reply = act(fault, request, lambda lag: server.api.answer(request, lag), server.wait)
        except Exception:
            LOGGER.exception("the stand-in failed on %s %s", request.method, request.path)
            reply = error_reply(500, "Internal Server Error")
        if reply is None:
            LOGGER.info("%s %s dropped (%s)", request.method, request.path, fault and fault.action)
            self.close_connection = True
            return
        server.log.note_status(number, reply.status)
        if not self._write(reply):
            server.log.note_status(number, None)

    def _control(self, request: Incoming) -> None:
        """The control API, only from 127.0.0.1 and with the stand-in's secret (``control`` rule 1)."""
        if self.client_address[0] != HOST:
            self._write(error_reply(403, "Forbidden"))
            return
        given = request.headers.get(SECRET_HEADER.lower(), "")
        if not secrets.compare_digest(given.encode(), self.server.control_secret.encode()):
            needs = f"the control API needs {SECRET_HEADER}: the control_secret the stand-in printed first"
            self._write(error_reply(403, "Forbidden", message=needs))
            return
        self._write(self.server.control.answer(request))

    def _read(self) -> Incoming | None:
        """The whole request, or None when its framing is broken (answered 400, closed)."""
        headers = {name.lower(): value for name, value in self.headers.items()}
        try:
            if "chunked" in headers.get("transfer-encoding", "").lower():
                body = self._read_chunked()
            else:
                length = int(headers.get("content-length", "0"))
                if not 0 <= length <= MAX_BODY_BYTES:
                    raise ValueError(f"a body of {length} bytes")
                body = self.rfile.read(length)
                if len(body) < length:  # the client went away mid-body: nothing to answer
                    self.close_connection = True
                    return None
        except ValueError:
            self.close_connection = True
            self._write(error_reply(400, "Bad Request"))
            return None
        target = urlsplit(self.path)
        query = dict(parse_qsl(target.query, keep_blank_values=True))
        return Incoming(self.command, target.path, query, headers, body)

    def _read_chunked(self) -> bytes:
        body = b""
        while True:
            size = int(self.rfile.readline().split(b";")[0].strip(), 16)  # ValueError when malformed
            if size == 0:
                while self.rfile.readline().strip():
                    pass
                return body
            if len(body) + size > MAX_BODY_BYTES:
                raise ValueError("a chunked body too large")
            body += self.rfile.read(size)
            self.rfile.readline()

    def _write(self, reply: Reply) -> bool:
        """Write ``reply``; False when the client is gone."""
        try:
            self.send_response(reply.status)
            for name, value in reply.headers:
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(reply.body)))
            if self.close_connection:
                self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(reply.body)
            self.wfile.flush()
        except OSError:
            self.close_connection = True
            return False
        return True

    def version_string(self) -> str:
        return self.server_version

    def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
        path = urlsplit(self.path).path if isinstance(self.path, str) else ""
        LOGGER.info("%s %s %s -> %s", self.address_string(), self.command, path, code)

    def log_message(self, format: str, *args: Any) -> None:
        LOGGER.info("%s %s", self.address_string(), format % args)
