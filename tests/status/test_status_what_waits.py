"""`bin/connect status` says what waits, on real ledger files: the outbox's
counts (a guard waiting under a hold shows), what each record not yet running waits for (the
hold, not a worker slot, while one stands), only the decisions the rules accept, "seen"
explained, and a shadow run's own state directory read with its parent's configuration."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.timestamps import parse_timestamp
from shell.cli.main import main as connect
from shell.errors import EXIT_REFUSED
from shell.ledger.connection import Ledger, open_ledger
from shell.ledger.hold import set_hold
from tests.status import test_status_ledger as on_ledger
from tests.status.test_status_ledger import status, status_json
from tests.support.ledger_world import LedgerWorld

state = on_ledger.state  # the fixture: the ledger fixture's state directory, configured


def test_the_outbox_is_counted_and_a_guard_held_back_by_the_hold_shows(
    ledger: Ledger, state: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    world = LedgerWorld(ledger)
    world.request(1)
    found = status_json(capsys, state)
    assert found["outbox"]["states"] == {
        "pending": 1, "sending": 0, "sent": 0, "indeterminate": 0, "canceled": 0, "abandoned": 0,
    }  # fmt: skip
    assert found["outbox"]["waiting_to_post"] == {"guard_ack": 1}
    assert found["outbox"]["held_back_by_hold"] == 0
    set_hold(ledger, "local:test", "cutting over", parse_timestamp(world.now()))  # holds record 1
    world.request(2)  # heard and admitted under the hold: its guard waits
    found = status_json(capsys, state)
    assert found["outbox"]["held_back_by_hold"] == 1
    assert "on hold (1 message kept back)" in found["summary"]
    _, out, _ = status(capsys, "--state-dir", str(state))
    assert "lifecycle messages: pending 1 · sending 0" in out
    assert "the hold keeps the 1 pending back until `bin/connect release`" in out


def test_a_record_waiting_under_a_hold_waits_for_the_hold_and_no_refused_advice_is_given(
    ledger: Ledger, state: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    world = LedgerWorld(ledger)
    set_hold(ledger, "local:test", "cutting over", parse_timestamp(world.now()))
    world.request(1)  # admitted under the hold
    found = status_json(capsys, state)
    waiting = {record["event_id"]: record for record in found["not_running"]}
    assert waiting[1]["waits_for"] == "hold"
    assert waiting[1]["decisions"] == ["discard"]
    _, out, _ = status(capsys, "--state-dir", str(state))
    assert "event 1 admitted comment.created: held still by the hold" in out
    assert "waiting for a worker slot" not in out
    assert "redispatch" not in out.split("records not yet running")[1].split("dispatches")[0]
    code = connect(["redispatch", "1", "--state-dir", str(state)])
    assert code == EXIT_REFUSED, "what status no longer advises is what the rules refuse"


def test_a_blocked_record_is_offered_redispatch_and_discard(
    ledger: Ledger, state: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    world = LedgerWorld(ledger)
    world.seen(2)
    world.verdict(2, "blocked", "read_failed")
    found = status_json(capsys, state)
    blocked = next(record for record in found["not_running"] if record["event_id"] == 2)
    assert blocked["decisions"] == ["redispatch", "discard"]
    assert blocked["waits_for"] in ("admission", "person")
    _, out, _ = status(capsys, "--state-dir", str(state))
    assert "a blocked one: bin/connect redispatch EVENT_ID" in out
    assert "records: seen 0 · " in out
    assert "(seen: read from the feed, no verdict yet)" in out


def test_status_reads_a_shadow_runs_state_directory(
    ledger: Ledger, state: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shadow = open_ledger(state / "shadow" / "ledger.sqlite3", clock=ledger.clock)
    LedgerWorld(shadow).request(5)
    shadow.close()
    for arguments in (["--state-dir", str(state), "--shadow"], ["--state-dir", str(state / "shadow")]):
        code, out, err = status(capsys, *arguments, "--json")
        assert (code, err) == (0, "")
        assert '"shadow": true' in out
        assert '"event_id": 5' in out
        code, out, _ = status(capsys, *arguments)
        assert out.startswith("shadow run (admits and logs; dispatches and posts nothing) · ")
    assert '"shadow": false' in status(capsys, "--state-dir", str(state), "--json")[1]
