"""The outbox loop outlives a busy ledger; found in review, a test that failed before its fix."""

from __future__ import annotations

import sqlite3
import threading
import time
from datetime import timedelta
from pathlib import Path

from shell.clock import FakeClock
from shell.ledger.connection import open_ledger
from shell.outbox import Outbox, OutboxOptions
from tests.support.fake_basecamp import AGENT_ID, FakeBasecamp


def test_a_busy_ledger_does_not_end_the_outbox_loop(ledger_path: Path, clock: FakeClock) -> None:
    with open_ledger(ledger_path, clock=clock, busy_timeout=0.1) as ledger:
        outbox = Outbox(ledger, FakeBasecamp(clock), AGENT_ID, OutboxOptions(tick=timedelta(seconds=0.01)))
        stop = threading.Event()
        errors: list[BaseException] = []

        def run() -> None:
            try:
                outbox.run(stop)
            except BaseException as error:
                errors.append(error)

        other = sqlite3.connect(ledger_path, isolation_level=None, timeout=0)
        other.execute("BEGIN IMMEDIATE")  # bin/outbox-resolve or the MCP server holding the lock
        thread = threading.Thread(target=run, daemon=True)
        thread.start()
        time.sleep(0.6)
        other.execute("ROLLBACK")
        other.close()
        time.sleep(0.2)
        alive = thread.is_alive()
        stop.set()
        thread.join(2)
    assert errors == []
    assert alive

