"""The tools' calls: their arguments read from what a worker sent, then what ``get_dispatch``,
``ack_dispatch``, ``complete_dispatch`` and ``reply_dispatch`` answer and write, from the task's
live rows.

A wrong shape is an ``invalid_arguments`` refusal naming what to fix; whether a well-shaped
report is acceptable is ``check_completion``'s to judge (``invalid_report``), after the token and
the pull were checked.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar
from urllib.parse import urlsplit

from returns.result import Result, Success

from core import worker_words
from core.dispatch_tools import HELD, MAX_LINK_LENGTH, MAX_LINKS, MAX_NOTES, RefusalKind, ToolRefusal, refused
from core.dispatch_tools.instruction import DispatchRow, Spoken, servable
from core.ids import MAX_ID
from core.intent_kinds import IntentKind
from core.states import DeliveryState, EventOutcome, GuardState, RecordState
from core.worker_words import WorkerMessage


@dataclass(frozen=True, slots=True)
class GetRequest:
    event_id: int | None


@dataclass(frozen=True, slots=True)
class AckRequest:
    """``ack_id``: an acknowledgement the worker posted itself; ``text``: words the connector posts."""

    event_id: int
    ack_id: int | None
    text: str | None = None


@dataclass(frozen=True, slots=True)
class ReplyRequest:
    event_id: int
    text: str


@dataclass(frozen=True, slots=True)
class Completion:
    outcome: str
    reply_id: int | None = None
    links: tuple[str, ...] = ()
    reply: str | None = None  # the worker's answer, posted for it; or reply_id, never both


@dataclass(frozen=True, slots=True)
class CompleteRequest:
    event_id: int
    completion: Completion


_DIGITS = re.compile(r"[0-9]{1,19}")
T = TypeVar("T")


class _BadArguments(Exception):
    pass


def _read(build: Callable[[], T]) -> Result[T, ToolRefusal]:
    try:
        return Success(build())
    except _BadArguments as error:
        return refused(RefusalKind.invalid_arguments, str(error))


def _checked(arguments: Mapping[str, object], known: Iterable[str],
             exclusive: tuple[str, str] | None = None) -> None:
    unknown = sorted(set(arguments) - set(known))
    if unknown:
        raise _BadArguments("unknown argument " + ", ".join(repr(name) for name in unknown))
    if exclusive is not None and all(arguments.get(name) is not None for name in exclusive):
        first, second = exclusive
        raise _BadArguments(f"give {first} (the connector posts it for you) or {second} "
                            "(you posted it yourself), not both")


def _given(arguments: Mapping[str, object], name: str, required: bool) -> object:
    value = arguments.get(name)
    if value is None and required:
        raise _BadArguments(f"{name} is required")
    return value


def _read_id(arguments: Mapping[str, object], name: str, *, required: bool = False) -> int | None:
    value = _given(arguments, name, required)
    if value is None:
        return None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    elif isinstance(value, str) and _DIGITS.fullmatch(value.strip()):
        value = int(value.strip())
    if isinstance(value, bool) or not isinstance(value, int) or not 0 < value <= MAX_ID:
        raise _BadArguments(f"{name} must be a positive integer id")
    return value


def _read_text(arguments: Mapping[str, object], name: str, *, required: bool = False) -> str | None:
    value = _given(arguments, name, required)
    if value is not None and not isinstance(value, str):
        raise _BadArguments(f"{name} must be a string")
    return value


def _event_id(arguments: Mapping[str, object]) -> int:
    return _read_id(arguments, "event_id", required=True) or 0  # required: never None


def read_get_arguments(arguments: Mapping[str, object]) -> Result[GetRequest, ToolRefusal]:
    def build() -> GetRequest:
        _checked(arguments, ("event_id",))
        return GetRequest(_read_id(arguments, "event_id"))

    return _read(build)


def read_ack_arguments(arguments: Mapping[str, object]) -> Result[AckRequest, ToolRefusal]:
    def build() -> AckRequest:
        _checked(arguments, ("event_id", "ack_id", "text"), ("text", "ack_id"))
        return AckRequest(_event_id(arguments), _read_id(arguments, "ack_id"), _read_text(arguments, "text"))

    return _read(build)


def read_complete_arguments(arguments: Mapping[str, object]) -> Result[CompleteRequest, ToolRefusal]:
    def build() -> CompleteRequest:
        _checked(arguments, ("event_id", "outcome", "reply_id", "reply", "links"), ("reply", "reply_id"))
        event_id = _event_id(arguments)
        outcome = arguments.get("outcome")
        if not isinstance(outcome, str) or outcome == "":
            raise _BadArguments('outcome is required: "succeeded" or "failed"')
        reply_id = _read_id(arguments, "reply_id")
        links = arguments.get("links")
        links = () if links is None else links
        if not isinstance(links, list | tuple) or not all(isinstance(link, str) for link in links):
            raise _BadArguments("links must be an array of strings")
        reply = _read_text(arguments, "reply")
        return CompleteRequest(event_id, Completion(outcome, reply_id, tuple(links), reply))

    return _read(build)


def read_reply_arguments(arguments: Mapping[str, object]) -> Result[ReplyRequest, ToolRefusal]:
    def build() -> ReplyRequest:
        _checked(arguments, ("event_id", "text"))
        text = _read_text(arguments, "text", required=True) or ""  # required: never None
        return ReplyRequest(_event_id(arguments), text)

    return _read(build)


@dataclass(frozen=True, slots=True)
class Serve:
    """Hand out ``event_id``'s instruction, after these writes (each a compare-and-set)."""

    event_id: int
    expose: bool  # admitted -> exposed
    pull: bool  # the first pulled_at
    cancel_guard: bool  # armed -> canceled

    @property
    def writes(self) -> bool:
        return self.expose or self.pull or self.cancel_guard


@dataclass(frozen=True, slots=True)
class NothingWaiting:
    """No event was named and none on the task waits to be acknowledged."""


GetDecision = Serve | NothingWaiting

WAITING = frozenset({DeliveryState.admitted, DeliveryState.exposed})


def decide_get(rows: Sequence[DispatchRow], event_id: int | None, *,
               held: bool = False) -> Result[GetDecision, ToolRefusal]:
    """Which of the task's live rows ``get_dispatch`` serves, and what it writes first."""
    if event_id is None:
        waiting = sorted((row for row in rows if row.delivery in WAITING and servable(row)),
                         key=lambda row: row.event_id)
        if not waiting:
            return Success(NothingWaiting())
        row = waiting[0]
    else:
        found = next((row for row in rows if row.event_id == event_id), None)
        if found is None:
            return refused(RefusalKind.not_on_task)
        if not servable(found):
            return refused(RefusalKind.not_dispatchable)
        row = found
    serve = Serve(event_id=row.event_id, expose=row.delivery == DeliveryState.admitted, pull=not row.pulled,
                  cancel_guard=row.guard == GuardState.armed)
    if held and (serve.expose or serve.pull):
        return refused(RefusalKind.not_dispatchable, HELD)
    return Success(serve)


@dataclass(frozen=True, slots=True)
class Acknowledge:
    """``write``: move exposed -> delivered, recording ``ack_id`` if given, and writing ``words``
    (the worker's acknowledgement for the connector to post) in the same transaction. Otherwise
    the row already says what the call says, and the receipt is the answer. ``skipped``: why the
    words given are not posted."""

    write: bool
    ack_id: int | None
    words: WorkerMessage | None = None
    skipped: str = ""


def decide_ack(row: DispatchRow | None, ack_id: int | None, text: str | None = None,
               task_id: int = 0) -> Result[Acknowledge, ToolRefusal]:
    if row is None:
        return refused(RefusalKind.not_on_task)
    if not row.pulled:
        return refused(RefusalKind.not_exposed)
    if text is not None:
        words = worker_words.acknowledgement(row.record, task_id, text)
        return words.bind(lambda given: _acknowledge_in_words(row, given))
    if ack_id is not None and row.spoken(IntentKind.worker_ack) is not None:
        return refused(RefusalKind.report_conflict,
                       "the connector is posting your acknowledgement; an acknowledgement is reported once")
    if ack_id is not None and row.ack_id is not None and row.ack_id != ack_id:
        return refused(RefusalKind.report_conflict,
                       f"the event was acknowledged as {row.ack_id}; an acknowledgement is reported once")
    if ack_id is not None and row.ack_id is None and row.delivery != DeliveryState.exposed:
        return refused(RefusalKind.report_conflict,
                       "the event was acknowledged without an acknowledgement id; "
                       "an id arriving afterwards is a second report")
    if row.delivery != DeliveryState.exposed:
        return Success(Acknowledge(write=False, ack_id=None))
    return Success(Acknowledge(write=True, ack_id=ack_id))


def _acknowledge_in_words(row: DispatchRow, words: WorkerMessage) -> Result[Acknowledge, ToolRefusal]:
    """The words are written with the move to delivered, once, or not at all. A guard that already
    fired, or a trigger that asked for nothing, posts nothing: a missing acknowledgement costs less
    than a doubled one."""
    skipped = (
        worker_words.GUARD_FIRED if row.guard == GuardState.fired
        else worker_words.NOT_ASKED if not row.record.acknowledge
        else ""
    )  # fmt: skip
    if skipped:
        return Success(Acknowledge(write=row.delivery == DeliveryState.exposed, ack_id=None, skipped=skipped))
    spoken = row.spoken(IntentKind.worker_ack)
    if spoken is not None:
        if spoken.body == words.body:
            return Success(Acknowledge(write=False, ack_id=None))
        return refused(RefusalKind.report_conflict,
                       "the event was acknowledged in other words; an acknowledgement is posted once")
    if row.ack_id is not None or row.delivery != DeliveryState.exposed:
        return refused(RefusalKind.report_conflict,
                       "the event was already acknowledged; "
                       "words arriving afterwards would be a second acknowledgement")
    return Success(Acknowledge(write=True, ack_id=None, words=words))


@dataclass(frozen=True, slots=True)
class Report:
    outcome: EventOutcome
    reply_id: int | None
    links: tuple[str, ...]


def check_completion(completion: Completion) -> Result[Report, ToolRefusal]:
    """The report a worker can correct: the outcome is one of two, the links are http(s) URLs."""
    if completion.outcome not in (EventOutcome.succeeded, EventOutcome.failed):
        return refused(RefusalKind.invalid_report, 'outcome must be "succeeded" or "failed"')
    if len(completion.links) > MAX_LINKS:
        return refused(RefusalKind.invalid_report, f"at most {MAX_LINKS} links")
    for link in completion.links:
        if len(link) > MAX_LINK_LENGTH:
            return refused(RefusalKind.invalid_report, f"a link is at most {MAX_LINK_LENGTH} characters")
        if not is_http_url(link):
            shown = link if len(link) <= 80 else link[:77] + "..."
            return refused(RefusalKind.invalid_report, f"link {shown!r} is not an http(s) URL")
    return Success(Report(EventOutcome(completion.outcome), completion.reply_id, completion.links))


def is_http_url(link: str) -> bool:
    """An absolute http or https URL with a host, and nothing a line or a quote could break."""
    if link != link.strip() or any(character.isspace() or ord(character) < 0x20 for character in link):
        return False
    try:
        parts = urlsplit(link)
        host = parts.hostname
    except ValueError:
        return False
    return parts.scheme in ("http", "https") and bool(host)


@dataclass(frozen=True, slots=True)
class Complete:
    """``write``: record ``report`` and move the row to completed, writing ``words`` (the worker's
    reply for the connector to post) in the same transaction; ``complete_record``: the record is
    dispatched and moves to completed too. Otherwise the receipt is the answer."""

    write: bool
    report: Report
    complete_record: bool
    words: WorkerMessage | None = None


def decide_complete(row: DispatchRow | None, completion: Completion,
                    task_id: int = 0) -> Result[Complete, ToolRefusal]:
    if row is None:
        return refused(RefusalKind.not_on_task)
    if not row.pulled:
        return refused(RefusalKind.not_exposed)
    text = completion.reply
    words: Result[WorkerMessage | None, ToolRefusal] = (Success(None) if text is None
                                                        else worker_words.reply(row.record, task_id, text))
    return check_completion(completion).bind(
        lambda report: words.bind(lambda reply: _complete(row, report, reply)))


def _complete(row: DispatchRow, report: Report, words: WorkerMessage | None) -> Result[Complete, ToolRefusal]:
    if row.delivery == DeliveryState.completed:
        stored = Report(row.outcome, row.reply_id, row.links)
        spoken = row.spoken(IntentKind.worker_reply)
        same_words = (None if spoken is None else spoken.body) == (None if words is None else words.body)
        if stored == _without_landed_reply(report, spoken) and same_words:
            return Success(Complete(write=False, report=report, complete_record=False))
        return refused(RefusalKind.report_conflict,
                       f"the event was already reported {row.outcome or 'without an outcome'}, "
                       "with another reply or links; a reported outcome stands")
    if row.delivery not in (DeliveryState.exposed, DeliveryState.delivered):
        return refused(RefusalKind.not_exposed)
    dispatched = row.record.state == RecordState.dispatched
    return Success(Complete(write=True, report=report, complete_record=dispatched, words=words))


def _without_landed_reply(report: Report, spoken: Spoken | None) -> Report:
    # A repeated report, as the row stores it: the reply the connector posted has landed as its id.
    if spoken is None or spoken.receipt_id is None or report.reply_id is not None:
        return report
    return Report(report.outcome, spoken.receipt_id, report.links)


@dataclass(frozen=True, slots=True)
class Speak:
    """``reply_dispatch``: ``write`` the worker's ``words`` (a note), or they were written already."""

    write: bool
    words: WorkerMessage


def decide_reply(row: DispatchRow | None, text: str, task_id: int = 0) -> Result[Speak, ToolRefusal]:
    """A note before completion: once per body, at most ``MAX_NOTES`` an event, never after it."""
    if row is None:
        return refused(RefusalKind.not_on_task)
    if not row.pulled:
        return refused(RefusalKind.not_exposed)
    return worker_words.note(row.record, task_id, text).bind(lambda words: _speak(row, words))


def _speak(row: DispatchRow, words: WorkerMessage) -> Result[Speak, ToolRefusal]:
    if any(spoken.key == words.key for spoken in row.words):
        return Success(Speak(write=False, words=words))
    if row.delivery == DeliveryState.completed:
        return refused(RefusalKind.report_conflict,
                       "the event was reported complete; your last words belong in complete_dispatch's reply")
    notes = sum(spoken.kind is IntentKind.worker_note for spoken in row.words)
    if notes >= MAX_NOTES:
        return refused(RefusalKind.invalid_message,
                       f"at most {MAX_NOTES} messages per event before completion; "
                       "say the rest in complete_dispatch's reply")
    return Success(Speak(write=True, words=words))
