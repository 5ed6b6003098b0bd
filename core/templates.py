"""Every word the connector posts in its own voice, rendered from record values alone.

No content, no model, no free text: fixed words filled with ids, states, stop reasons and
``HH:MM UTC`` times, so a notice can be rendered again and matched against what Basecamp holds.
A template gives lines; ``render`` makes one kind's body: a comment's escaped lines joined by
``<br>`` in a ``<div>``, a chat line's plain lines joined by newlines, a boost's one plain line of
at most ``BOOST_LIMIT`` code points. The guard's ``👀 received`` carries no event id (a boost is a
few characters), so two guards on one recording are left indeterminate by reconciliation. A
notice asking a person for something names ``bin/connect redispatch <event id>``; every notice
ends naming what it answers for and ``automatic notice from the Basecamp connector``. A
still-running notice records its moment, so it stays true if it is the last word about a task.
A completion notice names, in event-id order, the events that need a person (failed, unknown,
could not be started) and, asking nothing, an event that succeeded with no reply, or with one
that could not be posted, or an unknown one whose reply was adopted; with no such line there is
no notice, unless a still-running notice was in flight as the attempt ended: then it says only
how the task ended, so the last word about ended work is never "still working".
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Sequence
from datetime import datetime

from core.destinations import MessageKind
from core.dispatch_tools import BOOST_LIMIT  # a boost's bound, one for the connector's words and a worker's
from core.snapshots import AttemptSnapshot, SettledEvent, Settlement, StopReason
from core.states import EventOutcome
from core.timestamps import clock_time

Lines = tuple[str, ...]

SIGNATURE = "automatic notice from the Basecamp connector"
REDISPATCH_COMMAND = "bin/connect redispatch"
GUARD_ACKNOWLEDGEMENT = "👀 received"

STOP_SENTENCES: dict[str, str] = {
    StopReason.finished: "the worker finished",
    StopReason.failed: "the worker failed",
    StopReason.deadline: "the worker was stopped at the task's deadline",
    StopReason.shutdown: "the connector shut down and stopped the worker",
    StopReason.lost: "the worker was lost",
}
OTHER_STOP_SENTENCE = "the worker stopped"


def needs_a_person(event_id: int) -> str:
    """The ask a notice makes of a person for ``event_id``."""
    return f"Needs a person: {REDISPATCH_COMMAND} {event_id}"


def guard_acknowledgement() -> Lines:
    """The boost that says a request was heard, when no worker said so within the guard delay."""
    return (GUARD_ACKNOWLEDGEMENT,)


def holding_reply(event_id: int) -> Lines:
    """The reply to a request in a project the connector does not serve (blocked ``no_route``)."""
    return (
        "I can't start on this here yet: this project is not one my connector is set up to "
        "work in, so nothing was run.",
        "Once the project is added to the connector's configuration, a person can run it with: "
        f"{REDISPATCH_COMMAND} {event_id}",
        "",
        f"Event {event_id} · {SIGNATURE}",
    )


def still_running(attempt: AttemptSnapshot, occurrence: int, as_of: datetime) -> Lines:
    """The notice that a task's worker is still at it, as of the tick at ``as_of``."""
    progress = (
        f"Last progress at {clock_time(attempt.progress_at)}."
        if attempt.progress_at is not None
        else "No progress reported by then."
    )
    return (
        f"Working on this as of {clock_time(as_of)}: task {attempt.task_id} started at "
        f"{clock_time(attempt.started_at)}. {progress}",
        "",
        f"Attempt {attempt.attempt_id}, update {occurrence} · {SIGNATURE}",
    )


def stop_sentence(stop_reason: str) -> str:
    """How a completion notice says an attempt stopped; an unknown reason says only that it did."""
    return STOP_SENTENCES.get(stop_reason, OTHER_STOP_SENTENCE)


def completion_line(event: SettledEvent) -> str | None:
    """The completion notice's line for one settled event, or None when it needs none."""
    identifier = event.event_id
    match event.settlement:
        case Settlement.withdrawn | Settlement.returned | Settlement.redispatched:
            return None
        case Settlement.blocked_again:
            return f"Event {identifier}: the worker could not be started. {needs_a_person(identifier)}"
        case Settlement.reported | Settlement.unknown:
            pass
    match event.outcome:
        case EventOutcome.succeeded if event.reply_id is not None:
            return None
        case EventOutcome.succeeded if event.reply_on_its_way:
            return None
        case EventOutcome.succeeded if event.reply_not_posted:
            return f"Event {identifier}: succeeded, but its reply could not be posted."
        case EventOutcome.succeeded:
            return f"Event {identifier}: succeeded, with no reply reported."
        case EventOutcome.failed:
            return f"Event {identifier}: failed. {needs_a_person(identifier)}"
        case EventOutcome.unknown | EventOutcome.none if event.adopted_reply_id is not None:
            return f"Event {identifier}: the worker replied but did not report on it."
        case EventOutcome.unknown | EventOutcome.none:
            return (
                f"Event {identifier}: unknown, the worker did not report on it. "
                f"{needs_a_person(identifier)}"
            )


def completion(
    attempt: AttemptSnapshot, events: Iterable[SettledEvent], *, notice_in_flight: bool = False
) -> Lines | None:
    """The notice for an attempt's end, or None when no event needs a line and no still-running
    notice of it was in flight."""
    event_lines = [
        line
        for event in sorted(events, key=lambda settled: settled.event_id)
        if (line := completion_line(event)) is not None
    ]
    if not event_lines and not notice_in_flight:
        return None
    return (
        f"Task {attempt.task_id} ended: {stop_sentence(attempt.stop_reason)}.",
        *event_lines,
        "",
        f"Attempt {attempt.attempt_id} · {SIGNATURE}",
    )


def render(lines: Sequence[str], kind: MessageKind) -> str:
    """The body of a message of ``kind`` saying ``lines``, exactly as it is posted."""
    match kind:
        case MessageKind.comment:
            return "<div>" + "<br>".join(html.escape(line, quote=False) for line in lines) + "</div>"
        case MessageKind.chat_line:
            return "\n".join(lines)
        case MessageKind.boost:
            if len(lines) != 1:
                raise ValueError(f"a boost is one line, not {len(lines)}")
            if len(lines[0]) > BOOST_LIMIT:
                raise ValueError(f"a boost is at most {BOOST_LIMIT} code points, not {len(lines[0])}")
            return lines[0]
