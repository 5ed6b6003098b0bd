"""``shell.ledger.connection.WriteFailures``: the record's slot and its flag move together, one thread at a
time. A real record file; the one interleaving that would lose a failure is forced, not hoped for:
a clear is held between reading the flag and blanking the slot while another thread records a
failure. Taken in turns, the failure comes after the clear and stays; without the turn it would be
blanked (and the flag say no record), so ``status`` would never show it."""

from __future__ import annotations

import threading
from datetime import UTC, datetime
from pathlib import Path

import pytest

from shell.ledger import connection as write_failures
from shell.ledger.connection import WriteFailures, read_write_failure

WINDOW_SECONDS = 1.0
"""How long the clear is held open for the failure to slip in (it can only when there is no turn)."""
AT = datetime(2026, 12, 2, 1, 0, tzinfo=UTC)


def test_a_failure_recorded_while_a_clear_is_under_way_is_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ledger_path = tmp_path / "ledger.sqlite3"
    record = WriteFailures.beside(ledger_path)
    record.failed(OSError("database or disk is full"), AT)  # an earlier failure: a clear is due
    real_write = write_failures._write_slot
    clearing, recorded = threading.Event(), threading.Event()

    def held_open(descriptor: int, slot: bytes) -> None:
        if threading.current_thread().name == "clear":
            clearing.set()
            recorded.wait(WINDOW_SECONDS)  # the flag is read; the slot not yet blanked
        real_write(descriptor, slot)
        if threading.current_thread().name == "fail":
            recorded.set()

    monkeypatch.setattr(write_failures, "_write_slot", held_open)
    clear = threading.Thread(target=record.succeeded, name="clear")
    fail = threading.Thread(target=record.failed, args=(OSError("disk I/O error"), AT), name="fail")
    clear.start()
    assert clearing.wait(5)
    fail.start()
    for thread in (clear, fail):
        thread.join(10)
    record.close()
    kept = read_write_failure(ledger_path)
    assert kept is not None, "the later failure is recorded, not blanked by the clear"
    assert kept.why == "disk I/O error"
