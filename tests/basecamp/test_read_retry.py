"""core.pacing: Basecamp's SDK read policy, with plain values."""

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.pacing import (
    BACKOFF_CAP_SECONDS,
    MAX_READ_ATTEMPTS,
    Final,
    RetryAfter,
    after_read,
    backoff_seconds,
    parse_retry_after,
)

NOW = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        ("1", 1.0),
        ("2", 2.0),
        (" 17 ", 17.0),
        ("0", None),
        ("-1", None),
        ("120junk", None),
        ("", None),
        (None, None),
        ("Sun, 29 Nov 2026 12:00:05 GMT", 5.0),
        ("Sun, 29 Nov 2026 12:00:01 GMT", 1.0),
        ("Sun, 29 Nov 2026 12:00:00 GMT", None),
        ("Sun, 29 Nov 2026 11:59:00 GMT", None),
        ("not a date at all", None),
    ],
)
def test_retry_after_is_honoured_only_when_positive_or_future(
    header: str | None, expected: float | None
) -> None:
    assert parse_retry_after(header, NOW) == expected


def test_a_future_date_is_rounded_up_to_the_next_second() -> None:
    assert parse_retry_after("Sun, 29 Nov 2026 12:00:05 GMT", NOW - timedelta(milliseconds=300)) == 6.0


@pytest.mark.parametrize("status", [400, 401, 403, 404, 422, 500, 502, 504, 200])
def test_only_429_and_503_are_asked_again(status: int) -> None:
    assert after_read(status, 1, None, NOW) == Final()


@pytest.mark.parametrize("status", [429, 503])
def test_429_and_503_are_asked_again_up_to_three_attempts(status: int) -> None:
    assert after_read(status, 1, None, NOW) == RetryAfter(1.0)
    assert after_read(status, 2, None, NOW) == RetryAfter(2.0)
    assert after_read(status, MAX_READ_ATTEMPTS, None, NOW) == Final()


def test_a_valid_retry_after_replaces_the_backoff_and_a_bad_one_does_not() -> None:
    assert after_read(429, 1, "9", NOW) == RetryAfter(9.0)
    assert after_read(503, 1, "Sun, 29 Nov 2026 12:00:05 GMT", NOW) == RetryAfter(5.0)
    assert after_read(429, 2, "120junk", NOW, jitter=0.05) == RetryAfter(2.05)


@given(st.integers(min_value=0, max_value=60))
def test_backoff_doubles_and_is_capped(index: int) -> None:
    wait = backoff_seconds(index)
    assert wait <= BACKOFF_CAP_SECONDS
    assert wait == min(2.0**index, BACKOFF_CAP_SECONDS)
