"""Fixtures for the stand-in's tests: a running stand-in, and a plain HTTP client for it.

The client is ``http.client``, not the project's Basecamp client: these tests pin what the
stand-in does on the wire, independently of the code it exists to test.
"""

from __future__ import annotations

import http.client
import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from shell.basecamp.standin.control import SECRET_HEADER
from shell.basecamp.standin.server import StandIn

USER_AGENT = "StandInTests (tests@example.com)"


@dataclass(frozen=True)
class Answer:
    status: int
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


class Client:
    """Requests to one stand-in as one person; a new connection for each request."""

    def __init__(self, standin: StandIn, token: str | None = None) -> None:
        self.standin = standin
        self.token = standin.world.token if token is None else token

    def path(self, path: str) -> str:
        """``path`` under the account, unless it already starts with ``/``."""
        return path if path.startswith("/") else f"/{self.standin.world.account_id}/{path}"

    def headers(self, overrides: dict[str, str | None] | None = None) -> dict[str, str]:
        """The usual headers, with ``overrides`` (a None value leaves that header out)."""
        headers: dict[str, str | None] = {
            "User-Agent": USER_AGENT,
            "Authorization": f"Bearer {self.token}",
            SECRET_HEADER: self.standin.control_secret,  # the control API's; Basecamp's routes ignore it
            **(overrides or {}),
        }
        return {name: value for name, value in headers.items() if value is not None}

    def request(self, method: str, path: str, body: bytes | None, headers: dict[str, str]) -> Answer:
        connection = http.client.HTTPConnection("127.0.0.1", self.standin.port, timeout=5)
        try:
            connection.request(method, self.path(path), body, headers)
            response = connection.getresponse()
            return Answer(
                response.status,
                {name.lower(): value for name, value in response.getheaders()},
                response.read(),
            )
        finally:
            connection.close()

    def get(self, path: str, headers: dict[str, str | None] | None = None) -> Answer:
        return self.request("GET", path, None, self.headers(headers))

    def post(
        self,
        path: str,
        value: object = None,
        *,
        body: bytes | None = None,
        headers: dict[str, str | None] | None = None,
    ) -> Answer:
        """POST ``value`` as JSON (or ``body`` as it is)."""
        payload = body if body is not None else json.dumps(value).encode()
        json_type: dict[str, str | None] = {"Content-Type": "application/json; charset=utf-8"}
        return self.request("POST", path, payload, self.headers({**json_type, **(headers or {})}))


@pytest.fixture
def standin() -> Iterator[StandIn]:
    """The empty world with small pages, so pagination shows with a handful of messages."""
    with StandIn(world="empty", page_sizes=(2, 2, 2, 2)) as running:
        yield running


@pytest.fixture
def demo() -> Iterator[StandIn]:
    with StandIn(world="demo", page_sizes=(2, 3, 4, 5)) as running:
        yield running


@pytest.fixture
def connect() -> type[Client]:
    """``connect(standin, token=None)``: a client of any stand-in, as any person."""
    return Client


@pytest.fixture
def client(standin: StandIn) -> Client:
    return Client(standin)


@pytest.fixture
def demo_client(demo: StandIn) -> Client:
    return Client(demo)
