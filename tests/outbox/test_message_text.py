"""core.text and core.timestamps: the words of a message, and time as the ledger keeps it."""

from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.text import message_text, printable
from core.timestamps import clock_time, format_timestamp, parse_timestamp


@pytest.mark.parametrize(
    ("content", "words"),
    [
        ('<div dir="auto">Task 4 ended.<br>Event 7: failed.</div>', "Task 4 ended. Event 7: failed."),
        ("<div>Task 4 ended.<br/>Event 7</div>", "Task 4 ended. Event 7"),
        ("<p>one</p><p>two</p>", "one two"),
        ("<strong>bold</strong> text", "bold text"),
        ("Fish &amp; chips &lt;3", "Fish & chips <3"),
        ("  many \n\n spaces\t", "many spaces"),
        ("👀 received", "👀 received"),
    ],
)
def test_message_text_keeps_the_words(content: str, words: str) -> None:
    assert message_text(content) == words


def test_an_escaped_tag_stays_text() -> None:
    assert message_text("a &lt;b&gt; c") == "a <b> c"


@given(st.datetimes(min_value=datetime(2000, 1, 1), max_value=datetime(2200, 1, 1), timezones=st.just(UTC)))
def test_stored_time_round_trips_and_is_fixed_width(moment: datetime) -> None:
    text = format_timestamp(moment)
    assert len(text) == len("2026-11-29T21:53:35.123456789Z")
    assert parse_timestamp(text) == moment


@given(
    st.datetimes(min_value=datetime(2000, 1, 1), max_value=datetime(2200, 1, 1), timezones=st.just(UTC)),
    st.timedeltas(min_value=timedelta(0), max_value=timedelta(days=400)),
)
def test_text_order_is_time_order(moment: datetime, later_by: timedelta) -> None:
    assert (format_timestamp(moment) <= format_timestamp(moment + later_by)) is True


def test_a_naive_time_is_refused() -> None:
    with pytest.raises(ValueError, match="naive"):
        format_timestamp(datetime(2026, 1, 1))


def test_other_zones_are_stored_as_utc_and_basecamp_times_parse() -> None:
    plus_two = timezone(timedelta(hours=2))
    assert format_timestamp(datetime(2026, 1, 1, 14, 0, tzinfo=plus_two)) == "2026-01-01T12:00:00.000000000Z"
    assert parse_timestamp("2026-03-23T22:24:02.130Z") == datetime(2026, 3, 23, 22, 24, 2, 130000, tzinfo=UTC)
    assert clock_time(datetime(2026, 1, 1, 14, 5, tzinfo=plus_two)) == "12:05 UTC"


def test_a_less_than_that_opens_no_tag_stays_text_and_a_tag_never_spans_another() -> None:
    """core.text: a tag is ``<`` to the next ``>`` with no ``<`` between, which is what
    keeps normalising linear (``<[^>]*>`` took 27 s over one listed line of 200,000 ``<``)."""
    assert message_text("2 < 3 <b>yes</b>") == "2 < 3 yes"
    assert message_text("a <<b>c") == "a <c"
    hostile = "<" * 200_000
    assert message_text(hostile) == hostile  # one pass: each scan stops at the next "<"


@pytest.mark.parametrize(
    ("name", "shown"),
    [
        ("Ada Lovelace", "Ada Lovelace"),
        ("Zoë 👀", "Zoë 👀"),
        ("Ada\x1b[31m red", "Ada\\x1b[31m red"),
        ("one\ntwo\rthree\tfour", "one\\ntwo\\rthree\\tfour"),
        ("del\x7f bel\x07 c1\x85", "del\\x7f bel\\x07 c1\\x85"),
        ("evil\u202egnp.exe", "evil\\u202egnp.exe"),
    ],
)
def test_a_name_is_shown_with_its_control_characters_escaped(name: str, shown: str) -> None:
    """core.text.printable: a Basecamp name reaches a terminal as text, never as a command to it."""
    assert printable(name) == shown
