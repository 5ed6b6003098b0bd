"""The stand-in's own control API, for a second process or terminal (not Basecamp's).

Rules:
1. It lives under ``/__standin/`` and asks for no Basecamp token but for the stand-in's own
   secret in ``X-Standin-Secret``, or answers 403 and does nothing. The stand-in listens on
   127.0.0.1 only, and every local user reaches that: the secret keeps another user of a shared
   machine from seeding a mention "from the operator" or minting tokens. The handler
   (``shell.basecamp.standin.handler``) checks it, in one place.
2. Its requests (faults, the request record, seeded messages and mentions, the rate limit, the
   live lane's faults, Launchpad's settings) are the README's table "The stand-in's control
   API"; ``answer`` below routes them.
3. Bad input answers 400 ``{"error", "message"}`` and changes nothing: a body that is not UTF-8
   JSON, holds NaN or Infinity, nests too deep, or a number out of
   ``shell.basecamp.standin.bounds``.
"""

from __future__ import annotations

from datetime import datetime

from core.ids import MAX_ID
from shell.basecamp.standin.api import BasecampApi
from shell.basecamp.standin.bounds import MAX_TOKEN_LIFETIME_SECONDS, read_json, whole
from shell.basecamp.standin.exchange import Incoming, Reply, error_reply, json_reply
from shell.basecamp.standin.faults import FaultBook, fault_from_json, fault_to_json
from shell.basecamp.standin.live_faults import live_fault_from_json, live_fault_to_json
from shell.basecamp.standin.live_stream import LiveStream
from shell.basecamp.standin.ratelimit import BASECAMP_WINDOW_SECONDS, Limiter, RateLimit
from shell.basecamp.standin.recorder import RequestLog
from shell.basecamp.standin.store import Kind

PREFIX = "/__standin/"
SECRET_HEADER = "X-Standin-Secret"  # noqa: S105 -- the header's name, not a secret
"""The header every control request carries, holding the stand-in's ``control_secret`` (rule 1)."""
_MENTION_SHAPE = '{"recording_id": CARD_ID, "text": "...", "creator_id"?: PERSON_ID}'


class Control:
    def __init__(
        self, api: BasecampApi, faults: FaultBook, log: RequestLog, limiter: Limiter, live: LiveStream
    ) -> None:
        self._api = api
        self._live = live
        self._faults = faults
        self._log = log
        self._limiter = limiter

    def answer(self, request: Incoming) -> Reply:
        route = (request.method, request.path.removeprefix(PREFIX).strip("/"))
        try:
            match route:
                case ("POST", "faults"):
                    fault = fault_from_json(read_json(request.body))
                    self._faults.add(fault)
                    return json_reply(201, fault_to_json(fault))
                case ("GET", "faults"):
                    return json_reply(200, [fault_to_json(fault) for fault in self._faults.pending()])
                case ("DELETE", "faults"):
                    return json_reply(200, {"removed": self._faults.clear()})
                case ("GET", "requests"):
                    return json_reply(200, [recorded.to_json() for recorded in self._log.requests()])
                case ("POST", "messages"):
                    return json_reply(201, {"id": self._seed(read_json(request.body))})
                case ("POST", "mentions"):
                    return json_reply(201, self._mention(read_json(request.body)))
                case ("GET", "rate-limit"):
                    return json_reply(200, _limit_json(self._limiter.limit))
                case ("PUT", "rate-limit"):
                    self._limiter.set_limit(_limit_from_json(read_json(request.body)))
                    return json_reply(200, _limit_json(self._limiter.limit))
                case (method, path) if path == "live" or path.startswith("live/"):
                    return self._live_answer(method, path, request.body)
                case ("POST", "launchpad"):
                    return json_reply(200, self._launchpad(read_json(request.body)))
                case ("POST", "launchpad/expire"):
                    self._api.launchpad.expire_all()
                    return json_reply(200, {"expired": True})
        except (ValueError, TypeError, KeyError, OverflowError) as error:
            return error_reply(400, "Bad Request", message=str(error))
        return error_reply(404, "Not Found")

    def _live_answer(self, method: str, path: str, body: bytes) -> Reply:
        live = self._live
        match (method, path):
            case ("POST", "live/faults"):
                fault = live_fault_from_json(read_json(body))
                live.faults.add(fault)
                return json_reply(201, live_fault_to_json(fault))
            case ("GET", "live/faults"):
                return json_reply(200, [live_fault_to_json(found) for found in live.faults.pending()])
            case ("POST", "live/drop"):
                return json_reply(200, {"dropped": live.drop_all()})
            case ("GET", "live"):
                shown = {"connections": live.connections(), "tickets_minted": live.tickets.minted}
                return json_reply(200, shown)
        return error_reply(404, "Not Found")
    def _launchpad(self, value: object) -> dict[str, int | bool]:
        if not isinstance(value, dict):
            raise TypeError("the settings are a JSON object")
        launchpad = self._api.launchpad
        if "token_lifetime" in value:
            launchpad.token_lifetime = whole(
                value["token_lifetime"], "token_lifetime (seconds)", low=1, high=MAX_TOKEN_LIFETIME_SECONDS
            )
        if "device_flow" in value:
            if not isinstance(value["device_flow"], bool):
                raise ValueError("device_flow is true or false")
            launchpad.device_flow = value["device_flow"]
        if "consenting_person_id" in value:
            person = self._api.person(int(value["consenting_person_id"]))
            if person is None:
                raise ValueError("no such person in the world")
            launchpad.consenting = person
        return {"token_lifetime": launchpad.token_lifetime, "consenting_person_id": launchpad.consenting.id,
                "device_flow": launchpad.device_flow}  # fmt: skip

    def _mention(self, value: object) -> dict[str, int]:
        if not isinstance(value, dict) or not {"recording_id", "text"} <= set(value):
            raise ValueError(f"a mention is {_MENTION_SHAPE}")
        unknown = set(value) - {"recording_id", "text", "creator_id"}
        if unknown:
            named = ", ".join(sorted(unknown))
            raise ValueError(f"unknown mention fields {named}: a mention is {_MENTION_SHAPE}")
        if not isinstance(value["text"], str):
            raise ValueError("a mention's text is a string")
        creator = whole(value.get("creator_id", self._api.operator.id), "creator_id", low=1, high=MAX_ID)
        message, event_id = self._api.mention(
            creator, whole(value["recording_id"], "recording_id", low=1, high=MAX_ID), value["text"]
        )
        return {"id": message.id, "event_id": event_id}

    def _seed(self, value: object) -> int:
        if not isinstance(value, dict):
            raise TypeError("a message is a JSON object")
        created_at = value.get("created_at")
        message = self._api.seed(
            Kind(str(value["kind"])),
            int(value["recording_id"]),
            int(value["creator_id"]),
            str(value["content"]),
            datetime.fromisoformat(created_at) if isinstance(created_at, str) else None,
        )
        return message.id


def _limit_json(limit: RateLimit) -> dict[str, object]:
    return {"requests": limit.requests, "window": limit.window}


def _limit_from_json(value: object) -> RateLimit:
    if not isinstance(value, dict) or set(value) - {"requests", "window"}:
        raise ValueError('a rate limit is {"requests": N, "window": SECONDS}')
    requests, window = value.get("requests"), value.get("window", BASECAMP_WINDOW_SECONDS)
    if not isinstance(requests, int) or isinstance(requests, bool) or not isinstance(window, int | float):
        raise TypeError("a rate limit's requests is a whole number and its window a number of seconds")
    return RateLimit(requests, float(window))
