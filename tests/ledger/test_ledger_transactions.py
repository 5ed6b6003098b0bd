"""Transactions: BEGIN IMMEDIATE takes the write lock at once, an exception rolls back, a
read is one snapshot, transactions do not nest, and a lock held too long is ``LedgerBusy``."""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from shell.ledger import connection as ledger_module
from shell.ledger.connection import Ledger, LedgerBusy, LedgerMisuse, open_ledger

Insert = Callable[..., int]
STAMP = "2026-11-29T12:00:00.000000000Z"


class Boom(Exception):
    pass


def raw_connection(path: Path) -> sqlite3.Connection:
    """A second connection that never waits: a held lock shows at once as busy."""
    return sqlite3.connect(path, isolation_level=None, timeout=0)


def event_count(ledger: Ledger) -> int:
    with ledger.read() as connection:
        return int(connection.execute("SELECT count(*) FROM events").fetchone()[0])


def test_a_write_commits_at_the_end_of_the_block(
    ledger: Ledger, ledger_path: Path, insert: Insert
) -> None:
    with ledger.write() as connection:
        insert(connection, "events", id=1)
    other = raw_connection(ledger_path)
    assert other.execute("SELECT id FROM events").fetchall() == [(1,)]
    other.close()


def test_an_exception_rolls_the_write_back_and_is_raised(ledger: Ledger, insert: Insert) -> None:
    def write_then_fail() -> None:
        with ledger.write() as connection:
            insert(connection, "events", id=1)
            raise Boom

    with pytest.raises(Boom):
        write_then_fail()
    assert event_count(ledger) == 0
    with ledger.write() as connection:  # the connection is usable again
        insert(connection, "events", id=2)
    assert event_count(ledger) == 1


def test_a_refused_statement_rolls_back_the_whole_write(ledger: Ledger, insert: Insert) -> None:
    def write_a_refused_second_row() -> None:
        with ledger.write() as connection:
            insert(connection, "events", id=1)
            insert(connection, "events", id=2, state="no such state")

    with pytest.raises(sqlite3.IntegrityError):
        write_a_refused_second_row()
    assert event_count(ledger) == 0


def test_a_write_takes_the_write_lock_when_it_begins(ledger: Ledger, ledger_path: Path) -> None:
    other = raw_connection(ledger_path)
    with ledger.write():  # not one statement yet: a deferred BEGIN would hold no lock
        with pytest.raises(sqlite3.OperationalError, match="locked"):
            other.execute("BEGIN IMMEDIATE")
        assert other.execute("SELECT count(*) FROM events").fetchone() == (0,)  # WAL: reads go on
    other.execute("BEGIN IMMEDIATE")
    other.execute("ROLLBACK")
    other.close()


def test_a_second_writer_waits_for_the_first(
    ledger: Ledger, ledger_path: Path, insert: Insert
) -> None:
    order: list[str] = []
    with open_ledger(ledger_path) as second:

        def write_second() -> None:
            with second.write() as connection:
                order.append("second began")
                insert(connection, "events", id=2)

        with ledger.write() as connection:
            insert(connection, "events", id=1)
            writer = threading.Thread(target=write_second)
            writer.start()
            time.sleep(0.15)
            order.append("first commits")
        writer.join(timeout=5)
    assert order == ["first commits", "second began"]
    assert event_count(ledger) == 2


def test_a_lock_held_past_the_busy_timeout_is_ledger_busy(
    ledger: Ledger, ledger_path: Path
) -> None:
    with open_ledger(ledger_path, busy_timeout=0.2) as impatient, ledger.write():
        started = time.monotonic()
        with pytest.raises(LedgerBusy, match=r"gave up after 0\.2 s"), impatient.write():
            pass
        assert 0.15 < time.monotonic() - started < 2


def test_begin_is_retried_while_sqlite_answers_busy(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ledger_module, "BUSY_RETRY_SLEEP_SECONDS", 0.001)
    answers = iter(["busy", "locked", "done"])

    def flaky() -> str:
        answer = next(answers)
        if answer in ("busy", "locked"):
            error = sqlite3.OperationalError(f"database is {answer}")
            error.sqlite_errorcode = (
                sqlite3.SQLITE_BUSY if answer == "busy" else sqlite3.SQLITE_LOCKED
            )
            raise error
        return answer

    assert ledger_module.retry_busy(flaky, 1.0, Path("x")) == "done"


def test_any_other_error_is_not_retried() -> None:
    calls: list[int] = []

    def broken() -> None:
        calls.append(1)
        error = sqlite3.OperationalError("disk I/O error")
        error.sqlite_errorcode = sqlite3.SQLITE_IOERR
        raise error

    with pytest.raises(sqlite3.OperationalError, match="disk"):
        ledger_module.retry_busy(broken, 1.0, Path("x"))
    assert calls == [1]


def test_a_read_is_one_snapshot(ledger: Ledger, ledger_path: Path, insert: Insert) -> None:
    other = raw_connection(ledger_path)
    with ledger.read() as connection:
        assert connection.execute("SELECT count(*) FROM events").fetchone() == (0,)
        other.execute(
            "INSERT INTO events (id, state, seen_at, updated_at) VALUES (1, 'seen', ?, ?)",
            (STAMP, STAMP),
        )
        assert connection.execute("SELECT count(*) FROM events").fetchone() == (0,)
    assert event_count(ledger) == 1
    other.close()


def test_transactions_do_not_nest(ledger: Ledger) -> None:
    with ledger.write(), pytest.raises(LedgerMisuse, match="do not nest"), ledger.read():
        pass


def test_a_closed_ledger_refuses_a_transaction(ledger_path: Path) -> None:
    closed = open_ledger(ledger_path)
    closed.close()
    with pytest.raises(LedgerMisuse, match="closed"), closed.write():
        pass


def test_threads_sharing_a_ledger_take_turns(ledger: Ledger, insert: Insert) -> None:
    def write_many(start: int) -> None:
        for number in range(start, start + 25):
            with ledger.write() as connection:
                insert(connection, "events", id=number)

    threads = [threading.Thread(target=write_many, args=(start,)) for start in (1, 101, 201, 301)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=10)
    assert event_count(ledger) == 100


def test_the_ledger_stamps_time_with_its_clock(ledger: Ledger) -> None:
    assert ledger.timestamp() == "2026-11-29T12:00:00.000000000Z"
