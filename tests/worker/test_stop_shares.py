"""core.worker_stream.stop_shares: how a stop's bound is shared between settling its workers
(SIGTERM, the grace, SIGKILL, the settlement) and flushing their notices."""

from hypothesis import given
from hypothesis import strategies as st

from core.worker_stream import GRACE_SECONDS, WORKERS_SHARE, stop_shares

BOUNDS = st.floats(min_value=0.0, max_value=86_400.0, allow_nan=False)


@given(BOUNDS)
def test_the_workers_are_settled_within_their_share_of_the_bound(bound: float) -> None:
    shares = stop_shares(bound)
    assert shares.workers <= bound
    assert shares.workers == bound * WORKERS_SHARE


@given(BOUNDS)
def test_the_sigkill_comes_with_half_the_workers_share_left_to_settle_them(bound: float) -> None:
    shares = stop_shares(bound)
    assert 0.0 <= shares.grace <= shares.workers / 2
    assert shares.grace <= GRACE_SECONDS


def test_the_default_bound_gives_each_worker_18_s_and_a_long_one_the_full_grace() -> None:
    assert (stop_shares(60.0).workers, stop_shares(60.0).grace) == (36.0, 18.0)
    assert stop_shares(5.0).grace == 1.5
    assert stop_shares(600.0).grace == GRACE_SECONDS


def test_a_bound_below_nothing_is_nothing() -> None:
    assert (stop_shares(-1.0).workers, stop_shares(-1.0).grace) == (0.0, 0.0)
