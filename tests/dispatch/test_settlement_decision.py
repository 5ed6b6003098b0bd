"""core.settlement.settle: how an attempt's end settles each row, never running an instruction twice."""

from hypothesis import example, given
from hypothesis import strategies as st

from core.edges import DeliveryState, RecordState
from core.settlement import SPAWN_FAILED, LiveRow, RowSettlement, settle
from core.snapshots import Settlement


def row(
    delivery: DeliveryState,
    *,
    exposed_here: bool = True,
    pulled: bool = False,
    retried: bool = False,
    record: RecordState = RecordState.dispatched,
    event_id: int = 1,
) -> LiveRow:
    return LiveRow(event_id, delivery, exposed_here, pulled, retried, record)


def test_a_reported_outcome_stands() -> None:
    assert settle([row(DeliveryState.completed, record=RecordState.completed)], spawn_failed=False) == (
        RowSettlement(1, Settlement.reported, None),
    )


def test_a_row_never_exposed_is_returned_to_admitted() -> None:
    assert settle([row(DeliveryState.admitted, exposed_here=False)], spawn_failed=False) == (
        RowSettlement(1, Settlement.returned, RecordState.admitted),
    )


def test_an_exposed_unreported_row_ends_unknown_whatever_stopped_the_attempt() -> None:
    for delivery in (DeliveryState.exposed, DeliveryState.delivered):
        assert settle([row(delivery, pulled=True)], spawn_failed=False) == (
            RowSettlement(1, Settlement.unknown, RecordState.completed),
        )


def test_a_proven_spawn_failure_is_withdrawn_once_for_one_automatic_retry() -> None:
    assert settle([row(DeliveryState.exposed)], spawn_failed=True) == (
        RowSettlement(1, Settlement.withdrawn, RecordState.admitted),
    )


def test_a_second_spawn_failure_blocks_the_record() -> None:
    assert settle([row(DeliveryState.exposed, retried=True)], spawn_failed=True) == (
        RowSettlement(1, Settlement.blocked_again, RecordState.blocked, SPAWN_FAILED),
    )


def test_a_pulled_row_is_never_withdrawn_even_if_the_spawn_was_said_to_fail() -> None:
    assert (
        settle([row(DeliveryState.exposed, pulled=True)], spawn_failed=True)[0].settlement
        is Settlement.unknown
    )


def test_a_row_another_attempt_exposed_is_not_withdrawn() -> None:
    assert (
        settle([row(DeliveryState.exposed, exposed_here=False)], spawn_failed=True)[0].settlement
        is Settlement.unknown
    )


def test_a_record_someone_else_moved_is_settled_where_it_was_put() -> None:
    (settled,) = settle([row(DeliveryState.exposed, record=RecordState.discarded)], spawn_failed=False)
    assert (settled.settlement, settled.record_to) == (Settlement.unknown, None)


@given(
    st.lists(
        st.builds(
            LiveRow,
            event_id=st.integers(1, 10**6),
            delivery=st.sampled_from(list(DeliveryState)),
            exposed_by_this_attempt=st.booleans(),
            pulled=st.booleans(),
            withdrawn_before=st.booleans(),
            record_state=st.sampled_from(list(RecordState)),
        ),
        max_size=8,
    ),
    st.booleans(),
)
@example(  # pulled from the task, never exposed by launch: the case a search can miss under load
    [LiveRow(1, DeliveryState.admitted, exposed_by_this_attempt=False, pulled=True, withdrawn_before=False,
             record_state=RecordState.dispatched)],
    False,  # spawn_failed
)
def test_nothing_a_worker_may_have_seen_goes_back_to_wait_for_another_worker(
    rows: list[LiveRow], spawn_failed: bool
) -> None:
    for live, settled in zip(rows, settle(rows, spawn_failed), strict=True):
        seen = live.pulled or live.delivery in (DeliveryState.delivered, DeliveryState.completed)
        if seen:
            assert settled.record_to not in (RecordState.admitted, RecordState.queued)
        if live.delivery == DeliveryState.exposed and not (spawn_failed and live.exposed_by_this_attempt):
            assert settled.settlement is Settlement.unknown
