"""shell.basecamp.tokens against the stand-in's Launchpad over real HTTP: a login's token is
refreshed before it expires and once on a 401, the new pair is kept in the file, never two
refreshes in parallel; a bare token file keeps working and is never refreshed."""

from __future__ import annotations

import os
import stat
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from core.oauth import read_token_text
from shell.basecamp.client import BasecampClient
from shell.basecamp.errors import AuthenticationFailed
from shell.basecamp.standin.server import StandIn
from shell.basecamp.tokens import RefreshingToken, StaticToken
from shell.clock import SystemClock
from tests.support.launchpad import token_file_with

UA = "token tests (tests@example.com)"


@pytest.fixture
def standin() -> Iterator[StandIn]:
    with StandIn(world="demo") as server:
        yield server


def refreshing(standin: StandIn, tmp_path: Path, lifetime: int) -> tuple[RefreshingToken, Path]:
    standin.launchpad.token_lifetime = lifetime
    path = tmp_path / "agent.token"
    credentials = token_file_with(standin, path)
    return RefreshingToken(path, credentials, SystemClock()), path


def test_a_token_due_for_refresh_is_refreshed_and_the_new_pair_is_kept_owner_only(
    standin: StandIn, tmp_path: Path
) -> None:
    tokens, path = refreshing(standin, tmp_path, lifetime=1)  # due at once: a quarter of a second early
    before = read_token_text(path.read_text())
    import time

    time.sleep(0.8)
    token = tokens.current()
    kept = read_token_text(path.read_text())
    assert not isinstance(before, str)
    assert not isinstance(kept, str)
    assert token == kept.access_token != before.access_token
    assert kept.refresh_token != before.refresh_token, "the rotated refresh token is kept"
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert standin.launchpad.refreshes == 1
    client = BasecampClient(standin.base_url, standin.world.account_id, tokens, UA)
    assert client.me(client.deadline_in(10)).id == standin.world.agent.id


def test_a_401_is_answered_by_one_refresh_and_the_request_once_more(standin: StandIn, tmp_path: Path) -> None:
    tokens, _ = refreshing(standin, tmp_path, lifetime=3600)
    client = BasecampClient(standin.base_url, standin.world.account_id, tokens, UA)
    assert client.me(client.deadline_in(10)).id == standin.world.agent.id
    standin.launchpad.expire_all()
    assert client.me(client.deadline_in(10)).id == standin.world.agent.id
    assert standin.launchpad.refreshes == 1
    statuses = [request.status for request in standin.requests() if request.path.endswith("/my/profile.json")]
    assert statuses == [200, 401, 200]


def test_a_create_refused_401_is_made_once_more_after_the_refresh_and_lands_once(
    standin: StandIn, tmp_path: Path
) -> None:
    from core.destinations import Destination, MessageKind
    from core.posting import Created

    tokens, _ = refreshing(standin, tmp_path, lifetime=3600)
    client = BasecampClient(standin.base_url, standin.world.account_id, tokens, UA)
    card = standin.world.projects[0].recording_ids[0]
    standin.launchpad.expire_all()
    outcome = client.post(Destination(MessageKind.comment, standin.world.projects[0].id, card), "<div>hi</div>")
    assert isinstance(outcome, Created)
    agent = standin.world.agent.id
    assert len([m for m in standin.messages("comment", card) if m["creator"]["id"] == agent]) == 1
    assert [r.status for r in standin.requests() if r.method == "POST" and "comments" in r.path] == [401, 201]


def test_never_two_refreshes_in_parallel(standin: StandIn, tmp_path: Path) -> None:
    tokens, path = refreshing(standin, tmp_path, lifetime=3600)
    refused = tokens.current()
    standin.launchpad.expire_all()
    other = RefreshingToken(path, read_token_text(path.read_text()), SystemClock())  # type: ignore[arg-type]
    answers: list[str | None] = []
    threads = [
        threading.Thread(target=lambda source=source: answers.append(source.after_unauthorized(refused)))
        for source in (tokens, other) * 4
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert standin.launchpad.refreshes == 1, "one refresh, in this process and the other"
    assert len(set(answers)) == 1
    assert None not in answers


def test_a_bare_token_keeps_working_and_is_never_refreshed(standin: StandIn) -> None:
    client = BasecampClient(standin.base_url, standin.world.account_id, StaticToken(standin.world.token), UA)
    assert client.me(client.deadline_in(10)).id == standin.world.agent.id
    assert StaticToken("x").after_unauthorized("x") is None
    refused = BasecampClient(standin.base_url, standin.world.account_id, "not-a-token", UA)
    with pytest.raises(AuthenticationFailed):
        refused.me(refused.deadline_in(10))
    assert standin.launchpad.refreshes == 0


def test_the_tokens_name_every_credential_they_hold_and_a_refresh_names_the_new_pair(
    standin: StandIn, tmp_path: Path
) -> None:
    from core.fingerprints import ACCESS_TOKEN, CLIENT_SECRET, REFRESH_TOKEN

    tokens, path = refreshing(standin, tmp_path, lifetime=1)
    before = read_token_text(path.read_text())
    assert not isinstance(before, str)
    assert tokens.credentials() == ((ACCESS_TOKEN, before.access_token), (REFRESH_TOKEN, before.refresh_token),
                                    (CLIENT_SECRET, before.client_secret))  # fmt: skip
    import time

    time.sleep(0.8)
    tokens.current()
    kept = read_token_text(path.read_text())
    assert not isinstance(kept, str)
    assert dict(tokens.credentials()) == {ACCESS_TOKEN: kept.access_token, REFRESH_TOKEN: kept.refresh_token,
                                          CLIENT_SECRET: kept.client_secret}  # fmt: skip
    assert StaticToken("a-bare-token-of-its-own").credentials() == ((ACCESS_TOKEN, "a-bare-token-of-its-own"),)
