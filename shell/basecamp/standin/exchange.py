"""The values of one HTTP exchange with the stand-in: the request as read, the reply to write.

Rules:
1. An ``Incoming`` request is read whole (headers and body) before anything acts on it, so a
   fault that drops the connection still sees, records and may act on the full request.
2. Header names are lower case; the query keeps the last value of a repeated parameter.
3. A ``Reply`` is a value: status, headers and body bytes. The writer adds
   ``Content-Length`` from the body, so every reply can share a keep-alive connection.
4. Basecamp's error bodies are JSON ``{"error": ...}``, except the missing-``User-Agent``
   400, which is ``text/plain`` with no JSON at all.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass, field
from typing import Any

JSON_TYPE = "application/json; charset=utf-8"

JsonObject = dict[str, Any]


@dataclass(frozen=True, slots=True)
class Incoming:
    """A request as the stand-in read it."""

    method: str
    path: str
    query: dict[str, str] = field(default_factory=dict)
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""


@dataclass(frozen=True, slots=True)
class Reply:
    """What the stand-in answers; ``Content-Length`` is added when it is written."""

    status: int
    headers: tuple[tuple[str, str], ...] = ()
    body: bytes = b""

    def header(self, name: str) -> str | None:
        """The value of header ``name`` (case-insensitive), or None."""
        wanted = name.lower()
        for key, value in self.headers:
            if key.lower() == wanted:
                return value
        return None

    def with_header(self, name: str, value: str) -> Reply:
        """This reply with header ``name`` set to ``value`` (replacing any earlier value)."""
        kept = tuple((key, old) for key, old in self.headers if key.lower() != name.lower())
        return Reply(self.status, (*kept, (name, value)), self.body)


def request_id_header() -> tuple[str, str]:
    """Basecamp answers every request with an ``X-Request-Id``."""
    return ("X-Request-Id", uuid.uuid4().hex)


def json_reply(status: int, value: object, headers: tuple[tuple[str, str], ...] = ()) -> Reply:
    """A JSON reply."""
    body = json.dumps(value, ensure_ascii=False).encode("utf-8")
    return Reply(status, (("Content-Type", JSON_TYPE), request_id_header(), *headers), body)


def error_reply(status: int, error: str, headers: tuple[tuple[str, str], ...] = (), **extra: object) -> Reply:
    """Basecamp's JSON error body: ``{"error": error, ...extra}``."""
    return json_reply(status, {"error": error, **extra}, headers)


def text_reply(status: int, text: str) -> Reply:
    """A plain-text reply (the missing ``User-Agent`` answer)."""
    headers = (("Content-Type", "text/plain; charset=utf-8"), request_id_header())
    return Reply(status, headers, text.encode("utf-8"))
