"""The token a client sends, and Launchpad over HTTP: its token endpoint (code exchange, refresh),
its device flow and ``authorization.json``.

A bare token file's token (``StaticToken``) is sent as it is; a 401 stays a 401. A login's
(``RefreshingToken``) is refreshed when ``core.oauth.refresh_due`` says, and once on a 401 for the
refused token (a 401 for one already replaced gets the replacement). A refresh never runs twice in
parallel: one lock in the process, a ``flock`` on ``<token file>.lock`` across processes, under
which the file is read again first to adopt what another process refreshed. The new pair is written
whole, only over a token file, before it is used; a failed refresh is logged and the current token
kept until a 401. Launchpad is reached over https only (http only to loopback), each exchange whole
within ``LAUNCHPAD_TIMEOUT`` and its answer read within ``MAX_ANSWER_BYTES``; a failure is
``LaunchpadFailed``. No token, secret or body is ever in a log line, an exception or a repr."""

from __future__ import annotations

import logging
import os
import threading
from datetime import datetime
from http.client import HTTPException
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import urlencode, urlsplit

import urllib3

from core.file_kinds import FileKind
from core.fingerprints import ACCESS_TOKEN, CLIENT_SECRET, REFRESH_TOKEN
from core.links import transport_allowed
from core.oauth import (
    AUTHORIZATION_PATH,
    DISCOVERY_PATH,
    Credentials,
    DeviceGrant,
    device_form,
    from_token_answer,
    read_device_answer,
    refresh_due,
    refresh_form,
    to_text,
)
from core.timestamps import format_timestamp
from shell import private_files, process_secrets
from shell.basecamp.wire import AnswerTooLarge, decode, exchange_once
from shell.clock import Clock
from shell.errors import UserError
from shell.state import flock
from shell.state.config import read_token_file

log = logging.getLogger("connector.token")

LAUNCHPAD_TIMEOUT = 30.0
USER_AGENT = "basecamp-connector (https://github.com/basecamp/basecamp-connector)"
_FORM = {"Content-Type": "application/x-www-form-urlencoded"}


Named = tuple[tuple[str, str], ...]  # (what it is, the credential): core.fingerprints' names


class Tokens(Protocol):
    def current(self) -> str: ...
    def credentials(self) -> Named:
        """Every credential held, named, for their fingerprints (``shell.ledger.fingerprints``)."""
    def after_unauthorized(self, used: str) -> str | None:
        """The token to try once more after ``used`` was refused; None: there is none."""


class StaticToken:
    __slots__ = ("_token",)

    def __init__(self, token: str) -> None:
        self._token = token

    def current(self) -> str:
        return self._token

    def credentials(self) -> Named:
        return ((ACCESS_TOKEN, self._token),)

    def after_unauthorized(self, used: str) -> str | None:
        return None

    def __repr__(self) -> str:
        return "StaticToken(<redacted>)"


class RefreshingToken:
    def __init__(self, path: Path, credentials: Credentials, clock: Clock) -> None:
        self._path = path
        self._credentials = credentials
        self._clock = clock
        self._lock = threading.Lock()
        self.refreshes = 0  # how many times this process asked Launchpad (tests read it)

    def __repr__(self) -> str:
        return f"RefreshingToken({self._path}, expires {format_timestamp(self._credentials.expires_at)})"

    def current(self) -> str:
        with self._lock:
            if refresh_due(self._credentials, self._clock.now()):
                self._refresh(because="it expires soon")
            return self._credentials.access_token

    def credentials(self) -> Named:
        with self._lock:
            held = self._credentials
        return ((ACCESS_TOKEN, held.access_token), (REFRESH_TOKEN, held.refresh_token),
                (CLIENT_SECRET, held.client_secret))

    def after_unauthorized(self, used: str) -> str | None:
        with self._lock:
            if self._credentials.access_token != used:
                return self._credentials.access_token
            return self._credentials.access_token if self._refresh(because="Basecamp answered 401") else None

    def _refresh(self, *, because: str) -> bool:
        """Under the process lock: the file lock, a re-read, then Launchpad if still needed."""
        try:
            descriptor = private_files.open_or_create(Path(f"{self._path}.lock"), "token lock file")
        except (UserError, OSError) as error:
            log.warning("token: cannot take the refresh lock: %s", error)
            return False
        try:
            flock.wait_for(descriptor)
            now = self._clock.now()
            on_disk = read_token_file(self._path)
            base = on_disk if isinstance(on_disk, Credentials) else self._credentials
            if base.access_token != self._credentials.access_token and not refresh_due(base, now):
                self._credentials = base
                log.info("token: adopted the one another process refreshed")
                return True
            fresh = token_request(refresh_form(base), base, now)
            private_files.write_atomically(self._path, to_text(fresh).encode(), FileKind.token)
            self._credentials = fresh
            self.refreshes += 1
            log.info("token: refreshed (%s); it expires at %s", because, format_timestamp(fresh.expires_at))
            return True
        except (LaunchpadFailed, UserError, OSError) as error:
            log.warning("token: the refresh failed (%s): %s", because, error)
            return False
        finally:
            os.close(descriptor)


def tokens_from(path: Path, clock: Clock) -> Tokens:
    found = read_token_file(path)
    return StaticToken(found) if isinstance(found, str) else RefreshingToken(path, found, clock)


# -- Launchpad -----------------------------------------------------------------------------


class LaunchpadFailed(Exception):
    """``error`` is the OAuth error word of a 4xx answer (``invalid_grant``...), or ""."""

    def __init__(self, message: str, error: str = "") -> None:
        super().__init__(message)
        self.error = error


def _checked(url: str) -> str:
    if not transport_allowed(url):
        raise LaunchpadFailed(f"Launchpad must be reached over https (http only to loopback): {url}")
    return url


def token_request(form: dict[str, str], previous: Credentials, now: datetime) -> Credentials:
    """POST ``form`` (``core.oauth``'s fields) to the token URL; the credentials it answers."""
    url = _checked(previous.token_url)
    status, data = _request("POST", url, body=urlencode(form).encode(), headers=_FORM)
    if not 200 <= status < 300:
        word = data.get("error") if isinstance(data, dict) else None
        error = word if isinstance(word, str) and word.isidentifier() else ""
        said = f" ({error})" if error else ""
        raise LaunchpadFailed(f"Launchpad's token endpoint answered HTTP {status}{said}", error)
    try:
        fresh = from_token_answer(data, now, previous)
    except ValueError as error:
        raise LaunchpadFailed(str(error)) from None
    process_secrets.hold_token(fresh)
    return fresh


def discover(launchpad: str) -> Any:
    """The server's OAuth discovery document, or None when it has none."""
    try:
        status, data = _request("GET", _checked(f"{launchpad.rstrip('/')}{DISCOVERY_PATH}"), headers={})
    except LaunchpadFailed:
        return None
    return data if status == 200 else None


def device_request(endpoint: str, client_id: str) -> DeviceGrant:
    """Ask the device authorization endpoint for a code a person enters elsewhere."""
    form = urlencode(device_form(client_id)).encode()
    status, data = _request("POST", _checked(endpoint), body=form, headers=_FORM)
    if status != 200:
        raise LaunchpadFailed(f"the device authorization endpoint answered HTTP {status}")
    try:
        return read_device_answer(data)
    except ValueError as error:
        raise LaunchpadFailed(str(error)) from None


def authorization(launchpad: str, access_token: str) -> dict[str, Any]:
    """``GET authorization.json``: who the access token is and the accounts it reaches."""
    url = _checked(f"{launchpad.rstrip('/')}{AUTHORIZATION_PATH}")
    status, data = _request("GET", url, headers={"Authorization": f"Bearer {access_token}"})
    if status != 200 or not isinstance(data, dict):
        raise LaunchpadFailed(f"Launchpad's authorization.json answered HTTP {status}")
    return data


def _request(method: str, url: str, *, body: bytes | None = None, headers: dict[str, str]) -> tuple[int, Any]:
    try:
        sent = {"User-Agent": USER_AGENT, "Accept": "application/json", **headers}
        status, raw = exchange_once(method, url, body, sent, LAUNCHPAD_TIMEOUT)  # the whole exchange
    except AnswerTooLarge as error:
        raise LaunchpadFailed(f"{method} {urlsplit(url).path} failed: {error}") from None
    except (urllib3.exceptions.HTTPError, HTTPException, OSError) as error:
        raise LaunchpadFailed(f"{method} {urlsplit(url).path} failed: {type(error).__name__}") from None
    return status, decode(raw)
