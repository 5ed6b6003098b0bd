"""core.settlement.read_back: the completion notice reads each event as its rows were settled."""

from __future__ import annotations

import pytest

from core.edges import DeliveryState, RecordState
from core.settlement import SPAWN_FAILED, SettledRow, read_back
from core.snapshots import SettledEvent, Settlement
from core.states import EventOutcome
from core.templates import completion_line


def row(
    delivery: DeliveryState = DeliveryState.exposed,
    outcome: EventOutcome = EventOutcome.none,
    *,
    reply_id: int | None = None,
    withdrawn: bool = False,
    record_state: RecordState = RecordState.completed,
    record_reason: str = "",
) -> SettledRow:
    return SettledRow(7, delivery, outcome, reply_id, withdrawn, record_state, record_reason)


def test_a_row_withdrawn_for_its_retry_reads_back_withdrawn() -> None:
    withdrawn = row(DeliveryState.exposed, withdrawn=True, record_state=RecordState.admitted)
    assert read_back(withdrawn) == SettledEvent(7, EventOutcome.unknown, None, Settlement.withdrawn)


def test_a_row_never_exposed_reads_back_returned() -> None:
    returned = row(DeliveryState.admitted, record_state=RecordState.admitted)
    assert read_back(returned) == SettledEvent(7, EventOutcome.unknown, None, Settlement.returned)


@pytest.mark.parametrize("outcome", [EventOutcome.succeeded, EventOutcome.failed])
def test_a_reported_outcome_reads_back_as_reported(outcome: EventOutcome) -> None:
    reported = row(DeliveryState.completed, outcome, reply_id=44)
    assert read_back(reported) == SettledEvent(7, outcome, 44, Settlement.reported)


@pytest.mark.parametrize("delivery", [DeliveryState.exposed, DeliveryState.delivered])
@pytest.mark.parametrize("outcome", [EventOutcome.none, EventOutcome.unknown])
def test_an_exposed_unreported_row_reads_back_unknown(delivery: DeliveryState, outcome: EventOutcome) -> None:
    exposed = row(delivery, outcome, reply_id=600)  # an adopted reply is a link, never an outcome
    assert read_back(exposed) == SettledEvent(7, EventOutcome.unknown, 600, Settlement.unknown)


def test_a_record_blocked_for_a_failed_start_reads_back_blocked_again() -> None:
    blocked = row(
        DeliveryState.exposed, withdrawn=True, record_state=RecordState.blocked, record_reason=SPAWN_FAILED
    )
    assert read_back(blocked) == SettledEvent(7, EventOutcome.unknown, None, Settlement.blocked_again)


def test_only_a_block_for_a_failed_start_reads_back_blocked_again() -> None:
    blocked = row(DeliveryState.exposed, record_state=RecordState.blocked, record_reason="read_failed")
    assert read_back(blocked).settlement is Settlement.unknown


def test_a_row_whose_record_a_pending_redispatch_admitted_reads_back_redispatched_with_no_line() -> None:
    row = SettledRow(
        event_id=5, delivery=DeliveryState.completed, outcome=EventOutcome.unknown, reply_id=None,
        withdrawn=False, record_state=RecordState.admitted, record_reason="",
    )
    settled = read_back(row)
    assert settled.settlement is Settlement.redispatched
    assert completion_line(settled) is None
