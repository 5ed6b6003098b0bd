"""The real ``bin/connect run`` against the stand-in, with a worker that reads the agent's token file
and hands the token to its tools in each listed encoding: each call is refused, Basecamp gets only
the worker's plain reply, and the attempt says why; the ledger holds the token's fingerprints, never
the token."""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from shell.basecamp.standin.server import StandIn
from shell.state.config import StatePaths
from tests.support.child import wait_until
from tests.support.configured import REPOSITORY, configure_connector, start_run

pytestmark = pytest.mark.slow


def _ended(ledger: Path) -> str | None:
    with sqlite3.connect(f"file:{ledger}?mode=ro", uri=True) as connection:
        found = connection.execute("SELECT words_refused FROM attempts WHERE state = 'ended'").fetchone()
    return None if found is None else str(found[0])


def test_a_worker_that_reads_the_token_cannot_post_it_in_any_encoding(tmp_path: Path) -> None:
    said = tmp_path / "said.jsonl"
    with StandIn(world="demo") as standin:
        worker = [sys.executable, str(REPOSITORY / "tests" / "support" / "leaking_worker.py"),
                  "--mcp-config", "{mcp_config}", "--token-file", str(tmp_path / "token"), "--said", str(said)]
        state = configure_connector(standin, tmp_path, worker=["env", f"PYTHONPATH={REPOSITORY}", *worker])
        ledger = StatePaths.at(state).ledger
        process = start_run(state)
        try:
            card = standin.world.projects[0].recordings[0].id
            standin.mention(standin.world.people[0], card, "please look")
            wait_until(lambda: _ended(ledger) is not None, timeout=90)
        finally:
            process.send_signal(signal.SIGTERM)
            _, err = process.communicate(timeout=60)
        token = standin.world.token
        posted = [message["content"] for kind in ("comment", "boost") for message in standin.messages(kind, card)]
    answers = [json.loads(line) for line in said.read_text().splitlines()]
    assert [answer["encoding"] for answer in answers] == ["as is", "base64", "url-encoded", "hex"]
    assert all("holds_credential" in str(answer["answer"]) for answer in answers), answers
    assert any("Nothing to share." in content for content in posted), posted
    assert not any(token in content or token.encode().hex() in content for content in posted)
    why = "reply_dispatch: its words held the agent's access token, so nothing was written"
    assert _ended(ledger) == why
    shown = subprocess.run([str(REPOSITORY / "bin" / "connect"), "status", "--state-dir", str(state), "--json"],
                           capture_output=True, text=True, timeout=60, check=True)  # fmt: skip
    assert [dispatch["words_refused"] for dispatch in json.loads(shown.stdout)["dispatches"]] == [why]
    stored = b"".join(path.read_bytes() for path in ledger.parent.glob(ledger.name + "*"))
    assert token.encode() not in stored
    assert process.returncode == 0, err
