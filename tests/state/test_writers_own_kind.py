"""No writer of a token or a configuration replaces a file of another kind:
``core.file_kinds`` on plain values, then ``save_config`` and ``write_atomically`` on real files,
a real ledger with records among them."""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.configuration import Configuration, parse_configuration, to_mapping
from core.file_kinds import SQLITE_HEADER, FileKind, kind_of, replace_refusal
from core.oauth import Credentials, to_text
from shell import private_files
from shell.ledger.connection import open_ledger
from shell.private_files import OtherKind
from shell.state.config import save_config
from tests.support.ledger_world import LedgerWorld

CONFIGURATION = parse_configuration(
    {"account_id": 999, "base_url": "https://3.basecampapi.com", "agent_id": 42, "token_file": "/t/agent.token"}
)
assert isinstance(CONFIGURATION, Configuration)
WORD = st.text(st.characters(min_codepoint=33, max_codepoint=126), min_size=1, max_size=200)


def may_replace(own: FileKind, name: str, head: bytes | None) -> bool:
    return replace_refusal(own, name, head) is None


def credentials(access: str) -> Credentials:
    now = datetime(2026, 12, 2, tzinfo=UTC)
    return Credentials(access, "refresh", now + timedelta(days=14), now, "https://l/t", "client", "secret")


@given(WORD)
def test_a_bare_token_and_a_logins_file_are_tokens(word: str) -> None:
    if not word.startswith("{"):
        assert kind_of(word.encode() + b"\n") is FileKind.token
    assert kind_of(to_text(credentials(word.replace('"', "").replace("\\", "") or "a")).encode()) is FileKind.token


def test_each_kind_is_named_from_its_first_bytes() -> None:
    assert kind_of(SQLITE_HEADER + b"\x10\x00") is FileKind.ledger
    assert kind_of((json.dumps(to_mapping(CONFIGURATION), indent=2) + "\n").encode()) is FileKind.configuration
    assert kind_of(b"") is FileKind.empty
    assert kind_of(b"  \n") is FileKind.empty
    assert kind_of(b"two words\n") is FileKind.other
    assert kind_of(b'{"version": 1, "pid": 4}') is FileKind.other
    assert kind_of(b"\xff\xfe") is FileKind.other


def test_a_writer_replaces_only_its_own_kind_under_a_name_of_its_own() -> None:
    assert may_replace(FileKind.token, "agent.token", None)
    assert may_replace(FileKind.token, "agent.token", b"")
    assert may_replace(FileKind.token, "agent.token", b"old-token\n")
    assert not may_replace(FileKind.token, "agent.token", SQLITE_HEADER)
    assert not may_replace(FileKind.token, "ledger.sqlite3", None)
    assert not may_replace(FileKind.token, "ledger.sqlite3-wal", None)
    assert not may_replace(FileKind.token, "config.json", None)
    assert may_replace(FileKind.configuration, "config.json", None)
    assert not may_replace(FileKind.configuration, "config.json", b"a-token\n")


def test_save_config_refuses_a_config_json_that_holds_a_token_and_leaves_it(tmp_path: Path) -> None:
    state = tmp_path / "state"
    private_files.ensure_directory(state, "state directory")
    token = state / "config.json"
    private_files.write_new_file(token, b"the-agents-token\n")
    with pytest.raises(OtherKind, match="holds a token file, not a connector configuration"):
        save_config(token, CONFIGURATION)
    assert token.read_bytes() == b"the-agents-token\n"
    assert os.listdir(state) == ["config.json"]
    save_config(state / "fresh" / "config.json", CONFIGURATION)
    save_config(state / "fresh" / "config.json", CONFIGURATION)  # its own kind: replaced


def test_a_token_writer_renames_over_no_ledger_with_records(tmp_path: Path) -> None:
    ledger = open_ledger(tmp_path / "kept.db")
    LedgerWorld(ledger).request(7)
    ledger.close()
    before = (tmp_path / "kept.db").read_bytes()
    with pytest.raises(OtherKind, match="holds a ledger"):
        private_files.write_atomically(tmp_path / "kept.db", b"a-token\n", FileKind.token)
    assert (tmp_path / "kept.db").read_bytes() == before
    assert not [name for name in os.listdir(tmp_path) if name.endswith(".tmp")]
