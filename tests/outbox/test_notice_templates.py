"""core.templates: every word the connector posts, rendered from record values alone."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core import templates
from core.destinations import MessageKind
from core.edges import AttemptState
from core.snapshots import AttemptSnapshot, SettledEvent, Settlement, StopReason
from core.states import EventOutcome
from core.text import message_text

SIGNATURE = "automatic notice from the Basecamp connector"
STARTED = datetime(2026, 11, 29, 12, 0, 41, tzinfo=UTC)


def attempt(
    *, stop_reason: str = "failed", progress_at: datetime | None = None, live: bool = False
) -> AttemptSnapshot:
    return AttemptSnapshot(
        attempt_id="att_0123456789abcdef01234567",
        task_id=4,
        state=AttemptState.running if live else AttemptState.ended,
        started_at=STARTED,
        progress_at=progress_at,
        stop_reason="" if live else stop_reason,
    )


def settled(
    event_id: int,
    outcome: EventOutcome = EventOutcome.succeeded,
    reply_id: int | None = 900,
    settlement: Settlement = Settlement.reported,
) -> SettledEvent:
    return SettledEvent(event_id, outcome, reply_id, settlement)


# -- the guard ------------------------------------------------------------------------------


def test_the_guard_is_eyes_and_received() -> None:
    assert templates.guard_acknowledgement() == ("👀 received",)
    assert templates.render(templates.guard_acknowledgement(), MessageKind.boost) == "👀 received"


def test_the_guard_fits_a_boost() -> None:
    (line,) = templates.guard_acknowledgement()
    assert len(line) <= 16 == templates.BOOST_LIMIT


def test_a_boost_of_sixteen_code_points_renders() -> None:
    assert templates.render(("x" * 16,), MessageKind.boost) == "x" * 16
    assert templates.render(("👀" * 16,), MessageKind.boost) == "👀" * 16


def test_a_boost_of_seventeen_code_points_is_refused() -> None:
    with pytest.raises(ValueError, match="at most 16 code points"):
        templates.render(("x" * 17,), MessageKind.boost)


@pytest.mark.parametrize("lines", [(), ("one", "two")])
def test_a_boost_is_one_line(lines: tuple[str, ...]) -> None:
    with pytest.raises(ValueError, match="one line"):
        templates.render(lines, MessageKind.boost)


# -- the holding reply ----------------------------------------------------------------------

HOLDING_LINES = (
    "I can't start on this here yet: this project is not one my connector is set up to work "
    "in, so nothing was run.",
    "Once the project is added to the connector's configuration, a person can run it with: "
    "bin/connect redispatch 31",
    "",
    f"Event 31 · {SIGNATURE}",
)


def test_the_holding_reply_names_our_redispatch_command() -> None:
    assert templates.holding_reply(31) == HOLDING_LINES


def test_the_holding_reply_as_a_comment() -> None:
    assert templates.render(templates.holding_reply(31), MessageKind.comment) == (
        "<div>I can't start on this here yet: this project is not one my connector is set up to work in, so "
        "nothing was run.<br>Once the project is added to the connector's configuration, a "
        "person can run it with: bin/connect redispatch 31<br><br>"
        f"Event 31 · {SIGNATURE}</div>"
    )


def test_the_holding_reply_as_a_chat_line() -> None:
    assert templates.render(templates.holding_reply(31), MessageKind.chat_line) == "\n".join(
        HOLDING_LINES
    )


# -- the still-running notice ---------------------------------------------------------------


def test_still_running_with_progress() -> None:
    lines = templates.still_running(
        attempt(live=True, progress_at=datetime(2026, 11, 29, 12, 8, 59, tzinfo=UTC)),
        2,
        datetime(2026, 11, 29, 12, 10, 41, tzinfo=UTC),
    )
    assert lines == (
        "Working on this as of 12:10 UTC: task 4 started at 12:00 UTC. "
        "Last progress at 12:08 UTC.",
        "",
        f"Attempt att_0123456789abcdef01234567, update 2 · {SIGNATURE}",
    )


def test_still_running_before_any_progress() -> None:
    (first, _, _) = templates.still_running(
        attempt(live=True), 1, datetime(2026, 11, 29, 12, 10, tzinfo=UTC)
    )
    assert first == (
        "Working on this as of 12:10 UTC: task 4 started at 12:00 UTC. "
        "No progress reported by then."
    )


def test_still_running_times_are_utc_whatever_the_zone_given() -> None:
    tokyo = timezone(timedelta(hours=9))
    (first, _, _) = templates.still_running(
        attempt(live=True), 1, datetime(2026, 11, 29, 21, 10, tzinfo=tokyo)
    )
    assert first.startswith("Working on this as of 12:10 UTC:")


# -- the completion notice ------------------------------------------------------------------

STOPS = {
    "finished": "the worker finished",
    "failed": "the worker failed",
    "deadline": "the worker was stopped at the task's deadline",
    "shutdown": "the connector shut down and stopped the worker",
    "lost": "the worker was lost",
}


@pytest.mark.parametrize(("reason", "sentence"), STOPS.items())
def test_each_stop_reason_has_its_sentence(reason: str, sentence: str) -> None:
    assert templates.stop_sentence(reason) == sentence
    lines = templates.completion(attempt(stop_reason=reason), [settled(7, EventOutcome.failed)])
    assert lines is not None
    assert lines[0] == f"Task 4 ended: {sentence}."


@pytest.mark.parametrize("reason", ["", "exploded", "FINISHED"])
def test_any_other_stop_reason_says_only_that_it_stopped(reason: str) -> None:
    assert templates.stop_sentence(reason) == "the worker stopped"


def test_every_stop_reason_the_ledger_knows_has_a_sentence() -> None:
    assert set(STOPS) == {reason.value for reason in StopReason}


def test_a_completion_notice_names_what_needs_a_person_in_event_order() -> None:
    lines = templates.completion(
        attempt(stop_reason="shutdown"),
        [
            settled(15, EventOutcome.succeeded, reply_id=None),
            settled(12, EventOutcome.unknown, None, Settlement.unknown),
            settled(11, EventOutcome.succeeded, reply_id=501),
            settled(14, EventOutcome.none, None, Settlement.blocked_again),
            settled(10, EventOutcome.failed, reply_id=None),
            settled(13, EventOutcome.none, None, Settlement.withdrawn),
            settled(16, EventOutcome.none, None, Settlement.returned),
        ],
    )
    assert lines == (
        "Task 4 ended: the connector shut down and stopped the worker.",
        "Event 10: failed. Needs a person: bin/connect redispatch 10",
        "Event 12: unknown, the worker did not report on it. "
        "Needs a person: bin/connect redispatch 12",
        "Event 14: the worker could not be started. Needs a person: bin/connect redispatch 14",
        "Event 15: succeeded, with no reply reported.",
        "",
        f"Attempt att_0123456789abcdef01234567 · {SIGNATURE}",
    )


def test_an_unknown_event_whose_reply_was_adopted_is_named_without_asking_a_person() -> None:
    adopted = SettledEvent(12, EventOutcome.unknown, None, Settlement.unknown, adopted_reply_id=7001)
    lines = templates.completion(attempt(stop_reason="lost"), [adopted, settled(13, EventOutcome.unknown, None,
                                                                                 Settlement.unknown)])
    assert lines is not None
    assert lines[1:3] == (
        "Event 12: the worker replied but did not report on it.",
        "Event 13: unknown, the worker did not report on it. Needs a person: bin/connect redispatch 13",
    )


def test_a_completion_notice_as_a_comment() -> None:
    lines = templates.completion(attempt(stop_reason="lost"), [settled(9, EventOutcome.failed)])
    assert lines is not None
    assert templates.render(lines, MessageKind.comment) == (
        "<div>Task 4 ended: the worker was lost.<br>"
        "Event 9: failed. Needs a person: bin/connect redispatch 9<br><br>"
        f"Attempt att_0123456789abcdef01234567 · {SIGNATURE}</div>"
    )


def test_no_notice_when_every_event_succeeded_with_a_reply() -> None:
    assert templates.completion(
        attempt(stop_reason="finished"), [settled(1), settled(2, reply_id=77)]
    ) is None


def test_no_notice_for_events_withdrawn_or_returned() -> None:
    assert templates.completion(
        attempt(stop_reason="failed"),
        [
            settled(1, EventOutcome.none, None, Settlement.withdrawn),
            settled(2, EventOutcome.none, None, Settlement.returned),
            settled(3),
        ],
    ) is None


def test_no_notice_for_no_events() -> None:
    assert templates.completion(attempt(), []) is None


def test_a_success_without_a_reply_is_named_and_asks_nothing() -> None:
    line = templates.completion_line(settled(5, EventOutcome.succeeded, reply_id=None))
    assert line == "Event 5: succeeded, with no reply reported."
    assert "redispatch" not in (line or "")


def test_a_success_whose_reply_could_not_be_posted_is_named_so_and_asks_nothing() -> None:
    refused = replace(settled(5, EventOutcome.succeeded, reply_id=None), reply_not_posted=True)
    line = templates.completion_line(refused)
    assert line == "Event 5: succeeded, but its reply could not be posted."
    assert templates.completion_line(replace(refused, outcome=EventOutcome.failed)) == (
        "Event 5: failed. Needs a person: bin/connect redispatch 5"
    ), "a failure asks for a person whatever became of its reply"


@pytest.mark.parametrize(
    "event",
    [
        settled(5, EventOutcome.failed, None),
        settled(5, EventOutcome.failed, 44),
        settled(5, EventOutcome.unknown, None, Settlement.unknown),
        settled(5, EventOutcome.none, None, Settlement.unknown),
        settled(5, EventOutcome.none, None, Settlement.blocked_again),
    ],
)
def test_failed_unknown_and_unstartable_ask_for_our_redispatch(event: SettledEvent) -> None:
    line = templates.completion_line(event)
    assert line is not None
    assert line.endswith("Needs a person: bin/connect redispatch 5")
    assert "basecamp connect" not in line


def test_an_adopted_reply_leaves_unknown_unknown() -> None:
    # An adopted reply is a link beside an unknown outcome, never an outcome.
    line = templates.completion_line(settled(5, EventOutcome.unknown, 600, Settlement.unknown))
    assert line is not None
    assert "unknown" in line


# -- rendering and matching -----------------------------------------------------------------


def test_a_comment_escapes_each_line() -> None:
    assert templates.render(("a <b> & c", "d"), MessageKind.comment) == (
        "<div>a &lt;b&gt; &amp; c<br>d</div>"
    )


def test_a_chat_line_is_plain() -> None:
    assert templates.render(("a <b> & c", "", "d"), MessageKind.chat_line) == "a <b> & c\n\nd"


def every_notice() -> list[tuple[str, ...]]:
    completed = templates.completion(
        attempt(), [settled(3, EventOutcome.failed), settled(4, EventOutcome.succeeded, None)]
    )
    assert completed is not None
    return [
        templates.holding_reply(31),
        templates.still_running(attempt(live=True), 3, STARTED),
        completed,
    ]


@pytest.mark.parametrize("lines", every_notice())
def test_a_comment_and_its_basecamp_wrapped_form_have_the_same_words(
    lines: tuple[str, ...],
) -> None:
    body = templates.render(lines, MessageKind.comment)
    inner = body.removeprefix("<div>").removesuffix("</div>")
    assert message_text(body) == message_text(f'<div dir="auto">{inner}</div>')
    assert message_text(body) == message_text(f'<div dir="auto">{body}</div>')
    assert message_text(body) == message_text(templates.render(lines, MessageKind.chat_line))


@pytest.mark.parametrize("lines", every_notice())
def test_a_notice_carries_no_markup_of_its_own_making(lines: tuple[str, ...]) -> None:
    # Every word is fixed text, ids and times: none of it reads as a tag or an entity.
    for line in lines:
        assert "<" not in line
        assert "&" not in line


LINE = st.lists(st.text(), max_size=6).map(tuple)
PLAIN_LINE = st.lists(
    st.text(st.characters(codec="utf-8", exclude_characters="<&")), max_size=6
).map(tuple)


@given(PLAIN_LINE)
def test_a_comment_and_a_chat_line_of_the_same_lines_have_the_same_words(
    lines: tuple[str, ...],
) -> None:
    assert message_text(templates.render(lines, MessageKind.comment)) == message_text(
        templates.render(lines, MessageKind.chat_line)
    )


@given(LINE)
def test_a_comment_keeps_every_word_whatever_the_lines_say(lines: tuple[str, ...]) -> None:
    words = " ".join(" ".join(lines).split())
    assert message_text(templates.render(lines, MessageKind.comment)) == words
