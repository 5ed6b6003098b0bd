"""The demo's line to the stand-in: its control API, and Basecamp reads as the agent.

Rules:
1. Everything goes over HTTP to the stand-in's base URL, whether the demo started it or was
   handed one (``--standin``): the test that hands it one runs the code a person runs.
2. The control API (``/__standin/``, each request carrying ``X-Standin-Secret``) seeds what
   people say (not recorded as a request, so the record of POSTs holds only the agent side's),
   scripts faults and reads the request record. Basecamp reads go with the agent's token and
   are recorded like any request.
3. Every Basecamp read goes through ``BasecampClient.read`` with a pacer of its own
   (``READS_PER_WINDOW``, leaving the address's limit to the connector and its workers); a read
   still answered 429 or 503 after the client's retries is asked again until
   ``READ_DEADLINE_SECONDS``.
4. Any failure to talk to the stand-in is a ``StandInUnreachable``, one line, no token in it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import urllib3

from core.destinations import MessageKind
from shell.basecamp.client import BasecampClient
from shell.basecamp.errors import BasecampError
from shell.basecamp.standin.control import SECRET_HEADER
from shell.demo.verdict import Place, RecordedPost

USER_AGENT = "basecamp-connector demo (https://github.com/basecamp/basecamp-connector)"
TIMEOUT_SECONDS = 10.0
READS_PER_WINDOW = 10
READ_DEADLINE_SECONDS = 60.0
THROTTLED = (429, 503)


class StandInUnreachable(Exception):
    """The stand-in did not answer as it should."""


@dataclass(frozen=True, slots=True)
class Said:
    """One message a place holds: who wrote it, and its content as stored."""

    id: int
    author: str
    content: str


class StandInLink:
    def __init__(self, base_url: str, account_id: int, agent_token: str, control_secret: str) -> None:
        self.base_url = base_url.rstrip("/")
        self.account_id = account_id
        self._secret = control_secret
        self._pool = urllib3.PoolManager(retries=False, timeout=TIMEOUT_SECONDS)
        self._basecamp_client = BasecampClient(
            self.base_url, account_id, agent_token, USER_AGENT,
            read_timeout=TIMEOUT_SECONDS, requests_per_window=READS_PER_WINDOW,
        )  # fmt: skip

    # -- the control API ------------------------------------------------------------------------

    def seed(self, kind: MessageKind, recording_id: int, creator_id: int, content: str) -> int:
        """A person says ``content`` at ``recording_id`` (their comment or line); its id."""
        answer = self._control(
            "POST",
            "messages",
            {"kind": kind.value, "recording_id": recording_id, "creator_id": creator_id, "content": content},
        )
        return int(answer["id"])

    def add_fault(self, fault: dict[str, Any]) -> None:
        self._control("POST", "faults", fault)

    def requests(self) -> list[dict[str, Any]]:
        """Every request the stand-in recorded, in arrival order."""
        found = self._control("GET", "requests")
        if not isinstance(found, list):
            raise StandInUnreachable("the stand-in's record of requests is not a list")
        return found

    def posts(self, after: int = 0) -> list[RecordedPost]:
        """The POSTs among the recorded requests from number ``after`` on."""
        return [
            RecordedPost(str(item["path"]), str(item["body"]), item.get("status"), item.get("fault"))
            for item in self.requests()[after:]
            if item.get("method") == "POST"
        ]

    # -- Basecamp, as the agent -------------------------------------------------------------------

    def card_title(self, card_id: int) -> str:
        found = self._basecamp(f"card_tables/cards/{card_id}.json")
        return str(found.get("title", "")) if isinstance(found, dict) else ""

    def messages(self, place: Place) -> list[Said]:
        """What ``place`` holds, oldest first (one page is all a demo place ever holds)."""
        match place.kind:
            case MessageKind.boost:
                path, who = f"recordings/{place.recording_id}/boosts.json", "booster"
            case MessageKind.comment:
                path, who = f"recordings/{place.recording_id}/comments.json", "creator"
            case MessageKind.chat_line:
                path, who = f"chats/{place.recording_id}/lines.json", "creator"
        found = self._basecamp(path)
        if not isinstance(found, list):
            raise StandInUnreachable(f"listing {place.describe()} answered no list")
        return [
            Said(int(item["id"]), str(item.get(who, {}).get("name", "?")), str(item.get("content", "")))
            for item in found
        ]

    # -- the wire ---------------------------------------------------------------------------------

    def _control(self, method: str, name: str, body: dict[str, Any] | None = None) -> Any:
        payload = None if body is None else json.dumps(body).encode()
        secret = {SECRET_HEADER: self._secret}
        return self._request(method, f"{self.base_url}/__standin/{name}", payload, secret)

    def _basecamp(self, path: str) -> Any:
        """Rule 3: a paced read, asked again while Basecamp says to wait, within the deadline."""
        client = self._basecamp_client
        deadline = client.deadline_in(READ_DEADLINE_SECONDS)
        try:
            answer = client.read(f"{client.account_url}/{path}", deadline)
            while answer.status in THROTTLED:
                answer = client.read(f"{client.account_url}/{path}", deadline)
        except BasecampError as error:
            raise StandInUnreachable(f"the stand-in did not answer GET /{path}: {error}") from None
        if not 200 <= answer.status < 300:
            raise StandInUnreachable(
                f"the stand-in answered GET /{self.account_id}/{path} with HTTP {answer.status}"
            )
        return answer.body

    def _request(self, method: str, url: str, payload: bytes | None, headers: dict[str, str]) -> Any:
        headers = {"User-Agent": USER_AGENT, "Content-Type": "application/json", **headers}
        try:
            response = self._pool.request(method, url, body=payload, headers=headers, redirect=False)
        except (urllib3.exceptions.HTTPError, OSError) as error:
            raise StandInUnreachable(f"the stand-in at {self.base_url} did not answer: {error}") from None
        if not 200 <= response.status < 300:
            path = url.removeprefix(self.base_url)
            raise StandInUnreachable(f"the stand-in answered {method} {path} with HTTP {response.status}")
        try:
            return json.loads(response.data) if response.data else None
        except ValueError:
            raise StandInUnreachable("the stand-in answered with something other than JSON") from None
