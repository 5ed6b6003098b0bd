"""core.pacing: under Basecamp's rate limit, held after a 429, the poll's and the tickets' shares, and which
refusals last."""

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from core.pacing import (
    PASSING_4XX,
    lasting,
    poll_may_go,
    spacing_wait,
    ticket_allowance,
    ticket_wait,
    wait_before_next,
    what_to_fix,
)


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


def test_a_request_exactly_one_window_old_no_longer_counts() -> None:
    assert spacing_wait([1.0, 9.0], now=11.0, limit=4, window=10.0) == 0.0  # one in the window: no spacing
    assert spacing_wait([8.0, 9.0], now=11.0, limit=4, window=10.0) == 0.5  # two: 9 + 10/4 - 11
    assert poll_may_go([1.0, 2.0], now=11.0, waited=0.0, limit=4, window=10.0)


def test_a_poll_leaves_at_least_one_request_of_headroom_under_a_small_limit() -> None:
    assert poll_may_go([5.0], now=6.0, waited=0.0, limit=3, window=10.0)
    assert not poll_may_go([5.0, 5.5], now=6.0, waited=0.0, limit=3, window=10.0)


@pytest.mark.parametrize("status", [400, 403, 404, 405, 410, 413, 414, 422, 431, 451])
def test_every_4xx_but_those_a_retry_can_pass_is_lasting(status: int) -> None:
    assert lasting(status)


@pytest.mark.parametrize("status", [*sorted(PASSING_4XX), 200, 302, 500, 503])
def test_a_4xx_a_retry_can_pass_and_every_other_answer_is_not_lasting(status: int) -> None:
    assert not lasting(status)


def test_what_to_fix_names_the_file_or_the_setting() -> None:
    names = {"token_file": "/t/agent.token", "account_id": 999, "base_url": "https://b"}
    assert "/t/agent.token holds far more than a token" in what_to_fix(431, **names)
    assert "check the account id" in what_to_fix(403, **names)
    assert "no account 999 at https://b" in what_to_fix(404, **names)


def test_stream_tickets_get_two_of_the_budgets_47_and_at_least_one_of_any_budget() -> None:
    assert ticket_allowance() == 2
    assert ticket_allowance(10_000) == 500
    assert ticket_allowance(3) == 1


@given(st.lists(st.floats(min_value=0, max_value=0.5, allow_nan=False), min_size=1, max_size=200))
@example([0.3110163741309309, 0.3110163741309309, 0.2591554029367997])  # the wait fell a rounding short
def test_tickets_minted_whenever_allowed_never_pass_their_share_in_any_window(steps: list[float]) -> None:
    """A lane asking as often as it likes (each step a pause before asking again) gets at most
    ``ticket_allowance`` tickets in any window."""
    minted: list[float] = []
    now = 0.0
    for step in steps:
        now += step
        now += ticket_wait(minted, now, limit=47, window=10.0)
        minted.append(now)
    allowed = ticket_allowance(47)
    assert all(sum(1 for later in minted if first <= later < first + 10.0) <= allowed for first in minted)
