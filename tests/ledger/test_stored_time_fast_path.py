"""``core.timestamps.parse_timestamp`` reads the ledger's own fixed-width form at once (the
outbox reads two a claim) and answers exactly what the general reading answers; anything else
in that width goes the general way."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core import timestamps
from core.timestamps import LEDGER_FORM_LENGTH, format_timestamp, parse_timestamp


def general_reading(text: str) -> datetime:
    """The same text read with the fast path's form made unrecognisable (a trailing space)."""
    return parse_timestamp(text + " ")


@given(
    st.datetimes(min_value=datetime(1900, 1, 1), max_value=datetime(9000, 1, 1), timezones=st.just(UTC)),
    st.text("0123456789", min_size=3, max_size=3),
)
def test_the_ledgers_form_reads_as_the_general_reading_does_whatever_its_last_three_digits(
    moment: datetime, last_digits: str
) -> None:
    text = format_timestamp(moment)[:26] + last_digits + "Z"
    assert len(text) == LEDGER_FORM_LENGTH
    assert parse_timestamp(text) == general_reading(text) == moment
    assert parse_timestamp(text).tzinfo == UTC


@pytest.mark.parametrize(
    "text", ["2026-11-29T21:53:35.12345678xZ", "2026-11-29T21:53:35,123456789Z", "2026-11-29T21:53:35.123456789+"]
)
def test_text_of_that_width_in_another_form_reads_as_the_general_reading_does(text: str) -> None:
    assert len(text) == timestamps.LEDGER_FORM_LENGTH
    try:
        expected: datetime | type[ValueError] = general_reading(text)
    except ValueError:
        expected = ValueError
    if expected is ValueError:
        with pytest.raises(ValueError, match="isoformat"):
            parse_timestamp(text)
    else:
        assert parse_timestamp(text) == expected
