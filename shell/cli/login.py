"""``bin/connect login``: obtain the agent's token through Launchpad's OAuth 2, and keep it.

The authorization-code flow with a loopback redirect: a server on 127.0.0.1 waits for the one
callback carrying the ``state`` sent (compared in constant time), answering any other request 400.
Each connection has its thread, dropped after ``IDLE_SECONDS`` of silence, so ``--timeout`` ends
the wait, never later, writing nothing. ``--device`` is the device flow, only where the server's
OAuth discovery offers it on the ``--launchpad`` origin. A ``--launchpad`` that is not https (http
only to loopback) is refused before any page opens. The token file is written owner-only and
whole, over nothing but an owner-only token file: anything else is refused before the sign-in and
again before the rename. No token or secret is in argv, printed or logged; the URL to open goes to
stderr (stdout is the result)."""

from __future__ import annotations

import argparse
import json
import os
import secrets
import sys
import threading
import time
import webbrowser
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from core import oauth
from core.file_kinds import FileKind
from core.links import same_origin, transport_allowed
from core.text import printable
from core.timestamps import format_timestamp
from core.worker_allowances import CLIENT_SECRET_ENV
from shell import private_files
from shell.basecamp.tokens import LaunchpadFailed, authorization, device_request, discover, token_request
from shell.cli.arguments import positive_seconds
from shell.cli.main import Subparsers, add_command
from shell.errors import EXIT_CONFIG, EXIT_OK, EXIT_REFUSED, EXIT_UNAVAILABLE, UserError
from shell.state.config import is_state_directory

SECRET_ENV = CLIENT_SECRET_ENV
CALLBACK_PATH = "/callback"
IDLE_SECONDS = 10.0  # how long the callback server keeps a silent connection

EPILOG = f"""\
examples:
  bin/connect login --client-id 0123abcd --client-secret-file ~/.config/app.secret \\
      --token-file ~/.config/agent.token --redirect-port 8765
  {SECRET_ENV}=... bin/connect login --client-id 0123abcd --token-file ~/.config/agent.token --json
  bin/connect login --device --client-id 0123abcd --client-secret-file ~/.config/app.secret \\
      --token-file ~/.config/agent.token          # where the server offers the device flow

Register the app at https://launchpad.37signals.com/integrations with the redirect URI
http://127.0.0.1:PORT{CALLBACK_PATH} (the same PORT as --redirect-port), then sign in as the
agent's Basecamp person when the page opens. The connector refreshes the token before it
expires (two weeks) and keeps the new pair in the same file.

--token-file must be a path of its own: a missing or empty file, or a token file (it is replaced).
A ledger, a configuration, any other file, or a path inside a state directory is refused before
the sign-in, and nothing is written.

exit codes: 0 written; 3 a client secret or token file problem (those above among them); 5
Launchpad or the person refused (a wrong client, a denied consent, a state that does not
match); 6 Launchpad could not be reached, or no answer came within --timeout."""


LOGIN_DESCRIPTION = """\
Obtain a token for the agent through Launchpad's OAuth 2 authorization-code flow,
with a redirect to this machine (127.0.0.1), and write it -- access token, refresh
token, expiry -- to --token-file, owner-only. Nothing secret is printed."""


def register(subparsers: Subparsers) -> None:
    parser = add_command(subparsers, "login", LOGIN_DESCRIPTION, EPILOG)
    parser.add_argument("--client-id", required=True, help="the app's client id (Launchpad integrations)")
    parser.add_argument("--client-secret-file", metavar="PATH",
                        help=f"an owner-only file holding the app's client secret (else ${SECRET_ENV})")
    parser.add_argument("--token-file", required=True, metavar="PATH", help="where to keep the token")
    parser.add_argument("--launchpad", default=oauth.LAUNCHPAD, metavar="URL",
                        help=f"default {oauth.LAUNCHPAD}")
    parser.add_argument("--redirect-port", type=int, default=0, metavar="PORT",
                        help="the loopback port registered with the app (default 0: any free port)")
    parser.add_argument("--no-browser", action="store_true", help="only print the URL to open")
    parser.add_argument("--device", action="store_true",
                        help="the device flow (a code to enter on any device), where the server offers it")
    parser.add_argument("--timeout", type=positive_seconds, default=300.0, metavar="SECONDS",
                        help="how long to wait for the sign-in (default 300)")
    parser.add_argument("--json", action="store_true", help="print the result as one JSON object")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    secret = _client_secret(args.client_secret_file)
    token_file = Path(os.path.abspath(os.path.expanduser(args.token_file)))
    _check_destination(token_file)
    if not 0 <= args.redirect_port <= 65535:
        raise UserError(f"--redirect-port must be 0 to 65535, not {args.redirect_port}", EXIT_CONFIG)
    launchpad = args.launchpad.rstrip("/")
    if not transport_allowed(launchpad):  # before anyone is sent to a sign-in page in plain text
        raise UserError("--launchpad must be https (plain http only to a loopback address): "
                        f"{printable(launchpad)}; nobody was sent to sign in, nothing written", EXIT_CONFIG)
    registered = oauth.app(f"{launchpad}{oauth.TOKEN_PATH}", args.client_id, secret, datetime.now(UTC))
    try:
        credentials = (_device_flow(launchpad, registered, args.timeout) if args.device
                       else _loopback_flow(launchpad, registered, args))
        found = authorization(launchpad, credentials.access_token)
    except LaunchpadFailed as error:
        code = EXIT_REFUSED if "HTTP 4" in str(error) else EXIT_UNAVAILABLE
        raise UserError(f"{error}; nothing written", code) from None
    private_files.write_atomically(token_file, oauth.to_text(credentials).encode(), FileKind.token)
    return _report(args.json, token_file, format_timestamp(credentials.expires_at), found)


def _loopback_flow(launchpad: str, registered: oauth.Credentials,
                   args: argparse.Namespace) -> oauth.Credentials:
    state = secrets.token_urlsafe(16)
    with _callback(args.redirect_port, state) as (port, wait):
        redirect_uri = f"http://127.0.0.1:{port}{CALLBACK_PATH}"
        url = oauth.authorize_url(launchpad, registered.client_id, redirect_uri, state)
        print(f"open this page and sign in as the agent: {url}", file=sys.stderr, flush=True)
        if not args.no_browser:
            webbrowser.open(url)
        answer = wait(args.timeout)
    if answer is None:
        raise UserError(f"no sign-in came back within {args.timeout:g} s; nothing written", EXIT_UNAVAILABLE)
    if "error" in answer or not answer.get("code"):
        said = answer.get("error", "the answer carries no code")
        raise UserError(f"the sign-in was refused ({said[:80]}); nothing written", EXIT_REFUSED)
    form = oauth.code_form(registered, answer["code"], redirect_uri)
    return token_request(form, registered, datetime.now(UTC))


def _device_flow(launchpad: str, registered: oauth.Credentials, timeout: float) -> oauth.Credentials:
    endpoint = oauth.device_endpoint(discover(launchpad))
    if endpoint is None:
        raise UserError(f"{launchpad} offers no device flow (its OAuth discovery names no device "
                        "authorization endpoint): sign in without --device, by the loopback redirect",
                        EXIT_REFUSED)
    if not same_origin(endpoint, launchpad):  # a discovery document sends nobody elsewhere
        raise UserError(f"{launchpad}'s OAuth discovery names a device endpoint on another origin: not"
                        " followed; sign in without --device", EXIT_REFUSED)  # fmt: skip
    grant = device_request(endpoint, registered.client_id)
    print(f"on any device, open {printable(grant.verification_uri)} and enter the code"
          f" {printable(grant.user_code)}", file=sys.stderr, flush=True)  # fmt: skip
    ends = time.monotonic() + min(timeout, grant.expires_in)
    interval = grant.interval
    while True:
        if time.monotonic() + interval > ends:
            raise UserError(f"no sign-in came back within {timeout:g} s; nothing written", EXIT_UNAVAILABLE)
        time.sleep(interval)
        try:
            return token_request(oauth.device_token_form(registered, grant), registered, datetime.now(UTC))
        except LaunchpadFailed as error:
            if (wait := oauth.poll_verdict(error.error, interval)) is None:
                raise
            interval = wait


def _client_secret(path: str | None) -> str:
    if path:
        secret_file = Path(os.path.expanduser(path))
        try:
            private_files.check_file(secret_file, "client secret file")
            secret = secret_file.read_text().strip()
        except OSError as error:
            said = f"cannot read client secret file {secret_file}: {error.strerror}"
            raise UserError(said, EXIT_CONFIG) from None
    else:
        secret = os.environ.get(SECRET_ENV, "").strip()
    if not secret or any(character.isspace() for character in secret):
        raise UserError(f"no client secret: give --client-secret-file PATH or set {SECRET_ENV}", EXIT_CONFIG)
    return secret


def _check_destination(token_file: Path) -> None:
    if not token_file.parent.is_dir():
        raise UserError(f"no directory {token_file.parent} for the token file", EXIT_CONFIG)
    if is_state_directory(token_file.parent):
        raise UserError(f"token file {token_file} is inside a state directory ({token_file.parent}), which "
                        "holds the connector's own files; nothing written: keep the token elsewhere, e.g. "
                        "~/.config/agent.token", EXIT_CONFIG)
    if token_file.exists() or token_file.is_symlink():
        private_files.check_file(token_file, "token file", " (it is replaced by the new token)")
    private_files.refuse_other_kind(token_file, "token file", FileKind.token)


def _report(as_json: bool, token_file: Path, expires_at: str, found: dict[str, Any]) -> int:
    raw_identity = found.get("identity")
    identity: dict[str, Any] = raw_identity if isinstance(raw_identity, dict) else {}
    listed = found.get("accounts")
    accounts = [{key: account.get(key) for key in ("id", "name", "href")}
                for account in (listed if isinstance(listed, list) else [])
                if isinstance(account, dict) and account.get("product") == "bc3"]
    if as_json:
        print(json.dumps({"token_file": str(token_file), "expires_at": expires_at,
                          "identity": identity, "accounts": accounts}, indent=2))  # fmt: skip
        return EXIT_OK
    name = printable(f"{identity.get('first_name', '')} {identity.get('last_name', '')}".strip())
    print(f"wrote {token_file} (owner-only); the token expires {expires_at} and is refreshed before then")
    print(f"  signed in as {name or '?'} <{printable(str(identity.get('email_address', '?')))}>")
    for account in accounts:  # what Launchpad named them, shown escaped
        shown = printable(f"{account['name']}: {account['href']}")
        print(f"  account {account['id']} {shown}")
    print("next: bin/connect setup --token-file", token_file, "--account ID --agent PERSON_ID ...")
    return EXIT_OK


@contextmanager
def _callback(port: int, state: str) -> Iterator[tuple[int, Callable[[float], dict[str, str] | None]]]:
    """The loopback server for the redirect: its port, and a wait for the one callback with ``state``."""
    received: list[dict[str, str]] = []
    arrived = threading.Event()
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        timeout = IDLE_SECONDS  # an idle connection is dropped, and delays no other

        def do_GET(self) -> None:
            parts = urlsplit(self.path)
            query = dict(parse_qsl(parts.query))
            given = query.get("state", "")
            if parts.path != CALLBACK_PATH or not secrets.compare_digest(given.encode(), state.encode()):
                self.send_error(400, "not this sign-in's callback")
                return
            with lock:
                if arrived.is_set():
                    self.send_error(400, "this sign-in is already answered")
                    return
                received.append(query)
                arrived.set()
            body = b"<p>Signed in. You can close this page and go back to the terminal.</p>"
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:  # the query holds the code
            return

    try:
        server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        server.daemon_threads = True  # a connection left open is never waited for
    except OSError as error:
        raise UserError(f"cannot listen on 127.0.0.1:{port}: {error.strerror}", EXIT_CONFIG) from None
    threading.Thread(target=server.serve_forever, args=(0.1,), daemon=True).start()
    try:
        yield int(server.server_address[1]), lambda seconds: received[0] if arrived.wait(seconds) else None
    finally:
        server.shutdown()
        server.server_close()
