"""Launchpad's OAuth 2 as values: the token file's two forms, the token answer, when to refresh.

Basecamp takes only Launchpad's tokens: an access token lives two weeks, with a refresh token. A
token file holds a bare access token (never refreshed) or the JSON ``Credentials`` that ``login``
writes, told apart by the first character. No secret is in a repr, a log or an error. A refresh
is due a day before expiry, or a quarter of the lifetime when that is shorter; an answer without a
``refresh_token`` keeps the old one. The forms use the standard ``grant_type`` names, never
Launchpad's legacy ``type=``; the device flow only where discovery names its endpoint.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any
from urllib.parse import urlencode

from core.json_input import JsonRefused, decode_json
from core.timestamps import format_timestamp, parse_timestamp

LAUNCHPAD = "https://launchpad.37signals.com"
TOKEN_PATH = "/authorization/token"  # noqa: S105 -- a path, not a password
AUTHORIZE_PATH = "/authorization/new"
AUTHORIZATION_PATH = "/authorization.json"
DISCOVERY_PATH = "/.well-known/oauth-authorization-server"
DEVICE_GRANT = "urn:ietf:params:oauth:grant-type:device_code"
MAX_MARGIN = timedelta(days=1)
FILE_VERSION = 1


@dataclass(frozen=True, slots=True)
class Credentials:
    """What ``login`` obtained; every field but the times is secret or close to it."""
    access_token: str = field(repr=False)
    refresh_token: str = field(repr=False)
    expires_at: datetime
    obtained_at: datetime
    token_url: str = field(repr=False)
    client_id: str = field(repr=False)
    client_secret: str = field(repr=False)


def refresh_due(credentials: Credentials, now: datetime) -> bool:
    margin = min(MAX_MARGIN, max(timedelta(0), (credentials.expires_at - credentials.obtained_at) / 4))
    return now >= credentials.expires_at - margin


def read_token_text(text: str) -> str | Credentials:
    """A bare token, or the login's credentials; ValueError with a line naming no secret."""
    stripped = text.strip()
    if not stripped.startswith("{"):
        if not stripped:
            raise ValueError("is empty")
        if any(character.isspace() for character in stripped):
            raise ValueError("holds more than one word; it must hold the token alone")
        return stripped
    decoded = decode_json(stripped, max_bytes=64 * 1024)
    if isinstance(decoded, JsonRefused):
        reason = decoded.reason
        raise ValueError(f"is neither a bare token nor the JSON bin/connect login writes ({reason})")
    return _credentials(decoded.value)


def _credentials(data: Any) -> Credentials:
    if not isinstance(data, dict) or data.get("version") != FILE_VERSION:
        raise ValueError(f"is not version {FILE_VERSION} of the JSON bin/connect login writes")
    texts = {}
    for key in ("access_token", "refresh_token", "token_url", "client_id", "client_secret"):
        value = data.get(key)
        if not isinstance(value, str) or not value.strip() or any(c.isspace() for c in value):
            raise ValueError(f"has no usable {key}")
        texts[key] = value
    try:
        expires_at = parse_timestamp(str(data.get("expires_at")))
        obtained_at = parse_timestamp(str(data.get("obtained_at")))
    except ValueError:
        raise ValueError("has no usable expires_at or obtained_at") from None
    return Credentials(expires_at=expires_at, obtained_at=obtained_at, **texts)


def to_text(credentials: Credentials) -> str:
    """The file's JSON; ``read_token_text(to_text(c)) == c``."""
    times = {"expires_at": format_timestamp(credentials.expires_at),
             "obtained_at": format_timestamp(credentials.obtained_at)}
    return json.dumps({"version": FILE_VERSION, **asdict(credentials), **times}, indent=2) + "\n"


def from_token_answer(answer: Any, now: datetime, previous: Credentials) -> Credentials:
    """ValueError (naming no secret) for an answer without an access token or a positive expiry."""
    if not isinstance(answer, dict):
        raise ValueError("the token answer is not a JSON object")
    access = answer.get("access_token")
    expires_in = answer.get("expires_in")
    if not isinstance(access, str) or not access.strip():
        raise ValueError("the token answer has no access_token")
    if isinstance(expires_in, bool) or not isinstance(expires_in, int | float) or expires_in <= 0:
        raise ValueError("the token answer has no positive expires_in")
    refresh = answer.get("refresh_token")
    if refresh is not None and (not isinstance(refresh, str) or not refresh.strip()):
        raise ValueError("the token answer's refresh_token is not a token")
    return replace(
        previous, access_token=access.strip(), refresh_token=(refresh or previous.refresh_token).strip(),
        expires_at=now + timedelta(seconds=float(expires_in)), obtained_at=now,
    )


def app(token_url: str, client_id: str, client_secret: str, now: datetime) -> Credentials:
    """The app's registration before any token: what an exchange starts from."""
    return Credentials("-", "-", now, now, token_url, client_id, client_secret)


def authorize_url(launchpad: str, client_id: str, redirect_uri: str, state: str) -> str:
    query = {"response_type": "code", "client_id": client_id, "redirect_uri": redirect_uri, "state": state}
    return f"{launchpad.rstrip('/')}{AUTHORIZE_PATH}?{urlencode(query)}"


def _client(credentials: Credentials) -> dict[str, str]:
    return {"client_id": credentials.client_id, "client_secret": credentials.client_secret}


def code_form(credentials: Credentials, code: str, redirect_uri: str) -> dict[str, str]:
    return {"grant_type": "authorization_code", "code": code, "redirect_uri": redirect_uri,
            **_client(credentials)}


def refresh_form(credentials: Credentials) -> dict[str, str]:
    return {"grant_type": "refresh_token", "refresh_token": credentials.refresh_token, **_client(credentials)}


# -- the device flow --------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class DeviceGrant:
    """A device authorization the server granted: the code a person enters, and where."""
    device_code: str = field(repr=False)
    user_code: str
    verification_uri: str
    interval: float
    expires_in: float


def device_endpoint(discovery: Any) -> str | None:
    if not isinstance(discovery, dict):
        return None
    endpoint = discovery.get("device_authorization_endpoint")
    return endpoint if isinstance(endpoint, str) and endpoint.strip() else None


def read_device_answer(answer: Any) -> DeviceGrant:
    if not isinstance(answer, dict):
        raise ValueError("the device answer is not a JSON object")
    texts = [answer.get(key) for key in ("device_code", "user_code", "verification_uri")]
    if not all(isinstance(text, str) and text.strip() for text in texts):
        raise ValueError("the device answer lacks a device_code, a user_code or a verification_uri")
    interval = answer.get("interval", 5)
    expires_in = answer.get("expires_in", 600)
    numbers = (interval, expires_in)
    if any(isinstance(n, bool) or not isinstance(n, int | float) or n <= 0 for n in numbers):
        raise ValueError("the device answer's interval or expires_in is not a positive number")
    return DeviceGrant(str(texts[0]), str(texts[1]), str(texts[2]), float(interval), float(expires_in))


def device_form(client_id: str) -> dict[str, str]:
    return {"client_id": client_id}


def device_token_form(credentials: Credentials, grant: DeviceGrant) -> dict[str, str]:
    return {"grant_type": DEVICE_GRANT, "device_code": grant.device_code, **_client(credentials)}


def poll_verdict(error: str, interval: float) -> float | None:
    """Seconds to wait before polling again, or None when the poll is over."""
    if error == "authorization_pending":
        return interval
    if error == "slow_down":
        return interval + 5
    return None
