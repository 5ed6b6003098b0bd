"""The record of every request that reached the stand-in, whatever its fate.

Rules:
1. A request is recorded as soon as it is read, before any fault acts on it: a POST whose
   connection is dropped still counts.
2. The ``Authorization`` header's value is never kept: it reads ``REDACTED``; nor is a secret
   or a code a form body or a query carries (``SECRET_FIELDS``: Launchpad's ``client_secret``,
   ``code``, ``refresh_token``, ``device_code`` ...): each value reads ``REDACTED`` too.
3. ``status`` is what was answered, set just before the answer is written (so a client that
   has its answer finds it recorded); it stays None when the connection was dropped or the
   answer could not be written. ``fault`` is the action applied, or None.
4. Requests to the stand-in's own control API (``/__standin/``) are not recorded.
"""

from __future__ import annotations

import dataclasses
import threading
from dataclasses import dataclass
from datetime import datetime
from urllib.parse import parse_qsl, urlencode

from shell.basecamp.standin.exchange import Incoming
from shell.basecamp.standin.faults import FaultAction

REDACTED = "REDACTED"
SECRET_FIELDS = frozenset(
    {"client_secret", "code", "refresh_token", "device_code", "access_token", "code_verifier", "password"}
)


def _redacted_query(query: dict[str, str]) -> dict[str, str]:
    return {name: REDACTED if name in SECRET_FIELDS else value for name, value in query.items()}


def _redacted_body(body: bytes) -> bytes:
    """A form body with its secrets' values replaced; any other body as it is (rule 2)."""
    try:
        pairs = parse_qsl(body.decode("utf-8"), keep_blank_values=True)
    except (UnicodeDecodeError, ValueError):
        return body
    if not any(name in SECRET_FIELDS for name, _ in pairs):
        return body
    return urlencode([(name, REDACTED if name in SECRET_FIELDS else value) for name, value in pairs]).encode()


@dataclass(frozen=True, slots=True)
class RecordedRequest:
    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    body: bytes
    status: int | None
    fault: FaultAction | None
    at: datetime

    def to_json(self) -> dict[str, object]:
        return {
            "method": self.method,
            "path": self.path,
            "query": self.query,
            "headers": self.headers,
            "body": self.body.decode("utf-8", errors="replace"),
            "status": self.status,
            "fault": self.fault,
            "at": self.at.isoformat(),
        }


class RequestLog:
    """Every recorded request, in arrival order; safe from any thread."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._requests: list[RecordedRequest] = []

    def record(self, request: Incoming, at: datetime) -> int:
        """Record ``request``; the number returned names it for the ``note_*`` methods."""
        headers = {
            name: REDACTED if name == "authorization" else value for name, value in request.headers.items()
        }
        recorded = RecordedRequest(
            request.method, request.path, _redacted_query(request.query), headers,
            _redacted_body(request.body), None, None, at,
        )  # fmt: skip
        with self._lock:
            self._requests.append(recorded)
            return len(self._requests) - 1

    def note_fault(self, number: int, fault: FaultAction) -> None:
        """Set the fault applied to the recorded request ``number``."""
        with self._lock:
            self._requests[number] = dataclasses.replace(self._requests[number], fault=fault)

    def note_status(self, number: int, status: int | None) -> None:
        """Set what the recorded request ``number`` was answered (None: nothing)."""
        with self._lock:
            self._requests[number] = dataclasses.replace(self._requests[number], status=status)

    def requests(self) -> list[RecordedRequest]:
        with self._lock:
            return list(self._requests)

    def count(self, method: str, path_contains: str | None = None) -> int:
        with self._lock:
            return sum(
                1
                for request in self._requests
                if request.method == method and (path_contains is None or path_contains in request.path)
            )
