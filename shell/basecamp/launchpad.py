"""Launchpad over HTTP: the token endpoint (code exchange, refresh) and ``authorization.json``.

Rules:
1. A token request is one POST of a form (``core.oauth``'s fields) to the credentials' token
   URL; a 2xx with a usable answer is new credentials, anything else is ``LaunchpadFailed``
   with the status and Launchpad's ``error`` word, never a token, a secret or a body.
2. https only, except to a loopback host (the stand-in); every URL by ``core.links``' rules
   (``transport_allowed``: no userinfo, backslash, whitespace or control character). An answer
   is read within ``shell.basecamp.wire.MAX_ANSWER_BYTES`` and decoded by ``core.json_input``.
3. ``authorization`` reads who the access token is and the accounts it reaches.
4. ``discover`` reads the server's OAuth discovery (None when it has none); ``device_request``
   starts the device flow where it is offered (``core.oauth`` rule 6).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any
from urllib.parse import urlencode, urlsplit

import urllib3

from core.links import transport_allowed
from core.oauth import (
    AUTHORIZATION_PATH,
    DISCOVERY_PATH,
    Credentials,
    DeviceGrant,
    device_form,
    from_token_answer,
    read_device_answer,
)
from shell.basecamp.wire import AnswerTooLarge, bounded_body, decode

TIMEOUT = 30.0
USER_AGENT = "basecamp-connector (https://github.com/basecamp/basecamp-connector)"


class LaunchpadFailed(Exception):
    """Launchpad did not give what was asked; the message names no secret. ``error`` is the
    OAuth error word of a 4xx answer (``authorization_pending``, ``invalid_grant``...), or ""."""

    def __init__(self, message: str, error: str = "") -> None:
        super().__init__(message)
        self.error = error


def _checked(url: str) -> str:
    if not transport_allowed(url):
        raise LaunchpadFailed(f"Launchpad must be reached over https (http only to loopback): {url}")
    return url


def token_request(form: dict[str, str], previous: Credentials, now: datetime) -> Credentials:
    """POST ``form`` to the token URL; the credentials it answers (rule 1)."""
    url = _checked(previous.token_url)
    answer = _request("POST", url, body=urlencode(form).encode(), headers={
        "Content-Type": "application/x-www-form-urlencoded",
    })  # fmt: skip
    status, data = answer
    if not 200 <= status < 300:
        word = data.get("error") if isinstance(data, dict) else None
        error = word if isinstance(word, str) and word.isidentifier() else ""
        said = f" ({error})" if error else ""
        raise LaunchpadFailed(f"Launchpad's token endpoint answered HTTP {status}{said}", error)
    try:
        return from_token_answer(data, now, previous)
    except ValueError as error:
        raise LaunchpadFailed(str(error)) from None


def discover(launchpad: str) -> Any:
    """The server's OAuth discovery document, or None when it has none (rule 4)."""
    try:
        status, data = _request("GET", _checked(f"{launchpad.rstrip('/')}{DISCOVERY_PATH}"), headers={})
    except LaunchpadFailed:
        return None
    return data if status == 200 else None


def device_request(endpoint: str, client_id: str) -> DeviceGrant:
    """Ask the device authorization endpoint for a code a person enters elsewhere (rule 4)."""
    status, data = _request("POST", _checked(endpoint), body=urlencode(device_form(client_id)).encode(),
                            headers={"Content-Type": "application/x-www-form-urlencoded"})  # fmt: skip
    if status != 200:
        raise LaunchpadFailed(f"the device authorization endpoint answered HTTP {status}")
    try:
        return read_device_answer(data)
    except ValueError as error:
        raise LaunchpadFailed(str(error)) from None


def authorization(launchpad: str, access_token: str) -> dict[str, Any]:
    """``GET authorization.json``: the identity and the accounts (rule 3)."""
    url = _checked(f"{launchpad.rstrip('/')}{AUTHORIZATION_PATH}")
    status, data = _request("GET", url, headers={"Authorization": f"Bearer {access_token}"})
    if status != 200 or not isinstance(data, dict):
        raise LaunchpadFailed(f"Launchpad's authorization.json answered HTTP {status}")
    return data


def _request(method: str, url: str, *, body: bytes | None = None,
             headers: dict[str, str]) -> tuple[int, Any]:  # fmt: skip
    try:
        sent = {"User-Agent": USER_AGENT, "Accept": "application/json", **headers}
        response = urllib3.request(method, url, body=body, headers=sent, timeout=TIMEOUT, retries=False,
                                   redirect=False, preload_content=False)  # fmt: skip
        raw = bounded_body(response)
    except AnswerTooLarge as error:
        raise LaunchpadFailed(f"{method} {urlsplit(url).path} failed: {error}") from None
    except (urllib3.exceptions.HTTPError, OSError) as error:
        raise LaunchpadFailed(f"{method} {urlsplit(url).path} failed: {type(error).__name__}") from None
    return response.status, decode(raw)
