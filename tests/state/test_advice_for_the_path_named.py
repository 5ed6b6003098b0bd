"""Advice only for the path named: a missing ledger is said to be missing, and
a mode fix (``chmod``) is offered only for a path the connector made, never for a shared
(sticky) directory, a system directory or a stranger's file; real files and directories, through
the real command lines."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from shell.cli.main import main as connect
from shell.cli.resolve import main as resolve
from shell.errors import EXIT_CONFIG
from shell.ledger.connection import LedgerNotPrivate, open_ledger
from shell.state.config import StatePaths


def said(capsys: pytest.CaptureFixture[str], code: int) -> str:
    assert code == EXIT_CONFIG
    return capsys.readouterr().err


@pytest.fixture
def shared(tmp_path: Path) -> Path:
    """A directory like /tmp: everyone's, sticky."""
    directory = tmp_path / "shared"
    directory.mkdir()
    directory.chmod(0o1777)
    return directory


def test_a_mistyped_ledger_in_a_shared_directory_is_said_to_be_missing(
    shared: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    err = said(capsys, resolve(["--ledger", str(shared / "ledgr.sqlite3"), "list"]))
    assert f"{shared / 'ledgr.sqlite3'}: no ledger here" in err
    assert "chmod" not in err


def test_a_real_ledger_in_a_shared_directory_gets_no_mode_advice_for_that_directory(
    shared: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    open_ledger(tmp_path / "own" / "ledger.sqlite3").close()
    (tmp_path / "own" / "ledger.sqlite3").rename(shared / "ledger.sqlite3")
    err = said(capsys, resolve(["--ledger", str(shared / "ledger.sqlite3"), "list"]))
    assert "not one the connector made" in err
    assert "chmod" not in err


def test_a_new_ledger_in_a_shared_directory_gets_no_mode_advice(shared: Path) -> None:
    with pytest.raises(LedgerNotPrivate) as refused:
        open_ledger(shared / "ledger.sqlite3")
    assert "not one the connector made" in str(refused.value)
    assert "chmod" not in str(refused.value)


def test_a_stranger_file_named_as_the_ledger_gets_no_mode_advice_for_it_or_its_directory(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    system = tmp_path / "etc"
    system.mkdir(mode=0o755)
    system.chmod(0o755)
    (system / "passwd").write_text("root:x:0:0:root:/root:/bin/bash\n")
    (system / "passwd").chmod(0o644)
    err = said(capsys, resolve(["--ledger", str(system / "passwd"), "list"]))
    assert "not one the connector made" in err
    assert "chmod" not in err
    system.chmod(0o700)
    err = said(capsys, resolve(["--ledger", str(system / "passwd"), "list"]))
    assert f"the ledger {system / 'passwd'} is open to others" in err
    assert "chmod" not in err


def test_doctor_gives_no_mode_advice_for_a_directory_that_holds_no_state(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    system = tmp_path / "system"
    system.mkdir()
    system.chmod(0o755)
    capsys.readouterr()
    connect(["doctor", "--state-dir", str(system), "--json"])
    checks = {check["name"]: check for check in json.loads(capsys.readouterr().out)["checks"]}
    assert checks["state directory"]["status"] == "failing"
    assert "chmod" not in checks["state directory"]["detail"] + checks["state directory"]["advice"]
    assert "bin/connect setup" in checks["state directory"]["advice"]


def test_a_state_directory_the_connector_made_still_gets_its_mode_fix(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    paths = StatePaths.at(tmp_path / "state")
    open_ledger(paths.ledger).close()
    paths.directory.chmod(0o750)
    err = said(capsys, connect(["hold", "--reason", "r", "--state-dir", str(paths.directory)]))
    assert f"make it owner-only: chmod 700 {paths.directory}" in err
    capsys.readouterr()
    connect(["doctor", "--state-dir", str(paths.directory), "--json"])
    checks = {check["name"]: check for check in json.loads(capsys.readouterr().out)["checks"]}
    assert checks["state directory"]["advice"] == f"make it this user's own and owner-only: chmod 700 {paths.directory}"
    paths.directory.chmod(0o700)
    paths.ledger.chmod(0o644)
    err = said(capsys, resolve(["--ledger", str(paths.ledger), "list"]))
    assert f"make it owner-only: chmod 600 {paths.ledger}" in err
