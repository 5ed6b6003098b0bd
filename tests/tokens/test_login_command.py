"""`bin/connect login` as a real process against the stand-in's Launchpad: the authorization-code
flow with a loopback redirect; the token file it writes is owner-only and works; nothing secret
is printed; a missing client secret and a sign-in that never comes back write nothing."""

from __future__ import annotations

import json
import os
import re
import socket
import stat
import subprocess
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import parse_qsl, urlsplit

import pytest
import urllib3

from core.oauth import TOKEN_PATH, Credentials, app, read_token_text, refresh_form
from shell.basecamp.client import BasecampClient
from shell.basecamp.standin.launchpad import CLIENT_ID
from shell.basecamp.standin.server import StandIn
from shell.basecamp.tokens import LaunchpadFailed, token_request
from shell.cli.main import main as connect
from shell.errors import EXIT_CONFIG, EXIT_REFUSED, EXIT_UNAVAILABLE
from tests.support.hostile_basecamp import Answered, HostileBasecamp, Trap

pytestmark = pytest.mark.slow
REPOSITORY = Path(__file__).resolve().parents[2]


@pytest.fixture
def standin() -> Iterator[StandIn]:
    with StandIn(world="demo") as server:
        yield server


def login(standin: StandIn, tmp_path: Path, *more: str) -> subprocess.Popen[str]:
    """``bin/connect login`` against the stand-in, its client secret the stand-in's control secret."""
    environment = {key: value for key, value in os.environ.items() if key != "BASECAMP_CLIENT_SECRET"}
    environment["BASECAMP_CLIENT_SECRET"] = standin.control_secret
    return subprocess.Popen(
        [str(REPOSITORY / "bin" / "connect"), "login", "--client-id", CLIENT_ID, "--launchpad", standin.base_url,
         "--token-file", str(tmp_path / "agent.token"), "--no-browser", *more],
        env=environment, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip


def test_login_obtains_a_token_by_the_loopback_redirect_and_keeps_it_owner_only(
    standin: StandIn, tmp_path: Path
) -> None:
    process = login(standin, tmp_path, "--json")
    assert process.stderr is not None
    line = process.stderr.readline()
    url = re.search(r"(http://\S+)", line)
    assert url is not None, line
    assert "redirect_uri=http%3A%2F%2F127.0.0.1%3A" in url.group(1)
    page = urllib3.request("GET", url.group(1), headers={"User-Agent": "a browser"})  # follows the 302
    assert page.status == 200
    assert b"Signed in" in page.data
    output, errors = process.communicate(timeout=30)
    assert process.returncode == 0, errors
    result = json.loads(output)
    token_file = tmp_path / "agent.token"
    assert result["token_file"] == str(token_file)
    assert result["accounts"] == [{"id": standin.world.account_id, "name": "Stand-in Studio", "href": standin.account_url}]
    assert result["identity"]["email_address"] == standin.world.agent.email_address
    assert stat.S_IMODE(os.stat(token_file).st_mode) == 0o600
    kept = read_token_text(token_file.read_text())
    assert isinstance(kept, Credentials)
    for secret in (kept.access_token, kept.refresh_token, standin.control_secret):
        assert secret not in output + line + errors
    client = BasecampClient(standin.base_url, standin.world.account_id, kept.access_token, "tests (t@example.com)")
    assert client.me(client.deadline_in(10)).id == standin.world.agent.id


def test_without_a_client_secret_nothing_is_asked_or_written(
    standin: StandIn, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("BASECAMP_CLIENT_SECRET", raising=False)
    arguments = ["login", "--client-id", CLIENT_ID, "--launchpad", standin.base_url,
                 "--token-file", str(tmp_path / "agent.token"), "--no-browser"]  # fmt: skip
    assert connect(arguments) == EXIT_CONFIG
    assert "no client secret: give --client-secret-file PATH or set BASECAMP_CLIENT_SECRET" in capsys.readouterr().err
    assert not (tmp_path / "agent.token").exists()
    assert standin.requests() == []


def test_a_sign_in_that_never_comes_back_writes_nothing(standin: StandIn, tmp_path: Path) -> None:
    process = login(standin, tmp_path, "--timeout", "0.5")
    _, errors = process.communicate(timeout=30)
    assert process.returncode == EXIT_UNAVAILABLE
    assert "no sign-in came back within 0.5 s; nothing written" in errors
    assert not (tmp_path / "agent.token").exists()


def test_login_help_has_an_example_and_the_exit_codes(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        connect(["login", "--help"])
    said = capsys.readouterr().out
    assert "bin/connect login --client-id" in said
    assert "exit codes: 0 written" in said
    assert "--json" in said


def test_the_device_flow_where_the_server_offers_it(standin: StandIn, tmp_path: Path) -> None:
    standin.launchpad.device_flow = True
    process = login(standin, tmp_path, "--device", "--json")
    assert process.stderr is not None
    line = process.stderr.readline()
    found = re.search(r"open (http://\S+) and enter the code (\S+)", line)
    assert found is not None, line
    time.sleep(1.5)  # a poll or two: authorization_pending
    approved = urllib3.request("GET", f"{found.group(1)}?user_code={found.group(2)}", headers={"User-Agent": "a phone"})
    assert approved.status == 200
    output, errors = process.communicate(timeout=30)
    assert process.returncode == 0, errors
    assert json.loads(output)["identity"]["email_address"] == standin.world.agent.email_address
    kept = read_token_text((tmp_path / "agent.token").read_text())
    assert isinstance(kept, Credentials)
    assert stat.S_IMODE(os.stat(tmp_path / "agent.token").st_mode) == 0o600


def test_the_device_flow_is_refused_where_the_server_does_not_offer_it(standin: StandIn, tmp_path: Path) -> None:
    process = login(standin, tmp_path, "--device")
    _, errors = process.communicate(timeout=30)
    assert process.returncode == EXIT_REFUSED
    assert "offers no device flow" in errors
    assert "sign in without --device, by the loopback redirect" in errors
    assert not (tmp_path / "agent.token").exists()


def _callback_url(process: subprocess.Popen[str]) -> tuple[str, str]:
    """The URL login asked a person to open, and the callback origin it names."""
    assert process.stderr is not None
    line = process.stderr.readline()
    found = re.search(r"(http://\S+)", line)
    assert found is not None, line
    redirect = dict(parse_qsl(urlsplit(found.group(1)).query))["redirect_uri"]
    return found.group(1), redirect


def test_a_stray_callback_without_the_sign_ins_state_is_refused_and_the_login_goes_on(
    standin: StandIn, tmp_path: Path
) -> None:
    """Another local user's request to the callback ends nothing; the real one still signs in."""
    process = login(standin, tmp_path, "--json")
    url, redirect = _callback_url(process)
    for stray in (f"{redirect}?code=forged", f"{redirect}?code=forged&state=guessed", f"{redirect}?error=access_denied"):
        assert urllib3.request("GET", stray, retries=False).status == 400
    assert process.poll() is None, "a stray callback ended the login"
    assert urllib3.request("GET", url, headers={"User-Agent": "a browser"}).status == 200  # the real one
    _, errors = process.communicate(timeout=30)
    assert process.returncode == 0, errors
    assert (tmp_path / "agent.token").exists()


def test_an_idle_connection_to_the_callback_never_holds_the_login_past_its_timeout(
    standin: StandIn, tmp_path: Path
) -> None:
    process = login(standin, tmp_path, "--timeout", "1")
    _, redirect = _callback_url(process)
    parts = urlsplit(redirect)
    with socket.create_connection((parts.hostname or "", parts.port or 0)):  # opened, and silent
        _, errors = process.communicate(timeout=30)  # before the fix: waited on the idle connection
    assert process.returncode == EXIT_UNAVAILABLE
    assert "no sign-in came back within 1 s; nothing written" in errors


def test_a_plain_http_launchpad_is_refused_before_anyone_is_sent_to_sign_in(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BASECAMP_CLIENT_SECRET", "s")
    code = connect(["login", "--client-id", CLIENT_ID, "--launchpad", "http://launchpad.example",
                    "--token-file", str(tmp_path / "agent.token"), "--no-browser", "--timeout", "1"])  # fmt: skip
    err = capsys.readouterr().err
    assert code == EXIT_CONFIG
    assert "--launchpad must be https" in err
    assert "open this page" not in err
    assert not (tmp_path / "agent.token").exists()


def test_launchpad_mints_no_token_without_the_stand_ins_secret(standin: StandIn) -> None:
    """Another local user who did not read the stand-in's first line mints nothing as the agent."""
    now = datetime.now(UTC)
    for guessed in ("standin-secret", "", standin.control_secret[:-1]):
        registered = app(f"{standin.base_url}{TOKEN_PATH}", CLIENT_ID, guessed, now)
        with pytest.raises(LaunchpadFailed, match="invalid_client"):
            token_request(refresh_form(registered), registered, now)


def test_a_device_endpoint_on_another_origin_is_not_followed(
    standin: StandIn, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A discovery document (Launchpad's answer) sends nobody elsewhere: a device endpoint on another
    origin is refused before the client id is sent to it."""
    standin.launchpad.device_flow = True
    with Trap("127.0.0.2") as trap:

        def elsewhere(answer: Answered) -> Answered:
            if "oauth-authorization-server" not in answer.path:
                return answer
            document = {**json.loads(answer.body), "device_authorization_endpoint": f"http://{trap.host}:{trap.port}/d"}
            return Answered(answer.path, answer.status, answer.headers, json.dumps(document).encode())

        with HostileBasecamp(standin.base_url, elsewhere) as hostile:
            monkeypatch.setenv("BASECAMP_CLIENT_SECRET", standin.control_secret)
            code = connect(["login", "--device", "--client-id", CLIENT_ID, "--launchpad", hostile.base_url,
                            "--token-file", str(tmp_path / "agent.token"), "--no-browser"])  # fmt: skip
    assert code == EXIT_REFUSED
    assert "a device endpoint on another origin: not followed" in capsys.readouterr().err
    assert trap.connections == 0
