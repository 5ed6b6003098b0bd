"""core.pacing: under Basecamp's rate limit, and held after a 429."""

from hypothesis import given
from hypothesis import strategies as st

from core.pacing import wait_before_next


def test_under_the_limit_nothing_waits() -> None:
    assert wait_before_next([1.0, 2.0], now=3.0, held_until=0.0, limit=3, window=10.0) == 0.0


def test_at_the_limit_the_next_waits_until_the_oldest_leaves_the_window() -> None:
    assert wait_before_next([1.0, 2.0, 3.0], now=4.0, held_until=0.0, limit=3, window=10.0) == 7.0


def test_requests_older_than_the_window_do_not_count() -> None:
    assert wait_before_next([1.0, 2.0, 3.0], now=11.5, held_until=0.0, limit=3, window=10.0) == 0.0


def test_a_429_holds_every_request_until_its_retry_after() -> None:
    assert wait_before_next([], now=5.0, held_until=9.0) == 4.0


@given(
    st.lists(st.floats(min_value=0, max_value=100, allow_nan=False), max_size=60).map(sorted),
    st.floats(min_value=0, max_value=120, allow_nan=False),
)
def test_after_the_wait_the_window_has_room(sent: list[float], now: float) -> None:
    sent = [moment for moment in sent if moment <= now]
    wait = wait_before_next(sent, now, held_until=0.0, limit=5, window=10.0)
    assert wait <= 10.0
    # Waking at the time it named, the caller finds room (up to float rounding at the edge).
    assert wait_before_next(sent, now + wait, held_until=0.0, limit=5, window=10.0) < 1e-9
