"""The stand-in's own control API under ``/__standin/``, for a second process or terminal (the README's
table "The stand-in's control API").

It asks for no Basecamp token but for the stand-in's secret in ``X-Standin-Secret`` (the handler checks it,
in one place), or answers 403 and does nothing: 127.0.0.1 is every local user's, and the secret keeps
another user of a shared machine from seeding a mention "from the operator" or minting tokens. A bad body --
not UTF-8 JSON, holding NaN or Infinity (or ``1e400``), nested more than ``MAX_DEPTH`` deep, or a number out
of bounds -- is a 400 ``{"error", "message"}`` that changes nothing, never a dropped connection.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import math
import re
from collections.abc import Callable
from datetime import datetime
from typing import Any

from core.ids import MAX_ID
from shell.basecamp.standin import faults
from shell.basecamp.standin.api import BasecampApi, Incoming, Reply, error_reply, json_reply
from shell.basecamp.standin.lanes import LiveStream
from shell.basecamp.standin.world import Kind

PREFIX = "/__standin/"
SECRET_HEADER = "X-Standin-Secret"  # noqa: S105 -- the header's name, not a secret
MAX_DEPTH = 32
MAX_TOKEN_LIFETIME_SECONDS = 10 * 365 * 86_400  # later is past what a date can hold
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"?', re.DOTALL)  # to its closing quote, or to the end
_MESSAGE_SHAPE = '{"kind", "recording_id", "creator_id", "content": "...", "created_at"?}'
_MENTION_SHAPE = '{"recording_id": CARD_ID, "text": "...", "creator_id"?: PERSON_ID}'
_CARD_SHAPE = '{"project_id", "title": "...", "creator_id", "content"?: "..."}'


def _no_constant(name: str) -> object:
    raise ValueError(f"the body holds {name}, which is not a number JSON allows")


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"the body holds {text}, a number too large to be finite")
    return value


def read_json(body: bytes) -> object:
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError("the body is not UTF-8") from None
    if _depth(text) > MAX_DEPTH:
        raise ValueError(f"the body is nested more than {MAX_DEPTH} deep")
    try:
        return json.loads(text, parse_constant=_no_constant, parse_float=_finite)
    except json.JSONDecodeError as error:
        where = f"line {error.lineno} column {error.colno}"
        raise ValueError(f"the body is not JSON: {error.msg} at {where}") from None


def _depth(text: str) -> int:
    """How deep brackets nest outside strings (read before ``json`` recurses into them)."""
    outside = _STRING.sub("", text)
    return max(itertools.accumulate(((mark in "[{") - (mark in "]}") for mark in outside), initial=0))


class Control:
    def __init__(self, api: BasecampApi, book: faults.FaultBook, log: faults.RequestLog,
                 limiter: faults.Limiter, live: LiveStream) -> None:
        self._api = api
        self._live = live
        self._faults = book
        self._log = log
        self._limiter = limiter
        self._books: dict[str, tuple[faults.Book[Any], Callable[[object], Any]]] = {
            "faults": (book, faults.fault_from_json),
            "live/faults": (live.faults, faults.live_fault_from_json)}

    def answer(self, request: Incoming) -> Reply:
        route, live = (request.method, request.path.removeprefix(PREFIX).strip("/")), self._live
        try:
            match route:
                case ("POST", "faults" | "live/faults" as name):
                    book, parse = self._books[name]
                    fault = parse(read_json(request.body))
                    book.add(fault)
                    return json_reply(201, dataclasses.asdict(fault))
                case ("GET", "faults" | "live/faults" as name):
                    return json_reply(200, list(map(dataclasses.asdict, self._books[name][0].pending())))
                case ("DELETE", "faults"):
                    return json_reply(200, {"removed": self._faults.clear()})
                case ("GET", "requests"):
                    return json_reply(200, [recorded.to_json() for recorded in self._log.requests()])
                case ("POST", "messages"):
                    return json_reply(201, {"id": self._seed(read_json(request.body))})
                case ("POST", "mentions"):
                    return json_reply(201, self._mention(read_json(request.body)))
                case ("POST", "cards"):
                    return json_reply(201, self._card(read_json(request.body)))
                case ("GET" | "PUT" as method, "rate-limit"):
                    if method == "PUT":
                        self._limiter.set_limit(_limit_from_json(read_json(request.body)))
                    limit = self._limiter.limit
                    return json_reply(200, {"requests": limit.requests, "window": limit.window})
                case ("POST", "live/drop"):
                    return json_reply(200, {"dropped": live.drop_all()})
                case ("GET", "live"):
                    shown = {"connections": live.connections(), "tickets_minted": live.tickets.minted}
                    return json_reply(200, shown)
                case ("POST", "launchpad"):
                    return json_reply(200, self._launchpad(read_json(request.body)))
                case ("POST", "launchpad/expire"):
                    self._api.launchpad.expire_all()
                    return json_reply(200, {"expired": True})
        except (ValueError, TypeError, KeyError, OverflowError) as error:
            return error_reply(400, "Bad Request", message=str(error))
        return error_reply(404, "Not Found")

    def _launchpad(self, value: object) -> dict[str, int | bool]:
        if not isinstance(value, dict):
            raise TypeError("the settings are a JSON object")
        launchpad = self._api.launchpad
        if "token_lifetime" in value:
            launchpad.token_lifetime = faults.whole(value["token_lifetime"], "token_lifetime (seconds)",
                                                    low=1, high=MAX_TOKEN_LIFETIME_SECONDS)
        if "device_flow" in value:
            if not isinstance(value["device_flow"], bool):
                raise ValueError("device_flow is true or false")
            launchpad.device_flow = value["device_flow"]
        if "consenting_person_id" in value:
            person = self._api.world.person(int(value["consenting_person_id"]))
            if person is None:
                raise ValueError("no such person in the world")
            launchpad.consenting = person
        return {"token_lifetime": launchpad.token_lifetime, "consenting_person_id": launchpad.consenting.id,
                "device_flow": launchpad.device_flow}  # fmt: skip

    def _mention(self, value: object) -> dict[str, int]:
        if not isinstance(value, dict) or not {"recording_id", "text"} <= set(value):
            raise ValueError(f"a mention is {_MENTION_SHAPE}")
        if unknown := set(value) - {"recording_id", "text", "creator_id"}:
            fields = ", ".join(sorted(unknown))
            raise ValueError(f"unknown mention fields {fields}: a mention is {_MENTION_SHAPE}")
        if not isinstance(value["text"], str):
            raise ValueError("a mention's text is a string")
        operator = self._api.world.operator.id
        creator = faults.whole(value.get("creator_id", operator), "creator_id", low=1, high=MAX_ID)
        recording = faults.whole(value["recording_id"], "recording_id", low=1, high=MAX_ID)
        message, event_id = self._api.mention(creator, recording, value["text"])
        return {"id": message.id, "event_id": event_id}

    def _card(self, value: object) -> dict[str, int]:
        if not isinstance(value, dict) or not {"project_id", "title", "creator_id"} <= set(value) \
                or set(value) - {"project_id", "title", "creator_id", "content"}:
            raise ValueError(f"a card is {_CARD_SHAPE}")
        title, content = value["title"], value.get("content", "")
        if not isinstance(title, str) or not isinstance(content, str):
            raise ValueError(f"a card's title and content are strings; a card is {_CARD_SHAPE}")
        project = faults.whole(value["project_id"], "project_id", low=1, high=MAX_ID)
        creator = faults.whole(value["creator_id"], "creator_id", low=1, high=MAX_ID)
        card, event_id = self._api.add_card(creator, project, title, content)
        return {"id": card.id, "event_id": event_id}

    def _seed(self, value: object) -> int:
        if not isinstance(value, dict) or not {"kind", "recording_id", "creator_id", "content"} <= set(value):
            raise ValueError(f"a message is {_MESSAGE_SHAPE}")
        created_at, content = value.get("created_at"), value["content"]
        if not isinstance(content, str):
            raise ValueError(f"a message's content is a string, not {type(content).__name__}; "
                             f"a message is {_MESSAGE_SHAPE}")
        kind = Kind(str(value["kind"]))
        when = datetime.fromisoformat(created_at) if isinstance(created_at, str) else None
        return self._api.seed(kind, int(value["recording_id"]), int(value["creator_id"]), content, when).id


def _limit_from_json(value: object) -> faults.RateLimit:
    if not isinstance(value, dict) or set(value) - {"requests", "window"}:
        raise ValueError('a rate limit is {"requests": N, "window": SECONDS}')
    requests, window = value.get("requests"), value.get("window", faults.BASECAMP_WINDOW_SECONDS)
    if not isinstance(requests, int) or isinstance(requests, bool) or not isinstance(window, int | float):
        raise TypeError("a rate limit's requests is a whole number and its window a number of seconds")
    return faults.RateLimit(requests, float(window))
