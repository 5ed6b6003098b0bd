"""Launchpad, as the stand-in plays it: OAuth 2 for one registered app, with tokens that expire.

The app is ``CLIENT_ID`` with the stand-in's control secret as its client secret (who may mint a
token as the agent is who may drive the stand-in), and any loopback redirect. Consent is at once,
as the consenting person (the agent unless told otherwise); a code is good once, for five minutes.
An access token expires after ``token_lifetime`` seconds; each refresh issues a new pair and
retires the refresh token used. Anything wrong is a 400 with OAuth's error word; a token neither
issued nor live is a 401. The device flow is offered only when ``device_flow`` is set: a code a
person approves at ``/device``, ``authorization_pending`` until then, then the pair, once.
"""

from __future__ import annotations

import secrets
import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from urllib.parse import parse_qsl, urlencode, urlsplit

from core.links import is_loopback_host
from shell.basecamp.standin.api import Incoming, Reply, error_reply, json_reply
from shell.basecamp.standin.world import Person, World

CLIENT_ID = "standin-client"
LAUNCHPAD_LIFETIME = 1209600
CODE_LIFETIME = timedelta(minutes=5)
LEGACY_TYPES = {"web_server": "authorization_code", "refresh": "refresh_token"}
DEVICE_GRANT = "urn:ietf:params:oauth:grant-type:device_code"


@dataclass
class _Issued:
    person: Person
    expires_at: datetime


class Launchpad:
    def __init__(self, world: World, origin: str, now: Callable[[], datetime], client_secret: str) -> None:
        self._world = world
        self._origin = origin
        self._now = now
        self.client_secret = client_secret
        self._lock = threading.Lock()
        self._codes: dict[str, tuple[Person, str, datetime]] = {}
        self._devices: dict[str, tuple[str, Person | None]] = {}  # device code -> user code, approver
        self._access: dict[str, _Issued] = {}
        self._refresh: dict[str, Person] = {}
        self.token_lifetime = LAUNCHPAD_LIFETIME
        self.device_flow = False
        self.consenting: Person = world.agent
        self.refreshes = 0

    def answer(self, request: Incoming) -> Reply:
        form = dict(parse_qsl(request.body.decode("utf-8", "replace")))
        match (request.method, request.path):
            case ("GET", "/authorization/new"):
                return self._authorize(request.query)
            case ("POST", "/authorization/token"):
                return self._token(form | request.query)
            case ("GET", "/authorization.json"):
                return self._authorization(request.headers.get("authorization", ""))
            case ("GET", "/.well-known/oauth-authorization-server"):
                origin = self._origin
                document = {"issuer": origin, "authorization_endpoint": f"{origin}/authorization/new",
                            "token_endpoint": f"{origin}/authorization/token"}  # fmt: skip
                if self.device_flow:
                    document["device_authorization_endpoint"] = f"{self._origin}/oauth/device"
                return json_reply(200, document)
            case ("POST", "/oauth/device") if self.device_flow:
                return self._device(form.get("client_id", ""))
            case ("GET", "/device") if self.device_flow:
                return self._approve(request.query.get("user_code", ""))
        return error_reply(404, "Not Found")

    def person_for(self, token: str) -> Person | None:
        """Whom a live issued token acts as; an expired one is None (a 401)."""
        with self._lock:
            issued = self._access.get(token)
            if issued is None or issued.expires_at <= self._now():
                return None
            return issued.person

    def expire_all(self) -> None:
        with self._lock:
            for issued in self._access.values():
                issued.expires_at = min(issued.expires_at, self._now())

    def _authorize(self, query: dict[str, str]) -> Reply:
        redirect = query.get("redirect_uri", "")
        if query.get("client_id") != CLIENT_ID or query.get("response_type") != "code":
            return error_reply(400, "invalid_request")
        if not redirect or not is_loopback_host(urlsplit(redirect).hostname or ""):
            return error_reply(400, "invalid_request", message="redirect_uri must be on a loopback host")
        code = secrets.token_urlsafe(16)
        with self._lock:
            self._codes[code] = (self.consenting, redirect, self._now() + CODE_LIFETIME)
        back = {"code": code, **({"state": query["state"]} if "state" in query else {})}
        separator = "&" if "?" in redirect else "?"
        return Reply(302, (("Location", f"{redirect}{separator}{urlencode(back)}"),))

    def _token(self, form: dict[str, str]) -> Reply:
        grant = form.get("grant_type") or LEGACY_TYPES.get(form.get("type", ""), "")
        known = secrets.compare_digest(form.get("client_secret", "").encode(), self.client_secret.encode())
        if form.get("client_id") != CLIENT_ID or not known:
            return error_reply(400, "invalid_client")
        with self._lock:
            if grant == "authorization_code":
                found = self._codes.pop(form.get("code", ""), None)
                if found is None or found[2] <= self._now() or found[1] != form.get("redirect_uri"):
                    return error_reply(400, "invalid_grant")
                person = found[0]
            elif grant == DEVICE_GRANT:
                device = self._devices.get(form.get("device_code", ""))
                if device is None:
                    return error_reply(400, "invalid_grant")
                if device[1] is None:
                    return error_reply(400, "authorization_pending")
                del self._devices[form.get("device_code", "")]
                person = device[1]
            elif grant == "refresh_token":
                if (refreshed := self._refresh.pop(form.get("refresh_token", ""), None)) is None:
                    return error_reply(400, "invalid_grant")
                person = refreshed
                self.refreshes += 1
            else:
                return error_reply(400, "unsupported_grant_type")
            access, refresh = secrets.token_urlsafe(24), secrets.token_urlsafe(24)
            self._access[access] = _Issued(person, self._now() + timedelta(seconds=self.token_lifetime))
            self._refresh[refresh] = person
        issued = {"access_token": access, "token_type": "Bearer", "expires_in": self.token_lifetime}
        return json_reply(200, {**issued, "refresh_token": refresh})

    def _device(self, client_id: str) -> Reply:
        if client_id != CLIENT_ID:
            return error_reply(400, "invalid_client")
        device_code, user_code = secrets.token_urlsafe(24), secrets.token_hex(4).upper()
        with self._lock:
            self._devices[device_code] = (user_code, None)
        verification = {"verification_uri": f"{self._origin}/device", "interval": 1, "expires_in": 600}
        return json_reply(200, {"device_code": device_code, "user_code": user_code, **verification})

    def _approve(self, user_code: str) -> Reply:
        with self._lock:
            for device_code, (code, _) in self._devices.items():
                if code == user_code:
                    self._devices[device_code] = (code, self.consenting)
                    return Reply(200, (("Content-Type", "text/html; charset=utf-8"),), b"<p>Approved.</p>")
        return error_reply(404, "Not Found")

    def _authorization(self, authorization: str) -> Reply:
        scheme, _, token = authorization.strip().partition(" ")
        person = self.person_for(token.strip()) if scheme.lower() == "bearer" else None
        if person is None:
            return error_reply(401, "Unauthorized", (("WWW-Authenticate", 'Bearer realm="Launchpad"'),))
        with self._lock:
            expires_at = self._access[token.strip()].expires_at
        first, _, last = person.name.partition(" ")
        account_url = f"{self._origin}/{self._world.account_id}"
        return json_reply(200, {
            "expires_at": expires_at.isoformat().replace("+00:00", "Z"),
            "identity": {"id": 10**9 + person.id, "first_name": first, "last_name": last,
                         "email_address": person.email_address},
            "accounts": [{"product": "bc3", "id": self._world.account_id, "name": self._world.account_name,
                          "href": account_url, "app_href": account_url}],
        })  # fmt: skip
