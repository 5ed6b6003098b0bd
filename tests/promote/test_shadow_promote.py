"""`bin/connect shadow promote` in-process on real ledger files: the shadow's ledger becomes the
connector's under the hold, the old one kept aside; again, it says so; it refuses while either
connector holds its lock; `run` refuses while a promote is unfinished."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from shell.cli.main import main as connect
from shell.clock import FakeClock
from shell.errors import EXIT_CONFIG, EXIT_UNAVAILABLE
from shell.ledger.connection import open_ledger
from shell.state.config import SHADOW_DIRECTORY, StatePaths
from shell.state.lock import acquire
from tests.promote.world import assert_promoted, records, shadow_state
from tests.support.ledger_world import LedgerWorld


def promote(state: Path, capsys: pytest.CaptureFixture[str], *more: str) -> tuple[int, str, str]:
    code = connect(["shadow", "promote", "--state-dir", str(state), "--by", "local:ana", *more])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_promote_holds_the_shadow_ledger_and_moves_it_into_place(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = shadow_state(tmp_path)
    code, out, err = promote(state, capsys, "--json")
    assert (code, err) == (0, "")
    done = json.loads(out)
    assert (done["promoted"], done["tagged_for_review"], done["held"]) == (True, 4, 2)
    assert done["steps"] == ["begin", "hold", "set_aside", "move", "finish"]
    assert done["old_ledger_kept_as"].startswith("ledger.before-promote-")
    assert done["summary"].startswith(
        "Promoted under the hold: 4 records tagged for review, 2 held; the old ledger"
    )
    assert_promoted(state)
    code, out, _ = promote(state, capsys)
    assert (code, out.strip()) == (0, "Already promoted; the ledger is held")
    assert_promoted(state)


def test_with_no_old_ledger_nothing_is_kept_aside(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    state = shadow_state(tmp_path, old_ledger=False)
    code, out, _ = promote(state, capsys, "--json")
    assert code == 0
    assert json.loads(out)["steps"] == ["begin", "hold", "move", "finish"]
    assert records(StatePaths.at(state).ledger)[31] == ("held", 1)


def test_nothing_to_promote_is_one_line_and_exit_3(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = shadow_state(tmp_path)
    StatePaths.at(state / SHADOW_DIRECTORY).ledger.unlink()
    code, _, err = promote(state, capsys)
    assert (code, err.strip()) == (
        EXIT_CONFIG,
        "error: there is no shadow ledger to promote: run `bin/connect run --shadow` first",
    )


@pytest.mark.parametrize("running", ["connector", "shadow"])
def test_promote_refuses_while_either_connector_runs_naming_it(
    running: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = shadow_state(tmp_path)
    where = state if running == "connector" else state / SHADOW_DIRECTORY
    with acquire(where, 999, 42, FakeClock().now()):
        code, _, err = promote(state, capsys)
    assert code == EXIT_UNAVAILABLE
    assert "a connector already runs for account 999 as agent 42 (pid " in err
    assert ("the shadow connector runs" in err) == (running == "shadow")
    assert not (state / "promote.json").exists()
    assert records(StatePaths.at(state / SHADOW_DIRECTORY).ledger)[31] == ("admitted", 0)


@pytest.mark.parametrize("shadow", [False, True])
def test_run_refuses_while_a_promote_is_unfinished(
    shadow: bool, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = shadow_state(tmp_path)
    (state / "promote.json").write_text(json.dumps({"cause": "shadow promote x", "aside": None}))
    code = connect(["run", "--state-dir", str(state), *(["--shadow"] if shadow else [])])
    err = capsys.readouterr().err
    assert code == EXIT_CONFIG
    assert "a shadow promote began and has not finished; run `bin/connect shadow promote` again" in err


def test_promote_has_help_with_an_example_and_its_exit_codes(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        connect(["shadow", "promote", "--help"])
    assert exited.value.code == 0
    text = capsys.readouterr().out
    assert "  bin/connect shadow promote" in text
    assert "exit codes: 0 " in text
    assert "--json" in text


def test_an_old_ledger_a_killed_connector_left_with_its_log_is_set_aside_whole(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = shadow_state(tmp_path)
    old = StatePaths.at(state).ledger
    leave_a_commit_in_the_log = (
        "import os, sqlite3, sys\n"
        "c = sqlite3.connect(sys.argv[1], isolation_level=None)\n"
        "c.execute('PRAGMA wal_autocheckpoint = 0')\n"
        "c.execute('UPDATE events SET review = 1 WHERE id = 77')\n"
        "os._exit(0)\n"  # no close: the commit stays in the -wal, as after a SIGKILL
    )
    subprocess.run([sys.executable, "-c", leave_a_commit_in_the_log, str(old)], check=True)
    assert Path(f"{old}-wal").exists()
    assert promote(state, capsys)[0] == 0
    kept = next(state.glob("ledger.before-promote-*.sqlite3"))
    assert records(kept) == {77: ("admitted", 1)}, "the commit in its log went aside with it"
    assert not Path(f"{old}-wal").exists(), "no log is left where the promoted ledger now lives"


def test_an_old_ledger_with_a_message_in_flight_is_not_set_aside_and_nothing_changes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = shadow_state(tmp_path)
    with open_ledger(StatePaths.at(state).ledger, clock=FakeClock()) as old:
        LedgerWorld(old).request(78)  # its guard is pending: only this ledger would ever send it
    shadow_before = records(StatePaths.at(state / SHADOW_DIRECTORY).ledger)
    code, _, err = promote(state, capsys)
    assert code == EXIT_CONFIG
    assert "the connector's ledger still holds 1 lifecycle message(s) not yet final" in err
    assert not (state / "promote.json").exists(), "promote did not begin"
    assert records(StatePaths.at(state / SHADOW_DIRECTORY).ledger) == shadow_before
    assert set(records(StatePaths.at(state).ledger)) == {77, 78}, "the connector's ledger is where it was"
    assert list(state.glob("ledger.before-promote-*")) == []
