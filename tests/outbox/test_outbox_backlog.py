"""A backlog drains without the tick's pause between full batches; an idle outbox still ticks."""

from __future__ import annotations

import threading
import time
from datetime import timedelta

from core.posting import RUN_BATCH, wait_after_batch
from shell.clock import FakeClock
from shell.ledger.connection import Ledger
from shell.outbox import Outbox, OutboxOptions
from tests.support.fake_basecamp import AGENT_ID, FakeBasecamp
from tests.support.ledger_world import LedgerWorld


def test_a_full_batch_goes_on_at_once_and_a_partial_one_waits_its_tick() -> None:
    tick = timedelta(seconds=1)
    assert wait_after_batch(RUN_BATCH, RUN_BATCH, tick) == timedelta(0)
    assert wait_after_batch(RUN_BATCH - 1, RUN_BATCH, tick) == tick
    assert wait_after_batch(0, RUN_BATCH, tick) == tick


def test_the_running_outbox_drains_a_backlog_of_several_batches_without_waiting_a_tick_between(
    ledger: Ledger, world: LedgerWorld, clock: FakeClock
) -> None:
    for event_id in range(1, 3 * RUN_BATCH + 2):
        world.request(event_id)
    clock.advance(31)  # every guard is due
    basecamp = FakeBasecamp(clock)
    outbox = Outbox(ledger, basecamp, AGENT_ID, OutboxOptions(tick=timedelta(seconds=30)))
    stop = threading.Event()
    thread = threading.Thread(target=outbox.run, args=(stop,), daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and basecamp.post_count() < 3 * RUN_BATCH + 1:
        time.sleep(0.05)
    stop.set()
    thread.join(5)
    assert basecamp.post_count() == 3 * RUN_BATCH + 1, "four batches in well under one 30 s tick"
