"""The tools' decisions: what ``get_dispatch``, ``ack_dispatch``, ``complete_dispatch`` and
``reply_dispatch`` answer and write, from the task's live rows (rules 2 to 5 and 8 of
``core.dispatch_tools``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit

from returns.result import Failure, Result, Success

from core import worker_words
from core.dispatch_tools.arguments import Completion
from core.dispatch_tools.bounds import MAX_LINK_LENGTH, MAX_LINKS, MAX_NOTES
from core.dispatch_tools.refusals import HELD, RefusalKind, ToolRefusal, refuse
from core.dispatch_tools.rows import DispatchRow, Spoken, servable
from core.intent_kinds import IntentKind
from core.states import DeliveryState, EventOutcome, GuardState, RecordState
from core.worker_words import WorkerMessage


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


def decide_get(
    rows: Sequence[DispatchRow], event_id: int | None, *, held: bool = False
) -> Result[GetDecision, ToolRefusal]:
    """Which row ``get_dispatch`` serves and what it writes first (rules 2 and 3).

    ``rows`` are the live rows of the token's task; ``held`` is whether the hold marker stands.
    """
    if event_id is None:
        waiting = sorted(
            (row for row in rows if row.delivery in WAITING and servable(row)), key=lambda row: row.event_id
        )
        if not waiting:
            return Success(NothingWaiting())
        row = waiting[0]
    else:
        found = next((row for row in rows if row.event_id == event_id), None)
        if found is None:
            return Failure(refuse(RefusalKind.not_on_task))
        if not servable(found):
            return Failure(refuse(RefusalKind.not_dispatchable))
        row = found
    serve = Serve(
        event_id=row.event_id,
        expose=row.delivery == DeliveryState.admitted,
        pull=not row.pulled,
        cancel_guard=row.guard == GuardState.armed,
    )
    if held and (serve.expose or serve.pull):
        return Failure(refuse(RefusalKind.not_dispatchable, HELD))
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


def decide_ack(
    row: DispatchRow | None, ack_id: int | None, text: str | None = None, task_id: int = 0
) -> Result[Acknowledge, ToolRefusal]:
    """An acknowledgement of ``row`` with the worker's ``ack_id``, or its words ``text``
    (rule 4 of ``core.dispatch_tools``)."""
    if row is None:
        return Failure(refuse(RefusalKind.not_on_task))
    if not row.pulled:
        return Failure(refuse(RefusalKind.not_exposed))
    if text is not None:
        return worker_words.acknowledgement(row.record, task_id, text).bind(
            lambda words: _acknowledge_in_words(row, words)
        )
    if ack_id is not None and row.spoken(IntentKind.worker_ack) is not None:
        return Failure(
            refuse(
                RefusalKind.report_conflict,
                "the connector is posting your acknowledgement; an acknowledgement is reported once",
            )
        )
    if ack_id is not None and row.ack_id is not None and row.ack_id != ack_id:
        return Failure(
            refuse(
                RefusalKind.report_conflict,
                f"the event was acknowledged as {row.ack_id}; an acknowledgement is reported once",
            )
        )
    if ack_id is not None and row.ack_id is None and row.delivery != DeliveryState.exposed:
        return Failure(
            refuse(
                RefusalKind.report_conflict,
                "the event was acknowledged without an acknowledgement id; "
                "an id arriving afterwards is a second report",
            )
        )
    if row.delivery != DeliveryState.exposed:
        return Success(Acknowledge(write=False, ack_id=None))
    return Success(Acknowledge(write=True, ack_id=ack_id))


def _acknowledge_in_words(row: DispatchRow, words: WorkerMessage) -> Result[Acknowledge, ToolRefusal]:
    """Rule 8: the words are written with the move to delivered, once, or not at all. A guard that
    already fired, or a trigger that asked for nothing, posts nothing: a missing acknowledgement
    costs less than a doubled one."""
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
        return Failure(
            refuse(
                RefusalKind.report_conflict,
                "the event was acknowledged in other words; an acknowledgement is posted once",
            )
        )
    if row.ack_id is not None or row.delivery != DeliveryState.exposed:
        return Failure(
            refuse(
                RefusalKind.report_conflict,
                "the event was already acknowledged; "
                "words arriving afterwards would be a second acknowledgement",
            )
        )
    return Success(Acknowledge(write=True, ack_id=None, words=words))


@dataclass(frozen=True, slots=True)
class Report:
    """A checked completion: the outcome, the reply and the links, as they are stored."""

    outcome: EventOutcome
    reply_id: int | None
    links: tuple[str, ...]


def check_completion(completion: Completion) -> Result[Report, ToolRefusal]:
    """The report a worker can correct: the outcome is one of two, the links are http(s) URLs."""
    if completion.outcome not in (EventOutcome.succeeded, EventOutcome.failed):
        return Failure(refuse(RefusalKind.invalid_report, 'outcome must be "succeeded" or "failed"'))
    if len(completion.links) > MAX_LINKS:
        return Failure(refuse(RefusalKind.invalid_report, f"at most {MAX_LINKS} links"))
    for link in completion.links:
        if len(link) > MAX_LINK_LENGTH:
            return Failure(
                refuse(RefusalKind.invalid_report, f"a link is at most {MAX_LINK_LENGTH} characters")
            )
        if not is_http_url(link):
            shown = link if len(link) <= 80 else link[:77] + "..."
            return Failure(refuse(RefusalKind.invalid_report, f"link {shown!r} is not an http(s) URL"))
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


def decide_complete(
    row: DispatchRow | None, completion: Completion, task_id: int = 0
) -> Result[Complete, ToolRefusal]:
    """A completion of ``row`` (rule 5 of ``core.dispatch_tools``), with the worker's reply in
    its words if it gave one."""
    if row is None:
        return Failure(refuse(RefusalKind.not_on_task))
    if not row.pulled:
        return Failure(refuse(RefusalKind.not_exposed))
    text = completion.reply
    words: Result[WorkerMessage | None, ToolRefusal] = (
        Success(None) if text is None else worker_words.reply(row.record, task_id, text)
    )
    return check_completion(completion).bind(
        lambda report: words.bind(lambda reply: _complete(row, report, reply))
    )


def _complete(row: DispatchRow, report: Report, words: WorkerMessage | None) -> Result[Complete, ToolRefusal]:
    if row.delivery == DeliveryState.completed:
        stored = Report(row.outcome, row.reply_id, row.links)
        spoken = row.spoken(IntentKind.worker_reply)
        same_words = (None if spoken is None else spoken.body) == (None if words is None else words.body)
        if stored == _without_landed_reply(report, spoken) and same_words:
            return Success(Complete(write=False, report=report, complete_record=False))
        return Failure(
            refuse(
                RefusalKind.report_conflict,
                f"the event was already reported {row.outcome or 'without an outcome'}, "
                "with another reply or links; a reported outcome stands",
            )
        )
    if row.delivery not in (DeliveryState.exposed, DeliveryState.delivered):
        return Failure(refuse(RefusalKind.not_exposed))
    return Success(
        Complete(
            write=True,
            report=report,
            complete_record=row.record.state == RecordState.dispatched,
            words=words,
        )
    )


def _without_landed_reply(report: Report, spoken: Spoken | None) -> Report:
    """A repeated report, as the row stores it: a reply the connector posted has landed as the row's
    reply id since the first call."""
    if spoken is None or spoken.receipt_id is None or report.reply_id is not None:
        return report
    return Report(report.outcome, spoken.receipt_id, report.links)


@dataclass(frozen=True, slots=True)
class Speak:
    """``reply_dispatch``: ``write`` the worker's ``words`` (a note), or they were written already."""

    write: bool
    words: WorkerMessage


def decide_reply(row: DispatchRow | None, text: str, task_id: int = 0) -> Result[Speak, ToolRefusal]:
    """A message at the reply destination before completion (rule 8 of ``core.dispatch_tools``):
    once per body, at most ``MAX_NOTES`` per event on the task, never after the event was
    reported complete."""
    if row is None:
        return Failure(refuse(RefusalKind.not_on_task))
    if not row.pulled:
        return Failure(refuse(RefusalKind.not_exposed))
    return worker_words.note(row.record, task_id, text).bind(lambda words: _speak(row, words))


def _speak(row: DispatchRow, words: WorkerMessage) -> Result[Speak, ToolRefusal]:
    if any(spoken.key == words.key for spoken in row.words):
        return Success(Speak(write=False, words=words))
    if row.delivery == DeliveryState.completed:
        return Failure(
            refuse(
                RefusalKind.report_conflict,
                "the event was reported complete; your last words belong in complete_dispatch's reply",
            )
        )
    notes = sum(spoken.kind is IntentKind.worker_note for spoken in row.words)
    if notes >= MAX_NOTES:
        return Failure(
            refuse(
                RefusalKind.invalid_message,
                f"at most {MAX_NOTES} messages per event before completion; "
                "say the rest in complete_dispatch's reply",
            )
        )
    return Success(Speak(write=True, words=words))
