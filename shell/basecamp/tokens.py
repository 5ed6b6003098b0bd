"""The token a client sends: a bare one as it is, or the login's, refreshed before it expires.

Rules:
1. ``StaticToken`` is a bare token file's token: never refreshed; a 401 stays a 401.
2. ``RefreshingToken`` refreshes when ``core.oauth.refresh_due`` says, and once on a 401 for the
   refused token; a 401 for a token already replaced gets the replacement without asking again.
3. Never twice in parallel: one lock in the process and a ``flock`` on ``<token file>.lock``
   across processes. Under it the file is read again first, so credentials another process
   refreshed (and its possibly rotated refresh token) are adopted.
4. The new pair is written whole (``private_files.write_atomically``, only over a token file)
   before it is used. A failed refresh is logged and the current token kept until a 401.
5. No token or secret is ever in a log line, an exception or a repr."""

from __future__ import annotations

import logging
import os
import threading
from pathlib import Path
from typing import Protocol

from core.file_kinds import FileKind
from core.oauth import Credentials, refresh_due, refresh_form, to_text
from core.timestamps import format_timestamp
from shell import private_files
from shell.basecamp.launchpad import LaunchpadFailed, token_request
from shell.clock import Clock
from shell.errors import UserError
from shell.state import flock
from shell.state.config import read_token_file

log = logging.getLogger("connector.token")


class Tokens(Protocol):
    def current(self) -> str: ...
    def after_unauthorized(self, used: str) -> str | None:
        """The token to try once more after ``used`` was refused; None: there is none."""


class StaticToken:
    """A bare token (rule 1)."""

    __slots__ = ("_token",)

    def __init__(self, token: str) -> None:
        self._token = token

    def current(self) -> str:
        return self._token

    def after_unauthorized(self, used: str) -> str | None:
        return None

    def __repr__(self) -> str:
        return "StaticToken(<redacted>)"


class RefreshingToken:
    """The login's credentials, refreshed (rules 2-4)."""

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


def tokens_from(path: Path, found: str | Credentials, clock: Clock) -> Tokens:
    """The token source for what the token file at ``path`` holds."""
    return StaticToken(found) if isinstance(found, str) else RefreshingToken(path, found, clock)
