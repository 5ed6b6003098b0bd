"""`bin/connect import FILE` in-process on a real ledger: a good file applied in one transaction;
a bad entry in the middle, a file too large, not JSON or of another version change nothing; the
connector running refuses it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.snapshots import StopReason
from shell.cli.main import main as connect
from shell.errors import EXIT_REFUSED, EXIT_UNAVAILABLE, EXIT_USAGE
from shell.ledger import tasks
from shell.ledger.connection import Ledger
from shell.state.lock import acquire
from tests.decisions.test_decision_command import configured
from tests.support.ledger_world import LedgerWorld


def everything(ledger: Ledger) -> list[tuple[object, ...]]:
    """Every row a failed import must leave as it was."""
    with ledger.read() as connection:
        rows = [tuple(row) for row in connection.execute("SELECT * FROM events ORDER BY id")]
        rows += [tuple(row) for row in connection.execute("SELECT * FROM decisions ORDER BY id")]
        rows += [tuple(row) for row in connection.execute("SELECT id, state, note FROM outbox ORDER BY id")]
    return rows


@pytest.fixture
def state(world: LedgerWorld, ledger: Ledger, tmp_path: Path) -> Path:
    world.request(1)  # admitted, its guard pending
    world.seen(2)
    world.verdict(2, "blocked", "summary_unreadable")
    world.request(3)
    launched = world.launch(3)
    with ledger.write() as connection:  # gone without a report: completed unknown
        tasks.end_attempt(
            connection, launched.attempt_id, StopReason.failed, spawn_failed=False, now=ledger.clock.now()
        )
    world.seen(4)  # waiting for its verdict
    return configured(ledger, tmp_path)


def import_file(
    state: Path, tmp_path: Path, content: bytes, capsys: pytest.CaptureFixture[str]
) -> tuple[int, str, str]:
    path = tmp_path / "reconciliation.json"
    path.write_bytes(content)
    code = connect(["import", str(path), "--state-dir", str(state), "--by", "local:ana", "--json"])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def entries(*pairs: tuple[int, str]) -> bytes:
    return json.dumps({"version": 1, "entries": [{"event_id": e, "decision": d} for e, d in pairs]}).encode()


def test_a_good_file_tombstones_what_is_done_and_tags_the_rest_in_one_go(
    state: Path, ledger: Ledger, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = import_file(
        state, tmp_path, entries((1, "done"), (3, "done"), (900, "done"), (2, "held")), capsys
    )
    assert (code, err) == (0, "")
    done = json.loads(out)
    assert (
        done["summary"] == "Imported 4 entries: 2 tombstoned, 1 tombstones added, 2 records tagged for review"
    )
    assert (done["tombstoned"], done["tombstones_added"], done["tagged_for_review"]) == (
        [1, 3],
        [900],
        [2, 4],
    )
    with ledger.read() as connection:
        rows = {
            row[0]: tuple(row[1:])
            for row in connection.execute("SELECT id, state, reason, review FROM events")
        }
        decided = connection.execute(
            "SELECT event_id, action, decided_by, from_state, from_outcome, note FROM decisions ORDER BY id"
        ).fetchall()
        guard = connection.execute(
            "SELECT state FROM outbox WHERE event_id = 1 AND kind = 'guard_ack'"
        ).fetchone()
    assert rows == {
        1: ("discarded", "imported_done", 0),
        2: ("blocked", "summary_unreadable", 1),
        3: ("discarded", "imported_done", 0),
        4: ("seen", "", 1),
        900: ("discarded", "imported_done", 0),
    }
    assert decided == [
        (1, "discard", "local:ana", "admitted", "", "imported from reconciliation.json: decided done"),
        (
            3,
            "discard",
            "local:ana",
            "completed",
            "unknown",
            "imported from reconciliation.json: decided done",
        ),
    ]
    assert guard == ("canceled",)


@pytest.mark.parametrize(
    "case",
    [
        (
            entries((1, "done"), (900, "done"), (4, "done"), (3, "done")),
            EXIT_REFUSED,
            "entry 2 (event 4): it is seen: waiting for its verdict",
        ),
        (
            entries((1, "done"), (1, "held")),
            EXIT_REFUSED,
            "entry 1 (event 1): named again (first at entry 0)",
        ),
        (b'{"version": 1, "entries": [', EXIT_USAGE, "not JSON"),
        (
            json.dumps({"version": 2, "entries": []}).encode(),
            EXIT_USAGE,
            "version 2: this program reads version 1",
        ),
        (b" " * (16 * 1024 * 1024 + 1), EXIT_USAGE, "16777217 bytes, larger than 16 MB"),
    ],
)
def test_a_file_that_cannot_be_applied_changes_nothing_and_says_why(
    case: tuple[bytes, int, str],
    state: Path,
    ledger: Ledger,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    content, code, words = case
    before = everything(ledger)
    answer, out, err = import_file(state, tmp_path, content, capsys)
    assert answer == code
    assert words in err
    assert err.strip().endswith("; nothing was changed")
    assert json.loads(out)["exit_code"] == code
    assert everything(ledger) == before


def test_import_refuses_while_the_connector_runs(
    state: Path, ledger: Ledger, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = everything(ledger)
    with acquire(state, 999, 42, ledger.clock.now()):
        code, _, err = import_file(state, tmp_path, entries((1, "done")), capsys)
    assert code == EXIT_UNAVAILABLE
    assert "a connector already runs for account 999 as agent 42 (pid " in err
    assert everything(ledger) == before


def test_import_has_help_with_an_example_and_its_exit_codes(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        connect(["import", "--help"])
    assert exited.value.code == 0
    text = capsys.readouterr().out
    assert "  bin/connect import reconciliation.json" in text
    assert "exit codes: 0 " in text
    assert "--json" in text
