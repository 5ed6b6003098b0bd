"""What the outbox binds into its statements is plain: a state is bound as its word, never as the
enum member, which ``sqlite3`` would first ask how to adapt itself (``bin/bench outbox``)."""

from __future__ import annotations

import sqlite3

from core.edges import IntentState
from shell.clock import FakeClock
from shell.outbox import Outbox, SendResult
from tests.support.fake_basecamp import FakeBasecamp
from tests.support.ledger_world import LedgerWorld


def test_a_claim_and_its_receipt_bind_each_state_as_its_plain_word(
    world: LedgerWorld, outbox: Outbox, basecamp: FakeBasecamp, clock: FakeClock
) -> None:
    adapted: list[object] = []
    key = (IntentState, sqlite3.PrepareProtocol)
    sqlite3.register_adapter(IntentState, lambda state: adapted.append(state) or str(state))
    try:
        world.request(101)
        clock.advance(31)
        assert outbox.flush().results[0] is SendResult.sent
    finally:
        del sqlite3.adapters[key]
    assert basecamp.post_count() == 1
    assert world.outbox()[0][2] == "sent"
    assert adapted == []
