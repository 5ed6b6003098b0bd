"""shell.cli.seam: the one place both command lines turn an error into one line and an exit code.

Plain callables stand in for a subcommand; the real outbox-resolve words (``OWN_WORDS``) and the
real ledger errors are used, so what a person reads here is what they read at a terminal.
"""

from __future__ import annotations

import sqlite3

import pytest

from shell.cli.resolve import OWN_WORDS
from shell.cli.seam import answer
from shell.errors import EXIT_CONFIG, EXIT_NOT_FOUND, EXIT_OK, EXIT_UNAVAILABLE, UserError
from shell.ledger.connection import LedgerBusy


def raising(error: BaseException) -> int:
    raise error


def test_a_command_that_ends_well_answers_its_own_code(capsys: pytest.CaptureFixture[str]) -> None:
    assert answer(lambda: EXIT_OK) == EXIT_OK
    assert answer(lambda: 1) == 1
    assert capsys.readouterr().err == ""


def test_a_user_error_is_one_line_on_stderr_and_its_exit_code(capsys: pytest.CaptureFixture[str]) -> None:
    assert answer(lambda: raising(UserError("the ledger holds no event 9", EXIT_NOT_FOUND))) == EXIT_NOT_FOUND
    seen = capsys.readouterr()
    assert seen.err == "error: the ledger holds no event 9\n"
    assert seen.out == ""


def test_ctrl_c_ends_a_command_with_130_and_says_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    assert answer(lambda: raising(KeyboardInterrupt())) == 130
    assert capsys.readouterr().err == ""


def test_a_command_lines_own_words_come_before_the_plain_line(capsys: pytest.CaptureFixture[str]) -> None:
    busy = LedgerBusy("database is locked")
    assert answer(lambda: raising(busy), OWN_WORDS) == EXIT_UNAVAILABLE
    assert capsys.readouterr().err == "error: the ledger is busy, nothing was changed; try again: database is locked\n"
    assert answer(lambda: raising(busy)) == EXIT_UNAVAILABLE  # bin/connect: the plain line
    assert capsys.readouterr().err == "error: database is locked\n"


def test_outbox_resolve_says_an_unreadable_ledger_is_a_ledger_problem(capsys: pytest.CaptureFixture[str]) -> None:
    assert answer(lambda: raising(sqlite3.DatabaseError("file is not a database")), OWN_WORDS) == EXIT_CONFIG
    assert capsys.readouterr().err == "error: the ledger could not be read: file is not a database\n"


def test_anything_else_is_a_bug_and_keeps_its_traceback() -> None:
    with pytest.raises(ZeroDivisionError):
        answer(lambda: 1 // 0, OWN_WORDS)
    with pytest.raises(sqlite3.DatabaseError):
        answer(lambda: raising(sqlite3.DatabaseError("bin/connect has no words for it")))
