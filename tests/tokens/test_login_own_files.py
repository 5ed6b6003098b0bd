"""`bin/connect login` writes over no file it does not own, as a real process
against the stand-in's Launchpad: one test per kind of file. A ledger with records, a
configuration, a stranger's file, a name a state directory reserves and a path inside a state
directory are each refused before the sign-in starts (exit 3, no URL offered), and each is
left byte for byte as it was; a token file of its own kind is replaced."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest
import urllib3

from core.oauth import Credentials, read_token_text
from shell.basecamp.standin.launchpad import CLIENT_ID
from shell.basecamp.standin.server import StandIn
from shell.errors import EXIT_CONFIG
from shell.ledger.connection import open_ledger, open_ledger_read_only
from tests.support.configured import REPOSITORY, configure_connector
from tests.support.ledger_world import LedgerWorld
from tests.tokens import test_login_command as login_command

pytestmark = pytest.mark.slow
standin = login_command.standin  # the fixture: a stand-in whose Launchpad signs in


def login(standin: StandIn, token_file: Path) -> subprocess.Popen[str]:
    environment = {**os.environ, "BASECAMP_CLIENT_SECRET": standin.control_secret}
    return subprocess.Popen(
        [str(REPOSITORY / "bin" / "connect"), "login", "--client-id", CLIENT_ID, "--launchpad", standin.base_url,
         "--token-file", str(token_file), "--no-browser", "--timeout", "30"],
        env=environment, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip


def refused(standin: StandIn, token_file: Path) -> str:
    """Login pointed at ``token_file``: refused before any sign-in, the file untouched."""
    before = token_file.read_bytes() if token_file.exists() else None
    process = login(standin, token_file)
    output, errors = process.communicate(timeout=60)
    assert process.returncode == EXIT_CONFIG, errors
    assert "open this page" not in errors, errors
    assert output == ""
    assert (token_file.read_bytes() if token_file.exists() else None) == before
    assert not [name for name in os.listdir(token_file.parent) if name.endswith(".tmp")]
    return errors


def ledger_with_records(path: Path) -> None:
    ledger = open_ledger(path)
    world = LedgerWorld(ledger)
    for event_id in (101, 102, 103):
        world.request(event_id)
    ledger.close()


def events_in(path: Path) -> int:
    with open_ledger_read_only(path) as ledger, ledger.read() as connection:
        return int(connection.execute("SELECT count(*) FROM events").fetchone()[0])


def test_a_ledger_with_records_in_its_state_directory_is_refused_and_keeps_every_record(
    standin: StandIn, tmp_path: Path
) -> None:
    state = configure_connector(standin, tmp_path)
    ledger_with_records(state / "ledger.sqlite3")
    assert "inside a state directory" in refused(standin, state / "ledger.sqlite3")
    assert events_in(state / "ledger.sqlite3") == 3


def test_a_ledger_kept_outside_any_state_directory_is_refused_by_what_it_holds(
    standin: StandIn, tmp_path: Path
) -> None:
    state = tmp_path / "state"
    ledger_with_records(state / "ledger.sqlite3")
    backup = tmp_path / "backup.db"
    backup.write_bytes((state / "ledger.sqlite3").read_bytes())
    backup.chmod(0o600)
    assert "it holds a ledger (an SQLite database), not a token file" in refused(standin, backup)
    assert events_in(backup) == 3


def test_a_configuration_is_refused_inside_its_state_directory_and_by_what_it_holds_elsewhere(
    standin: StandIn, tmp_path: Path
) -> None:
    state = configure_connector(standin, tmp_path)
    assert "inside a state directory" in refused(standin, state / "config.json")
    elsewhere = tmp_path / "settings.json"
    elsewhere.write_bytes((state / "config.json").read_bytes())
    elsewhere.chmod(0o600)
    assert "it holds a connector configuration, not a token file" in refused(standin, elsewhere)


def test_a_file_of_another_kind_is_refused(standin: StandIn, tmp_path: Path) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("the things I must not lose\nline two\n")
    notes.chmod(0o600)
    assert "it holds a file of another kind, not a token file" in refused(standin, notes)


def test_a_name_a_state_directory_reserves_is_refused_where_no_file_is_yet(
    standin: StandIn, tmp_path: Path
) -> None:
    for name, kind in (("ledger.sqlite3", "a ledger"), ("config.json", "a connector configuration")):
        assert f"its name ({name}) is reserved for {kind}" in refused(standin, tmp_path / name)


def test_a_new_path_inside_a_state_directory_is_refused(standin: StandIn, tmp_path: Path) -> None:
    state = configure_connector(standin, tmp_path)
    assert "inside a state directory" in refused(standin, state / "agent.token")
    assert not (state / "agent.token").exists()


def test_a_token_file_of_its_own_kind_is_replaced(standin: StandIn, tmp_path: Path) -> None:
    token_file = tmp_path / "agent.token"
    token_file.write_text("an-old-bare-token\n")
    token_file.chmod(0o600)
    process = login(standin, token_file)
    assert process.stderr is not None
    url = re.search(r"(http://\S+)", process.stderr.readline())
    assert url is not None
    assert urllib3.request("GET", url.group(1), headers={"User-Agent": "a browser"}).status == 200
    _, errors = process.communicate(timeout=30)
    assert process.returncode == 0, errors
    assert isinstance(read_token_text(token_file.read_text()), Credentials)
