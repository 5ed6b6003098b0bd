"""One request on the wire and its answer, read within bounds; nothing decides here.

Rules:
1. A create goes on a connection of its own, opened before the request is written: one that
   could not open is ``Refused``; anything after (a timeout, a lost connection, an answer too
   large) is ``Uncertain``. At the deadline a watchdog shuts the socket, so a trickling answer
   cannot outlive it. Never retried here.
2. A read goes through the pool; a kept-alive connection the server had closed fails before any
   answer (``ProtocolError``) and is asked once more on a fresh one, within the same timeout.
   Nothing else is retried here (``shell.basecamp.client``, ``core.pacing``).
3. No answer is read past ``MAX_ANSWER_BYTES``, counted as bytes come whatever length is
   declared; the rest is never read and the connection not reused.
4. The token is only ever in a request's header. Logs carry method, path without query and
   status; urllib3's DEBUG line has every query redacted (a feed position is a credential). No
   redirect is followed.
5. Every request goes over a connection bound to the configured origin and names only a path and
   query (``core.links.request_target``): nothing can move it, and its token, to another host. A
   target that is not an absolute path is refused unsent.
6. A body is decoded by ``core.json_input.decode`` alone (bounded depth and size)."""

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

MAX_ANSWER_BYTES = 8 * 1024 * 1024
"""The most of one answer the client reads (rule 3): a page of Basecamp's is a few kB."""


class NoQueryStrings(logging.Filter):
    """urllib3 logs each request line at DEBUG, query and all, and a feed position is a credential:
    its records leave with every query string redacted."""

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
    """An answer longer than ``MAX_ANSWER_BYTES`` (rule 3); its connection is closed unread."""


class Wire:
    """Requests to one Basecamp origin, each made once, as one user agent."""

    def __init__(self, origin: str, user_agent: str, clock: Clock) -> None:
        self._origin = origin
        self._user_agent = user_agent
        self._clock = clock
        self._pool = urllib3.connection_from_url(origin, maxsize=4, retries=False)  # rule 5

    def create_once(self, path: str, payload: bytes, timeout: float, token: str) -> Answer | PostOutcome:
        """One POST on a connection of its own (rule 1): its answer, or where it failed."""
        parts = urlsplit(self._origin)
        connection_class = HTTPSConnection if parts.scheme == "https" else HTTPConnection
        connection = connection_class(parts.hostname or "", parts.port, timeout=timeout)
        try:
            try:
                connection.connect()
            except (OSError, urllib3.exceptions.HTTPError) as error:
                return Refused(RefusalCause.not_connected, None, f"could not connect: {type(error).__name__}")
            # The socket timeout bounds each read, not the exchange: a trickling answer could
            # outlive the deadline. At the deadline the socket is shut, and the wait ends.
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
                return Uncertain(
                    UncertainCause.connection_lost, None, f"connection lost: {type(error).__name__}"
                )
            finally:
                watchdog.cancel()
        finally:
            connection.close()
        return Answer(response.status, response.headers, decode(raw))

    def post_pooled(self, path: str, timeout: float, token: str) -> urllib3.BaseHTTPResponse:
        """One POST that creates nothing (a stream ticket), through the pool; its body is the
        caller's to read (``bounded_body``), urllib3's errors and ``OSError`` its to turn into its own."""
        return self._pool.request(
            "POST",
            _target(path),
            headers=self.headers(token),
            timeout=urllib3.Timeout(total=timeout),
            retries=False,
            redirect=False,
            preload_content=False,  # read by the caller within the bound (rule 3)
        )

    def get_once(self, target: str, timeout: float, token: str) -> Answer:
        """One GET of ``target`` (a path and query, rule 5) on the origin (rule 2), or ``ListingFailed``."""
        path = urlsplit(_target(target)).path
        started = self._clock.monotonic()
        for fresh in (False, True):
            left = timeout - (self._clock.monotonic() - started)
            if left <= 0:
                raise ListingFailed(f"GET {path} failed: the connection closed, and no time was left")
            try:
                response = self._pool.request(
                    "GET",
                    target,
                    headers=self.headers(token),
                    timeout=urllib3.Timeout(total=left),
                    retries=False,
                    redirect=False,
                    preload_content=False,
                )
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
        return {
            "Authorization": f"Bearer {token}",
            "User-Agent": self._user_agent,
            "Accept": "application/json",
        }


def _shut(connection: HTTPConnection, expired: threading.Event) -> None:
    """The deadline passed mid-exchange: end the wait by shutting the socket."""
    expired.set()
    sock = connection.sock
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)


def bounded_body(response: urllib3.BaseHTTPResponse) -> bytes:
    """The answer's body, at most ``MAX_ANSWER_BYTES`` of it, or ``AnswerTooLarge`` (rule 3)."""
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
    """Rule 5: only an absolute path (and its query) is ever written on the origin's connection."""
    if not target.startswith("/") or target.startswith("//"):
        raise ListingFailed("a request target that is not a path on the configured origin is not sent")
    return target


def decode(raw: bytes) -> Any:
    """A body's JSON (rule 6), or None for an empty or unreadable one."""
    return json_or_none(raw)
