"""One request on the wire and its answer, read within bounds; nothing decides here.

Every exchange, a create's and a read's alike, has one ``Watchdog``: at its timeout it shuts the
socket in use, so no answer (its headers, a body trickled a byte at a time) outlives the deadline; a
read's is also shut once the ``Halt`` it is given stands (a stop during the start). A create goes on
a connection of its own, opened before the request is written: one that could not open is
``Refused``; anything after (a timeout, a lost connection, an answer too large) is ``Uncertain``.
A read goes through the pool; a kept-alive connection the server had closed fails before any answer
and is asked once more on a fresh one, within the same timeout. Nothing else is retried here and no
redirect is followed.

Every request goes over a connection bound to the configured origin and names only an absolute path
and query, so nothing can move it, and its token, to another host. No answer is read past
``MAX_ANSWER_BYTES``, counted as bytes come whatever length is declared; the rest is never read and
the connection not reused. A body is decoded by ``core.json_input`` alone (bounded depth and size).
The token is only ever in a request's header; logs carry method, path without query and status, and
urllib3's DEBUG line has every query redacted (a feed position is a credential)."""

from __future__ import annotations

import contextlib
import logging
import math
import re
import socket
import threading
import time
import weakref
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from http.client import HTTPException
from typing import Any
from urllib.parse import urlsplit

import urllib3
from urllib3.connection import HTTPConnection, HTTPSConnection

from core.json_input import json_or_none
from core.posting import PostOutcome, RefusalCause, Refused, Uncertain, UncertainCause
from shell.basecamp.errors import ListingFailed
from shell.clock import Clock

log = logging.getLogger("connector.basecamp")

MAX_ANSWER_BYTES = 8 * 1024 * 1024  # a page of Basecamp's is a few kB


class NoQueryStrings(logging.Filter):
    """urllib3's DEBUG request lines, with every query string redacted."""

    _QUERY = re.compile(r"\?[^\s\"']*")

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if "?" in message:
            record.msg, record.args = self._QUERY.sub("?<redacted>", message), ()
        return True


logging.getLogger("urllib3.connectionpool").addFilter(NoQueryStrings())


@dataclass(frozen=True, slots=True)
class Answer:
    """A status, headers (a read's: lower-cased names; a create's: urllib3's, any case) and the
    decoded JSON body (None for an empty or unreadable one)."""

    status: int
    headers: Mapping[str, str]
    body: Any


class AnswerTooLarge(Exception):
    pass


class Halt:
    """The stop a read gives way to: while ``during(event)`` stands, a read's exchange is shut and
    its waits (``pause``) end once ``event`` is set. A create never gives way: cut short, it would
    be a doubt."""

    SLICE = 0.05  # how often a wait looks for the stop

    def __init__(self, clock: Clock) -> None:
        self._clock = clock
        self._event: threading.Event | None = None

    @contextlib.contextmanager
    def during(self, event: threading.Event) -> Iterator[None]:
        self._event = event
        try:
            yield
        finally:
            self._event = None

    def is_set(self) -> bool:
        event = self._event
        return event is not None and event.is_set()

    def pause(self, seconds: float) -> bool:
        """Sleep ``seconds`` on the clock; False, sooner, once the stop stands."""
        ends = self._clock.monotonic() + seconds
        while (left := ends - self._clock.monotonic()) > 0:
            if self.is_set():
                return False
            self._clock.sleep(left if self._event is None else min(self.SLICE, left))
        return not self.is_set()


class Watchdog:
    """One exchange's bound, on real time (the socket's): at ``timeout``, or once ``halt`` stands,
    the connection it watches is shut -- unless a later exchange has taken that connection since."""

    def __init__(self, timeout: float, halt: Halt | None = None) -> None:
        self._ends = time.monotonic() + timeout
        self._halt = halt
        self._done = threading.Event()
        self._connection: HTTPConnection | None = None
        self.fired = False
        threading.Thread(target=self._watch, name="watchdog", daemon=True).start()

    def watch(self, connection: HTTPConnection) -> None:
        with _WATCHED_LOCK:
            _WATCHED[connection] = self
            self._connection = connection
            if self.fired:
                _shut(connection)

    def disarm(self) -> bool:
        """Whether it had fired."""
        with _WATCHED_LOCK:
            self._done.set()
            return self.fired

    def why(self) -> str:
        stopped = self._halt is not None and self._halt.is_set()
        return "the read was stopped" if stopped else "no whole answer before the deadline"

    def _watch(self) -> None:
        slice_ = Halt.SLICE if self._halt is not None else math.inf
        while not self._done.wait(min(slice_, max(0.0, self._ends - time.monotonic()))):
            if time.monotonic() < self._ends and not (self._halt is not None and self._halt.is_set()):
                continue
            with _WATCHED_LOCK:
                if self._done.is_set():
                    return
                self.fired = True
                if self._connection is not None and _WATCHED.get(self._connection) is self:
                    _shut(self._connection)
            return


_WATCHED: weakref.WeakKeyDictionary[HTTPConnection, Watchdog] = weakref.WeakKeyDictionary()  # by whom
_WATCHED_LOCK = threading.Lock()
_exchange = threading.local()  # the Watchdog of the read this thread makes through the pool


class _Watched:
    """A pooled connection that puts itself under the current read's ``Watchdog`` as it is used."""

    def connect(self) -> None:
        _watched(self)
        super().connect()  # type: ignore[misc]

    def request(self, *args: Any, **kwargs: Any) -> None:
        _watched(self)
        super().request(*args, **kwargs)  # type: ignore[misc]


class _WatchedHTTP(_Watched, HTTPConnection):
    pass


class _WatchedHTTPS(_Watched, HTTPSConnection):
    pass


def _watched(connection: object) -> None:
    watchdog = getattr(_exchange, "watchdog", None)
    if watchdog is not None and isinstance(connection, HTTPConnection):
        watchdog.watch(connection)


class Wire:
    def __init__(self, origin: str, user_agent: str, clock: Clock, halt: Halt | None = None) -> None:
        self._origin = origin
        self._user_agent = user_agent
        self._clock = clock
        self._halt = halt
        self._pool = urllib3.connection_from_url(origin, maxsize=4, retries=False)
        https = isinstance(self._pool, urllib3.HTTPSConnectionPool)
        self._pool.ConnectionCls = _WatchedHTTPS if https else _WatchedHTTP
        self._answers: Counter[int] = Counter()  # every answer's status, for the metrics
        self._answers_lock = threading.Lock()

    def answers(self) -> dict[int, int]:
        with self._answers_lock:
            return dict(self._answers)

    def _answered(self, status: int) -> None:
        with self._answers_lock:
            self._answers[status] += 1

    def create_once(self, path: str, payload: bytes, timeout: float, token: str) -> Answer | PostOutcome:
        """One POST on a connection of its own: its answer, or where it failed."""
        parts = urlsplit(self._origin)
        connection_class = HTTPSConnection if parts.scheme == "https" else HTTPConnection
        connection = connection_class(parts.hostname or "", parts.port, timeout=timeout)
        try:
            try:
                connection.connect()
            except (OSError, urllib3.exceptions.HTTPError) as error:
                return Refused(RefusalCause.not_connected, None, f"could not connect: {type(error).__name__}")
            watchdog = Watchdog(timeout)
            watchdog.watch(connection)
            try:
                headers = self.headers(token) | {"Content-Type": "application/json; charset=utf-8"}
                connection.request("POST", path, body=payload, headers=headers, preload_content=False)
                response = connection.getresponse()
                self._answered(response.status)
                raw = bounded_body(response)
            except (TimeoutError, urllib3.exceptions.TimeoutError) as error:
                return Uncertain(UncertainCause.timeout, None, f"no answer in time: {type(error).__name__}")
            except AnswerTooLarge as error:
                return Uncertain(UncertainCause.connection_lost, None, f"the answer was not read: {error}")
            except (OSError, HTTPException, urllib3.exceptions.HTTPError) as error:
                if watchdog.fired:
                    return Uncertain(UncertainCause.timeout, None, "no whole answer before the deadline")
                lost = f"connection lost: {type(error).__name__}"
                return Uncertain(UncertainCause.connection_lost, None, lost)
            finally:
                watchdog.disarm()
        finally:
            connection.close()
        return Answer(response.status, response.headers, decode(raw))

    def post_pooled(self, path: str, timeout: float, token: str) -> Answer:
        """One POST that creates nothing (a stream ticket), through the pool, never asked again; or
        ``ListingFailed``."""
        try:
            return self._read_once("POST", path, timeout, token)
        except _ClosedBeforeAnswer as error:
            raise ListingFailed(f"POST {urlsplit(path).path} failed: {error}") from None

    def get_once(self, target: str, timeout: float, token: str) -> Answer:
        """One GET of ``target`` (a path and query) on the origin, or ``ListingFailed``."""
        path = urlsplit(_target(target)).path
        started = self._clock.monotonic()
        for fresh in (False, True):
            left = timeout - (self._clock.monotonic() - started)
            if left <= 0:
                raise ListingFailed(f"GET {path} failed: the connection closed, and no time was left")
            try:
                return self._read_once("GET", target, left, token)
            except _ClosedBeforeAnswer as error:
                log.info("GET %s -> %s (the connection closed before an answer)", path, error)
                if fresh:
                    raise ListingFailed(f"GET {path} failed: the connection closed, twice") from None
        raise AssertionError("unreachable")

    def _read_once(self, method: str, target: str, timeout: float, token: str) -> Answer:
        """One exchange through the pool, the whole of it within ``timeout`` (its ``Watchdog``)."""
        path = urlsplit(_target(target)).path
        if self._halt is not None and self._halt.is_set():
            raise ListingFailed(f"{method} {path} not sent: the read was stopped")
        watchdog = Watchdog(timeout, self._halt)
        _exchange.watchdog = watchdog
        try:
            try:
                response = self._pool.request(method, _target(target), headers=self.headers(token),
                                              timeout=urllib3.Timeout(total=timeout), retries=False,
                                              redirect=False, preload_content=False)  # read within the bound
            except urllib3.exceptions.ProtocolError as error:
                if not watchdog.disarm():
                    raise _ClosedBeforeAnswer(type(error).__name__) from None
                raise ListingFailed(f"{method} {path} failed: {watchdog.why()}") from None
            except (urllib3.exceptions.HTTPError, OSError) as error:
                why = watchdog.why() if watchdog.disarm() else type(error).__name__
                log.info("%s %s -> %s", method, path, why)
                raise ListingFailed(f"{method} {path} failed: {why}") from None
            log.info("%s %s -> %d", method, path, response.status)
            self._answered(response.status)
            headers = {key.lower(): value for key, value in response.headers.items()}
            try:
                raw = bounded_body(response)
            except AnswerTooLarge as error:
                raise ListingFailed(f"{method} {path} failed: {error}") from None
            except (urllib3.exceptions.HTTPError, OSError) as error:
                why = watchdog.why() if watchdog.disarm() else type(error).__name__
                raise ListingFailed(f"{method} {path} failed reading the answer: {why}") from None
        finally:
            watchdog.disarm()
            _exchange.watchdog = None
        return Answer(response.status, headers, decode(raw))

    def headers(self, token: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {token}", "User-Agent": self._user_agent,
                "Accept": "application/json"}


class _ClosedBeforeAnswer(Exception):
    """A pooled connection the server had closed failed before any answer."""


def exchange_once(method: str, url: str, body: bytes | None, headers: Mapping[str, str],
                  timeout: float) -> tuple[int, bytes]:
    """One request to ``url`` (Launchpad's) on a connection of its own, the whole of it within
    ``timeout``: its status and body, or what urllib3 raises (``TimeoutError`` once shut)."""
    parts = urlsplit(url)
    connection_class = HTTPSConnection if parts.scheme == "https" else HTTPConnection
    connection = connection_class(parts.hostname or "", parts.port, timeout=timeout)
    watchdog = Watchdog(timeout)
    watchdog.watch(connection)  # before it connects: a TLS handshake is within the bound too
    try:
        connection.request(method, parts.path + (f"?{parts.query}" if parts.query else ""), body=body,
                           headers=dict(headers), preload_content=False)
        response = connection.getresponse()
        return response.status, bounded_body(response)
    except (OSError, HTTPException, urllib3.exceptions.HTTPError):
        if watchdog.disarm():
            raise TimeoutError("no whole answer before the deadline") from None
        raise
    finally:
        watchdog.disarm()
        connection.close()


def _shut(connection: HTTPConnection) -> None:
    sock = connection.sock
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)


def bounded_body(response: urllib3.BaseHTTPResponse) -> bytes:
    try:
        chunks: list[bytes] = []
        size = 0
        while chunk := response.read(64 * 1024):
            size += len(chunk)
            if size > MAX_ANSWER_BYTES:
                raise AnswerTooLarge(f"the answer is larger than {MAX_ANSWER_BYTES} bytes")
            chunks.append(chunk)
        response.release_conn()
        return b"".join(chunks)
    except BaseException:
        response.close()  # the rest is never read: the connection is not reused
        raise


def _target(target: str) -> str:
    if not target.startswith("/") or target.startswith("//"):
        raise ListingFailed("a request target that is not a path on the configured origin is not sent")
    return target


def decode(raw: bytes) -> Any:
    return json_or_none(raw)
