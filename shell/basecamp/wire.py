"""One request on the wire and its answer, read within bounds; nothing decides here.

A create goes on a connection of its own, opened before the request is written: one that could not
open is ``Refused``; anything after (a timeout, a lost connection, an answer too large) is
``Uncertain``. At the deadline a watchdog shuts the socket, so a trickling answer cannot outlive it.
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
import re
import socket
import threading
from collections.abc import Mapping
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


class Wire:
    def __init__(self, origin: str, user_agent: str, clock: Clock) -> None:
        self._origin = origin
        self._user_agent = user_agent
        self._clock = clock
        self._pool = urllib3.connection_from_url(origin, maxsize=4, retries=False)

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
            expired = threading.Event()
            watchdog = threading.Timer(timeout, _shut, (connection, expired))
            watchdog.start()
            try:
                headers = self.headers(token) | {"Content-Type": "application/json; charset=utf-8"}
                connection.request("POST", path, body=payload, headers=headers, preload_content=False)
                response = connection.getresponse()
                raw = bounded_body(response)
            except (TimeoutError, urllib3.exceptions.TimeoutError) as error:
                return Uncertain(UncertainCause.timeout, None, f"no answer in time: {type(error).__name__}")
            except AnswerTooLarge as error:
                return Uncertain(UncertainCause.connection_lost, None, f"the answer was not read: {error}")
            except (OSError, HTTPException, urllib3.exceptions.HTTPError) as error:
                if expired.is_set():
                    return Uncertain(UncertainCause.timeout, None, "no whole answer before the deadline")
                lost = f"connection lost: {type(error).__name__}"
                return Uncertain(UncertainCause.connection_lost, None, lost)
            finally:
                watchdog.cancel()
        finally:
            connection.close()
        return Answer(response.status, response.headers, decode(raw))

    def post_pooled(self, path: str, timeout: float, token: str) -> urllib3.BaseHTTPResponse:
        """One POST that creates nothing (a stream ticket), through the pool; the rest is the caller's."""
        return self._pooled("POST", path, timeout, token)

    def _pooled(self, method: str, target: str, timeout: float, token: str) -> urllib3.BaseHTTPResponse:
        return self._pool.request(method, _target(target), headers=self.headers(token),
                                  timeout=urllib3.Timeout(total=timeout), retries=False, redirect=False,
                                  preload_content=False)  # read within the bound: bounded_body

    def get_once(self, target: str, timeout: float, token: str) -> Answer:
        """One GET of ``target`` (a path and query) on the origin, or ``ListingFailed``."""
        path = urlsplit(_target(target)).path
        started = self._clock.monotonic()
        for fresh in (False, True):
            left = timeout - (self._clock.monotonic() - started)
            if left <= 0:
                raise ListingFailed(f"GET {path} failed: the connection closed, and no time was left")
            try:
                response = self._pooled("GET", target, left, token)
                break
            except urllib3.exceptions.ProtocolError as error:
                log.info("GET %s -> %s (the connection closed before an answer)", path, type(error).__name__)
                if fresh:
                    raise ListingFailed(f"GET {path} failed: the connection closed, twice") from None
            except (urllib3.exceptions.HTTPError, OSError) as error:
                log.info("GET %s -> %s", path, type(error).__name__)
                raise ListingFailed(f"GET {path} failed: {type(error).__name__}") from None
        log.info("GET %s -> %d", path, response.status)
        headers = {key.lower(): value for key, value in response.headers.items()}
        try:
            raw = bounded_body(response)
        except AnswerTooLarge as error:
            raise ListingFailed(f"GET {path} failed: {error}") from None
        except (urllib3.exceptions.HTTPError, OSError) as error:
            raise ListingFailed(f"GET {path} failed reading the answer: {type(error).__name__}") from None
        return Answer(response.status, headers, decode(raw))

    def headers(self, token: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {token}", "User-Agent": self._user_agent,
                "Accept": "application/json"}


def _shut(connection: HTTPConnection, expired: threading.Event) -> None:
    expired.set()
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
