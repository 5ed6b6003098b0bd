"""Credentials from the stand-in's Launchpad, by the authorization-code flow over real HTTP, for
tests that need a token that expires (the login command's own test drives the whole flow)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import parse_qsl, urlsplit

import urllib3

from core.oauth import TOKEN_PATH, Credentials, app, authorize_url, code_form, to_text
from shell.basecamp.standin.launchpad import CLIENT_ID
from shell.basecamp.standin.server import StandIn
from shell.basecamp.tokens import token_request
from shell.private_files import write_atomically

REDIRECT = "http://127.0.0.1:9/callback"  # never followed: the code is read from the Location


def obtain(standin: StandIn) -> Credentials:
    """Consent (the stand-in consents as the agent), then exchange the code."""
    url = authorize_url(standin.base_url, CLIENT_ID, REDIRECT, "s")
    answer = urllib3.request("GET", url, headers={"User-Agent": "tests (t@example.com)"}, redirect=False)
    assert answer.status == 302, answer.status
    code = dict(parse_qsl(urlsplit(answer.headers["Location"]).query))["code"]
    now = datetime.now(UTC)
    registered = app(f"{standin.base_url}{TOKEN_PATH}", CLIENT_ID, standin.control_secret, now)
    return token_request(code_form(registered, code, REDIRECT), registered, now)


def token_file_with(standin: StandIn, path: Path) -> Credentials:
    """``obtain``, written to ``path`` as ``bin/connect login`` writes it."""
    credentials = obtain(standin)
    write_atomically(path, to_text(credentials).encode())
    return credentials
