"""`bin/connect hold` and `bin/connect release` as a person runs them, in-process on a real ledger:
what they print (text and --json), their help, and a bad reason."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.snapshots import StopReason
from shell.cli.main import main as connect
from shell.errors import EXIT_USAGE
from shell.ledger import tasks
from shell.ledger.connection import Ledger
from tests.decisions.test_decision_command import configured
from tests.support.ledger_world import LedgerWorld


def run(capsys: pytest.CaptureFixture[str], *words: str) -> tuple[int, str, str]:
    code = connect(list(words))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_hold_then_release_as_a_person_types_them(
    world: LedgerWorld, ledger: Ledger, capsys: pytest.CaptureFixture[str]
) -> None:
    world.request(31)
    state = str(ledger.path.parent)
    code, out, err = run(capsys, "hold", "--state-dir", state, "--reason", " cutting over ", "--by", "local:ana", "--json")
    assert (code, err) == (0, "")
    held = json.loads(out)
    assert (held["generation"], held["held_by"], held["cause"], held["held_records"]) == (1, "local:ana", "cutting over", [31])
    assert held["summary"].startswith("Held (generation 1): nothing launches or posts until `bin/connect release`")
    code, out, _ = run(capsys, "hold", "--state-dir", state, "--reason", "again", "--by", "local:bob")
    assert (code, out.strip()) == (0, "Hold renewed (generation 2): nothing launches or posts until "
                                      "`bin/connect release`; 0 waiting records held, 1 tagged for review")
    code, out, _ = run(capsys, "release", "--state-dir", state, "--by", "local:bob", "--json")
    assert code == 0
    assert json.loads(out) == {"released": True, "released_by": "local:bob", "generation": 2, "held_records": 1,
                               "summary": "Released; 1 held record stays held"}
    code, out, _ = run(capsys, "release", "--state-dir", state)
    assert (code, out.strip()) == (0, "No hold stood")


def test_a_hold_needs_a_reason_of_words(ledger: Ledger, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "hold", "--state-dir", str(ledger.path.parent), "--reason", "   ")
    assert (code, err.strip()) == (EXIT_USAGE, "error: --reason says why the connector is held; it may not be empty")


@pytest.mark.parametrize("reason", ["cutting\nover", "\x1b[31mred", "bell\x07", "del\x7f", " \t ", "rtl\u202e"])
def test_a_reason_with_a_control_character_is_refused_and_nothing_is_held(
    ledger: Ledger, capsys: pytest.CaptureFixture[str], reason: str
) -> None:
    code, out, err = run(capsys, "hold", "--state-dir", str(ledger.path.parent), "--reason", reason)
    assert (code, out) == (EXIT_USAGE, "")
    assert err.startswith("error: --reason may not hold control characters")
    assert err.count("\n") == 1
    code, out, _ = run(capsys, "release", "--state-dir", str(ledger.path.parent))
    assert (code, out.strip()) == (0, "No hold stood")


@pytest.mark.parametrize("command", ["hold", "release", "settle-launch"])
def test_each_command_has_help_with_an_example_and_its_exit_codes(
    command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        connect([command, "--help"])
    assert exited.value.code == 0
    text = capsys.readouterr().out
    assert f"  bin/connect {command}" in text
    assert "exit codes: 0 " in text
    assert "--json" in text


def test_a_redispatch_under_the_hold_says_nothing_launches_until_release(
    world: LedgerWorld, ledger: Ledger, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    world.request(41)
    launched = world.launch(41)
    with ledger.write() as connection:
        tasks.end_attempt(connection, launched.attempt_id, StopReason.lost, spawn_failed=False, now=ledger.clock.now())
    state = configured(ledger, tmp_path)
    assert run(capsys, "hold", "--state-dir", str(state), "--reason", "cutover")[0] == 0
    code, out, _ = run(capsys, "redispatch", "41", "--state-dir", str(state), "--by", "local:ada")
    assert code == 0
    assert "Event 41 admitted again" in out
    assert "; the hold stands, so nothing launches until `bin/connect release`" in out
