"""A local Basecamp on 127.0.0.1 (``StandIn``), for the demo and the tests, and its HTTP transport.

The port is bound when the ``StandIn`` is made; serving starts with ``start()`` or ``with``, and
``stop()`` closes every connection, cuts every fault's wait short and waits for the handlers. Its
clock (real time unless given) stamps what is created, listed and requested. ``control_secret``
(random unless given, so a restart may keep it) is what a control request carries, and
Launchpad's client secret: on a shared machine only whoever read the first line drives it.

HTTP/1.1 with keep-alive, a thread a connection: every answer carries its ``Content-Length``, and
a connection idle ``keepalive_timeout`` seconds is closed. A request is read whole and recorded,
then may be answered 429 by the rate limit (taking no fault), else meets its fault, else is
answered; a drop closes the connection without a byte of an answer, and a trickle sends the headers at
once and its body a byte at a time. Each request is logged by
method, path and status, never a header, a body or the query string.
"""

from __future__ import annotations

import contextlib
import logging
import secrets
import selectors
import socket
import threading
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from shell.basecamp.standin import faults, lanes
from shell.basecamp.standin.api import BASECAMP_PAGE_SIZES, BasecampApi, Incoming, Reply, error_reply
from shell.basecamp.standin.control import PREFIX, SECRET_HEADER, Control
from shell.basecamp.standin.launchpad import Launchpad
from shell.basecamp.standin.world import CARD, Kind, Person, Store, World, build_world

LOGGER = logging.getLogger("shell.basecamp.standin")
MAX_BODY_BYTES = 1 << 20


class StandIn:
    def __init__(
        self, world: str = "demo", *, port: int = 0, page_sizes: Sequence[int] = BASECAMP_PAGE_SIZES,
        clock: Callable[[], datetime] | None = None, enforce_boost_length: bool = True,
        keepalive_timeout: float = 5.0, feed_page_size: int = lanes.DEFAULT_FEED_PAGE_SIZE,
        feed_delay: float = 0.0, rate_limit: faults.RateLimit | None = None, account_id: int | None = None,
        ticket_ttl: int = lanes.DEFAULT_TICKET_TTL, ping_interval: float = lanes.DEFAULT_PING_INTERVAL,
        make_token: Callable[[], str] | None = None, control_secret: str | None = None,
    ) -> None:  # fmt: skip
        if not page_sizes or any(size < 1 for size in page_sizes):
            raise ValueError(f"page sizes must be positive, not {tuple(page_sizes)}")
        self.world: World = build_world(world, make_token, account_id)
        self._now = now = clock or (lambda: datetime.now(UTC))
        self.control_secret = control_secret or secrets.token_urlsafe(24)
        self._faults = faults.FaultBook()
        self._log = faults.RequestLog()
        self.limiter = faults.Limiter(faults.RateLimit() if rate_limit is None else rate_limit)
        self._http = HttpServer(port, self, keepalive_timeout)
        self.base_url = f"http://{lanes.HOST}:{self.port}"
        self.account_url = f"{self.base_url}/{self.world.account_id}"
        self._store = Store(self.world)
        self.feed = lanes.Feed(self.world, self.account_url, now, page_size=feed_page_size, delay=feed_delay)
        self.live = lanes.LiveStream(self.world, self.feed, now, ticket_ttl, ping_interval)
        self.inbox = lanes.Inbox(self.world, self.feed, self._store, self.account_url, now)
        self.launchpad = Launchpad(self.world, self.base_url, now, self.control_secret)
        self.api = BasecampApi(self.world, self._store, self.base_url, now, page_sizes, feed=self.feed,
                               inbox=self.inbox, tickets=self.live.tickets, launchpad=self.launchpad,
                               enforce_boost_length=enforce_boost_length)
        self.control = Control(self.api, self._faults, self._log, self.limiter, self.live)
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return int(self._http.server_address[1])

    def start(self) -> StandIn:
        if self._thread is None:
            self._thread = threading.Thread(target=self._http.serve, name=f"standin:{self.port}", daemon=True)
            self._thread.start()
            self.live.start()
        return self

    def stop(self) -> None:
        self.live.stop()
        self._http.stop()
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        self._http.server_close()

    def __enter__(self) -> StandIn:
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 traceback: TracebackType | None) -> None:
        self.stop()

    def add_fault(self, fault: faults.Fault) -> None:
        self._faults.add(fault)

    def clear_faults(self) -> None:
        self._faults.clear()
        self.live.faults.clear()

    def requests(self) -> list[faults.RecordedRequest]:
        return self._log.requests()

    def post_count(self, path_contains: str | None = None) -> int:
        """POSTs that reached the stand-in, whatever their fate."""
        return sum(request.method == "POST" and (path_contains is None or path_contains in request.path)
                   for request in self._log.requests())

    def messages(self, kind: str, recording_id: int) -> list[dict[str, Any]]:
        """Every message of ``kind`` (comment, boost, chat_line) kept on a recording (the Campfire
        for lines), oldest first, visible in listings yet or not, as read alone."""
        return self.api.shown(Kind(kind), recording_id)

    def seed_message(self, kind: str, recording_id: int, creator_id: int, content: str,
                     created_at: datetime | None = None) -> int:
        """Place someone's message, or an old one, directly; its id."""
        return self.api.seed(Kind(kind), recording_id, creator_id, content, created_at).id

    def mention(self, person: Person | int, recording_id: int, text: str) -> int:
        """``person`` comments on ``recording_id``, mentioning the agent; the event's id."""
        return self.api.mention(_person_id(person), recording_id, text)[1]

    def assign(self, person: Person | int, card_id: int, assignee_id: int) -> int:
        """``person`` adds ``assignee_id`` to the card's assignees; the event's id."""
        person_id = _person_id(person)
        card = self._store.recording(card_id)
        if card is None or card.type != CARD:
            raise ValueError(f"no card {card_id} in the world")
        if self.world.person(person_id) is None or self.world.person(assignee_id) is None:
            raise ValueError("the assigner and the assignee are people of the world")
        details = {"added_person_ids": [assignee_id], "removed_person_ids": []}
        event = self.feed.record("card.assignment_changed", bucket_id=card.bucket_id, creator_id=person_id,
                                 recording_id=card.id, created_at=self._now(), details=details)
        self._store.join("assignees", card.id, assignee_id)
        return event.id

    def subscribe(self, person: Person | int, recording_id: int) -> None:
        person_id = _person_id(person)
        if self._store.recording(recording_id) is None or self.world.person(person_id) is None:
            raise ValueError("a subscription joins a person and a recording of the world")
        self._store.join("subscribers", recording_id, person_id)


def _too_large(how: str) -> ValueError:
    return ValueError(f"the body is over {MAX_BODY_BYTES >> 20} MiB ({how}), the most the stand-in reads")


def _content_length(value: str) -> int:
    """The body's length as its header says it, or ValueError saying what is wrong with it."""
    if not (value.strip().isascii() and value.strip().isdigit()):
        raise ValueError(f"the Content-Length is not a number of bytes: {value[:40]!r}")
    length = int(value)
    if length > MAX_BODY_BYTES:
        raise _too_large(f"{length} bytes")
    return length


def _person_id(person: Person | int) -> int:
    return person if isinstance(person, int) else person.id


class HttpServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, port: int, standin: StandIn, keepalive_timeout: float) -> None:
        self.standin = standin
        self.keepalive_timeout = keepalive_timeout
        self.stopping = threading.Event()
        self.connections: set[socket.socket] = set()
        self.connections_lock = threading.Lock()
        self._wake_reader, self._wake_writer = socket.socketpair()
        super().__init__((lanes.HOST, port), Handler)  # binds; on failure, closes all of the above

    def wait(self, seconds: float) -> bool:
        """Sleep ``seconds``; False (at once) when the server stops meanwhile."""
        return not self.stopping.wait(max(0.0, seconds))

    def serve(self) -> None:
        """Accept connections until ``stop``, which wakes the loop at once (no polling)."""
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
        with self.connections_lock:
            connections = list(self.connections)
        for connection in connections:
            lanes.cut(connection)

    def server_close(self) -> None:
        super().server_close()
        self._wake_reader.close()
        self._wake_writer.close()

    def handle_error(self, request: Any, client_address: Any) -> None:
        LOGGER.debug("connection from %s ended with an error", client_address, exc_info=True)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "BasecampStandIn/1.0"
    disable_nagle_algorithm = True
    server: HttpServer

    def setup(self) -> None:
        super().setup()
        self.connection.settimeout(self.server.keepalive_timeout)
        with self.server.connections_lock:
            self.server.connections.add(self.connection)
        if self.server.stopping.is_set():
            lanes.cut(self.connection)

    def finish(self) -> None:
        try:
            super().finish()
        finally:
            with self.server.connections_lock:
                self.server.connections.discard(self.connection)

    def do_GET(self) -> None:
        request = self._read()
        if request is None:
            return
        if request.path.startswith(PREFIX):
            self._control(request)
            return
        server, standin = self.server, self.server.standin
        number = standin._log.record(request, standin._now())
        limited = standin.limiter.admit(self.client_address[0])
        fault = None if limited is not None else standin._faults.take(request.method, request.path)
        try:
            if limited is not None:
                reply: Reply | None = limited
            elif fault is None:
                reply = standin.api.answer(request)
            else:
                standin._log.note(number, fault=fault.action)
                reply = faults.act(fault, request, lambda lag: standin.api.answer(request, lag), server.wait)
        except Exception:
            LOGGER.exception("the stand-in failed on %s %s", request.method, request.path)
            reply = error_reply(500, "Internal Server Error")
        if reply is None:
            LOGGER.info("%s %s dropped (%s)", request.method, request.path, fault and fault.action)
            self.close_connection = True
            return
        standin._log.note(number, status=reply.status)
        if not self._write(reply):
            standin._log.note(number, status=None)

    do_POST = do_PUT = do_PATCH = do_DELETE = do_GET  # noqa: N815 -- http.server dispatches on these names

    def _control(self, request: Incoming) -> None:
        """Only from 127.0.0.1, and only with the stand-in's secret."""
        if self.client_address[0] != lanes.HOST:
            self._write(error_reply(403, "Forbidden"))
            return
        given = request.headers.get(SECRET_HEADER.lower(), "")
        if not secrets.compare_digest(given.encode(), self.server.standin.control_secret.encode()):
            needs = f"the control API needs {SECRET_HEADER}: the control_secret the stand-in printed first"
            self._write(error_reply(403, "Forbidden", message=needs))
            return
        self._write(self.server.standin.control.answer(request))

    def _read(self) -> Incoming | None:
        """The whole request, or None when its framing is broken (answered 400, closed)."""
        headers = {name.lower(): value for name, value in self.headers.items()}
        try:
            if "chunked" in headers.get("transfer-encoding", "").lower():
                body = self._read_chunked()
            else:
                length = _content_length(headers.get("content-length", "0"))
                body = self.rfile.read(length)
                if len(body) < length:  # the client went away mid-body: nothing to answer
                    self.close_connection = True
                    return None
        except ValueError as error:
            self.close_connection = True
            self._write(error_reply(400, "Bad Request", message=str(error)))
            return None
        target = urlsplit(self.path)
        query = dict(parse_qsl(target.query, keep_blank_values=True))
        return Incoming(self.command, target.path, query, headers, body)

    def _read_chunked(self) -> bytes:
        body = b""
        while True:
            try:
                size = int(self.rfile.readline().split(b";")[0].strip(), 16)
            except ValueError:
                raise ValueError("a chunk's size is not a hexadecimal number") from None
            if size == 0:
                while self.rfile.readline().strip():
                    pass
                return body
            if len(body) + size > MAX_BODY_BYTES:
                raise _too_large("chunked")
            body += self.rfile.read(size)
            self.rfile.readline()

    def _write(self, reply: Reply) -> bool:
        """False when the client is gone."""
        try:
            self.send_response(reply.status)
            for name, value in reply.headers:
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(reply.body)))
            if self.close_connection:
                self.send_header("Connection", "close")
            self.end_headers()
            if not reply.trickle:
                self.wfile.write(reply.body)
            for at in range(len(reply.body) if reply.trickle else 0):  # each of the client's recvs is quick
                self.wfile.flush()
                if at and not self.server.wait(reply.trickle):
                    raise OSError("the stand-in stopped mid-trickle")
                self.wfile.write(reply.body[at:at + 1])
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
