"""A worker's dispatch: the instruction it pulls, and the decisions of its three tools.

A worker the connector started talks to the ledger through three tools, bound to the one task
its token names: ``get_dispatch``, ``ack_dispatch`` and ``complete_dispatch``. The shell opens
one immediate transaction per call, re-checks the token in it, reads the task's live rows
(``DispatchRow``) and asks the functions here what to answer and what to write. Values in,
decisions out; nothing here reads a clock, a file or the ledger.

Rule 1: the instruction is an allowlist. ``Instruction`` names every field a worker is handed:
the event, its trigger, the recording, where to reply, who asked, whether to acknowledge,
whether the connector's guard already acknowledged, the delivery, and the content admission
read with the agent's own mention stripped. No route, no feed position, no token.

Rule 2: ``get_dispatch`` serves the event it is asked for, or, when none is named, the earliest
live row at delivery ``admitted`` or ``exposed`` whose record is servable. A record is servable
while it carries its instruction (a readable snapshot) and is ``dispatched``, or ``completed``
after this worker pulled it: finished work is never handed out for the first time. A row never
pulled is served only while it is admitted or exposed.

Rule 3: serving writes, before anything leaves the call: ``exposed`` if the row was
``admitted``; the first ``pulled_at``; the guard ``armed -> canceled`` (the outbox's trigger
cancels the pending guard intent in the same transaction). A repeat writes nothing and
answers the same instruction. Under a hold, a first exposure or a first pull is refused.

Rule 4: a worker reports only what it pulled (``not_exposed`` otherwise) and only on its own
task's live rows (``not_on_task``). ``ack_dispatch`` moves ``exposed -> delivered`` and writes
the worker's ack id with that move or never: a repeat with the same id (or none) answers the
same receipt; an id that differs from the recorded one, or arrives after an acknowledgement
made without one, is a second report and refused (``report_conflict``).

Rule 5: ``complete_dispatch`` reports ``succeeded`` or ``failed``, an optional reply id and at
most ``MAX_LINKS`` http(s) links of at most ``MAX_LINK_LENGTH`` characters (``invalid_report``
otherwise, checked after the token and the pull). It also acknowledges: the row moves to
``completed`` from ``exposed`` or ``delivered``, and a ``dispatched`` record to ``completed``.
The same report again answers the same receipt; a different one is refused: a reported
outcome stands.

Rule 6: every refusal is a ``Refusal`` whose kind and message a worker may read. Anything else
that goes wrong is the ledger's fault, not the worker's: it is answered with ``LEDGER_FAILURE``
and its detail stays out of the model's transcript.

Rule 7: the agent's own mentions are stripped by the same tag walk that reads who is mentioned:
a ``bc-attachment`` whose ``sgid`` (the first one, entities decoded) names the agent's Person is
removed from its start tag to the first ``</bc-attachment>``, unless it closes itself, another
attachment starts first or none closes, in which case its start tag alone goes. Each removal
leaves one space. Should the walk still find the agent mentioned, the text is handed out
escaped: its words, and no markup.
"""

from __future__ import annotations

import base64
import binascii
import html
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any
from urllib.parse import urlsplit

from returns.result import Failure, Result, Success

from core.edges import DeliveryState, GuardState, RecordState
from core.snapshots import EventOutcome

MAX_LINKS = 20
MAX_LINK_LENGTH = 2048

NOTHING_WAITING = "Nothing on this task is waiting to be acknowledged."
LEDGER_FAILURE = "the connector ledger could not answer; try again, and report it if it persists"
HELD = "the connector is held: no instruction is handed to a worker until it is released"


class RefusalKind(StrEnum):
    """The refusals a worker's dispatch call can meet, by what they mean to the worker."""

    task_token_refused = "task_token_refused"  # noqa: S105 - a refusal kind, not a secret
    not_on_task = "not_on_task"
    not_exposed = "not_exposed"
    report_conflict = "report_conflict"
    not_dispatchable = "not_dispatchable"
    invalid_report = "invalid_report"
    invalid_arguments = "invalid_arguments"


MESSAGES: Mapping[RefusalKind, str] = {
    RefusalKind.task_token_refused: "the task token names no current task",
    RefusalKind.not_on_task: "the event is not on this task",
    RefusalKind.not_exposed: "the event was not handed to this worker; call get_dispatch for it first",
    RefusalKind.report_conflict: "the event already has a different report; a reported outcome stands",
    RefusalKind.not_dispatchable: "the event can no longer be dispatched",
    RefusalKind.invalid_report: "the report is not valid",
    RefusalKind.invalid_arguments: "the arguments are not valid",
}


@dataclass(frozen=True, slots=True)
class Refusal:
    """An answer, not a fault: ``kind`` for a program, ``message`` for the worker to read."""

    kind: RefusalKind
    message: str

    def to_json(self) -> dict[str, str]:
        return {"error": str(self.kind), "message": self.message}


def refuse(kind: RefusalKind, message: str | None = None) -> Refusal:
    """The refusal of ``kind``, with its fixed message unless the worker has something to fix."""
    return Refusal(kind, message if message is not None else MESSAGES[kind])


# -- what the ledger hands the core ---------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RecordFacts:
    """A record (``events``) as the instruction needs it. ``snapshot`` is the JSON text admission
    wrote (type, title, app_url, content, updated_at), None when the record carries none."""

    event_id: int
    state: RecordState
    event_type: str
    trigger: str
    bucket_id: int
    recording_id: int
    recording_type: str
    recording_url: str
    reply_kind: str
    reply_recording_id: int
    requester_id: int
    acknowledge: bool
    snapshot: str | None


@dataclass(frozen=True, slots=True)
class DispatchRow:
    """One live row of the token's task (``task_events``) with its record."""

    record: RecordFacts
    delivery: DeliveryState
    guard: GuardState
    pulled: bool
    ack_id: int | None = None
    outcome: EventOutcome = EventOutcome.none
    reply_id: int | None = None
    links: tuple[str, ...] = ()

    @property
    def event_id(self) -> int:
        return self.record.event_id


@dataclass(frozen=True, slots=True)
class RecordingSnapshot:
    """The recording as admission read it: the only content the ledger keeps."""

    type: str
    title: str
    app_url: str
    content: str
    updated_at: str | None


def read_snapshot(text: str | None) -> RecordingSnapshot | None:
    """The snapshot in ``text``, or None when there is none or it is not a JSON object."""
    if text is None or text == "":
        return None
    try:
        value = json.loads(text)
    except ValueError:
        return None
    if not isinstance(value, dict):
        return None

    def field(name: str) -> str:
        item = value.get(name)
        return item if isinstance(item, str) else ""

    return RecordingSnapshot(
        type=field("type"),
        title=field("title"),
        app_url=field("app_url"),
        content=field("content"),
        updated_at=field("updated_at") or None,
    )


def servable(row: DispatchRow) -> bool:
    """Whether this row's instruction may be handed to the worker (rule 2)."""
    state = row.record.state
    if not (state == RecordState.dispatched or (state == RecordState.completed and row.pulled)):
        return False
    if not row.pulled and row.delivery not in (DeliveryState.admitted, DeliveryState.exposed):
        return False
    return read_snapshot(row.record.snapshot) is not None


# -- the instruction and the receipt ----------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Instruction:
    """What ``get_dispatch`` hands a worker: every field it may see is named here (rule 1)."""

    event_id: int
    event_type: str
    trigger: str
    bucket_id: int
    recording_id: int
    recording_type: str
    recording_title: str
    recording_url: str
    reply_kind: str
    reply_recording_id: int
    requester_id: int
    acknowledge: bool
    guard_acknowledged: bool
    delivery: DeliveryState
    content: str
    content_updated_at: str | None

    def to_json(self) -> dict[str, Any]:
        return {
            "event_id": self.event_id,
            "event_type": self.event_type,
            "trigger": self.trigger,
            "recording": {
                "bucket_id": self.bucket_id,
                "recording_id": self.recording_id,
                "type": self.recording_type,
                "title": self.recording_title,
                "url": self.recording_url,
            },
            "reply_to": {"kind": self.reply_kind, "recording_id": self.reply_recording_id},
            "requester_id": self.requester_id,
            "acknowledge": self.acknowledge,
            "guard_acknowledged": self.guard_acknowledged,
            "delivery": str(self.delivery),
            "content": self.content,
            "content_updated_at": self.content_updated_at,
        }


def build_instruction(row: DispatchRow, agent_id: int | None) -> Instruction | None:
    """The instruction for ``row`` as its writes left it; None if its snapshot is unreadable.
    ``agent_id`` is the agent's Person, whose own mentions are stripped (None: none are)."""
    snapshot = read_snapshot(row.record.snapshot)
    if snapshot is None:
        return None
    record = row.record
    return Instruction(
        event_id=record.event_id,
        event_type=record.event_type,
        trigger=record.trigger,
        bucket_id=record.bucket_id,
        recording_id=record.recording_id,
        recording_type=record.recording_type or snapshot.type,
        recording_title=snapshot.title,
        recording_url=record.recording_url or snapshot.app_url,
        reply_kind=record.reply_kind,
        reply_recording_id=record.reply_recording_id,
        requester_id=record.requester_id,
        acknowledge=record.acknowledge,
        guard_acknowledged=row.guard == GuardState.fired,
        delivery=row.delivery,
        content=snapshot.content if agent_id is None else strip_mentions_of(snapshot.content, agent_id),
        content_updated_at=snapshot.updated_at,
    )


@dataclass(frozen=True, slots=True)
class Receipt:
    """The delivery an acknowledgement or completion left: ``{event_id, delivery, ack_id?,
    outcome?, reply_id?, links?}`` (absent fields left out)."""

    event_id: int
    delivery: DeliveryState
    ack_id: int | None = None
    outcome: EventOutcome = EventOutcome.none
    reply_id: int | None = None
    links: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        body: dict[str, Any] = {"event_id": self.event_id, "delivery": str(self.delivery)}
        if self.ack_id is not None:
            body["ack_id"] = self.ack_id
        if self.outcome != EventOutcome.none:
            body["outcome"] = str(self.outcome)
        if self.reply_id is not None:
            body["reply_id"] = self.reply_id
        if self.links:
            body["links"] = list(self.links)
        return body


def receipt_of(row: DispatchRow) -> Receipt:
    return Receipt(row.event_id, row.delivery, row.ack_id, row.outcome, row.reply_id, row.links)


# -- the tools' arguments -------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class GetRequest:
    event_id: int | None


@dataclass(frozen=True, slots=True)
class AckRequest:
    event_id: int
    ack_id: int | None


@dataclass(frozen=True, slots=True)
class Completion:
    """A worker's report as it sent it; checked by ``check_completion`` (rule 5)."""

    outcome: str
    reply_id: int | None = None
    links: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class CompleteRequest:
    event_id: int
    completion: Completion


_DIGITS = re.compile(r"[0-9]{1,19}")


class _BadArguments(Exception):
    """Raised inside the readers below only, and turned into their ``Failure``."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.refusal = refuse(RefusalKind.invalid_arguments, message)


def _read_id(arguments: Mapping[str, object], name: str, *, required: bool) -> int | None:
    value = arguments.get(name)
    if value is None:
        if required:
            raise _BadArguments(f"{name} is required")
        return None
    number: int | None = None
    if isinstance(value, bool):
        number = None
    elif isinstance(value, int):
        number = value
    elif isinstance(value, float) and value.is_integer():
        number = int(value)
    elif isinstance(value, str) and _DIGITS.fullmatch(value.strip()):
        number = int(value.strip())
    if number is None or number <= 0 or number >= 2**63:
        raise _BadArguments(f"{name} must be a positive integer id")
    return number


def _refuse_unknown(arguments: Mapping[str, object], known: Iterable[str]) -> None:
    unknown = sorted(set(arguments) - set(known))
    if unknown:
        raise _BadArguments("unknown argument " + ", ".join(repr(name) for name in unknown))


def _required_id(arguments: Mapping[str, object], name: str) -> int:
    number = _read_id(arguments, name, required=True)
    assert number is not None  # required: None raised
    return number


def read_get_arguments(arguments: Mapping[str, object]) -> Result[GetRequest, Refusal]:
    """``{event_id?}``."""
    try:
        _refuse_unknown(arguments, ("event_id",))
        return Success(GetRequest(_read_id(arguments, "event_id", required=False)))
    except _BadArguments as error:
        return Failure(error.refusal)


def read_ack_arguments(arguments: Mapping[str, object]) -> Result[AckRequest, Refusal]:
    """``{event_id, ack_id?}``."""
    try:
        _refuse_unknown(arguments, ("event_id", "ack_id"))
        return Success(
            AckRequest(_required_id(arguments, "event_id"), _read_id(arguments, "ack_id", required=False))
        )
    except _BadArguments as error:
        return Failure(error.refusal)


def read_complete_arguments(arguments: Mapping[str, object]) -> Result[CompleteRequest, Refusal]:
    """``{event_id, outcome, reply_id?, links?}``: shapes only; ``check_completion`` judges."""
    try:
        _refuse_unknown(arguments, ("event_id", "outcome", "reply_id", "links"))
        event_id = _required_id(arguments, "event_id")
        outcome = arguments.get("outcome")
        if not isinstance(outcome, str) or outcome == "":
            raise _BadArguments('outcome is required: "succeeded" or "failed"')
        reply_id = _read_id(arguments, "reply_id", required=False)
        raw_links = arguments.get("links")
        links: tuple[str, ...] = ()
        if raw_links is not None:
            if not isinstance(raw_links, list | tuple) or not all(
                isinstance(link, str) for link in raw_links
            ):
                raise _BadArguments("links must be an array of strings")
            links = tuple(str(link) for link in raw_links)
        return Success(CompleteRequest(event_id, Completion(outcome, reply_id, links)))
    except _BadArguments as error:
        return Failure(error.refusal)


# -- the decisions ------------------------------------------------------------------------------


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
) -> Result[GetDecision, Refusal]:
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
    """``write``: move exposed -> delivered, recording ``ack_id`` if given. Otherwise the row
    already says what the call says, and the receipt is the answer."""

    write: bool
    ack_id: int | None


def decide_ack(row: DispatchRow | None, ack_id: int | None) -> Result[Acknowledge, Refusal]:
    """An acknowledgement of ``row`` with the worker's ``ack_id`` (rule 4)."""
    if row is None:
        return Failure(refuse(RefusalKind.not_on_task))
    if not row.pulled:
        return Failure(refuse(RefusalKind.not_exposed))
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


@dataclass(frozen=True, slots=True)
class Report:
    """A checked completion: the outcome, the reply and the links, as they are stored."""

    outcome: EventOutcome
    reply_id: int | None
    links: tuple[str, ...]


def check_completion(completion: Completion) -> Result[Report, Refusal]:
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
    """``write``: record ``report`` and move the row to completed; ``complete_record``: the
    record is dispatched and moves to completed too. Otherwise the receipt is the answer."""

    write: bool
    report: Report
    complete_record: bool


def decide_complete(row: DispatchRow | None, completion: Completion) -> Result[Complete, Refusal]:
    """A completion of ``row`` (rule 5)."""
    if row is None:
        return Failure(refuse(RefusalKind.not_on_task))
    if not row.pulled:
        return Failure(refuse(RefusalKind.not_exposed))
    return check_completion(completion).bind(lambda report: _complete(row, report))


def _complete(row: DispatchRow, report: Report) -> Result[Complete, Refusal]:
    if row.delivery == DeliveryState.completed:
        stored = Report(row.outcome, row.reply_id, row.links)
        if stored == report:
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
        Complete(write=True, report=report, complete_record=row.record.state == RecordState.dispatched)
    )


# -- mentions -----------------------------------------------------------------------------------

_TAG_NAME = re.compile(r"[A-Za-z][A-Za-z0-9:_.-]*")
_ATTRIBUTE_NAME = re.compile(r"[^\s\"'>/=]+")
_UNQUOTED_VALUE = re.compile(r"[^\s>]*")
_PERSON_GID = re.compile(r"gid://bc3/Person/([0-9]+)")
_ATTACHMENT = "bc-attachment"
_STRIPPED_MENTION = " "


@dataclass(frozen=True, slots=True)
class _Tag:
    start: int
    end: int
    name: str
    is_end: bool
    self_closing: bool
    sgid: str | None


def _attributes_end(text: str, index: int) -> tuple[int, str | None] | None:
    """From inside a start tag: where it ends (after ``>``) and its first ``sgid``; None when the
    tag never ends (an unterminated tag ends the markup)."""
    sgid: str | None = None
    length = len(text)
    while index < length:
        character = text[index]
        if character.isspace() or character == "/":
            index += 1
            continue
        if character == ">":
            return index + 1, sgid
        name = _ATTRIBUTE_NAME.match(text, index)
        if name is None:  # a stray quote or '=': skip it
            index += 1
            continue
        index = name.end()
        value = ""
        while index < length and text[index].isspace():
            index += 1
        if index < length and text[index] == "=":
            index += 1
            while index < length and text[index].isspace():
                index += 1
            if index < length and text[index] in "\"'":
                close = text.find(text[index], index + 1)
                if close < 0:
                    return None
                value = text[index + 1 : close]
                index = close + 1
            else:
                unquoted = _UNQUOTED_VALUE.match(text, index)
                assert unquoted is not None  # it matches the empty string at worst
                value = unquoted.group(0)
                index = unquoted.end()
        if sgid is None and name.group(0).lower() == "sgid":
            sgid = html.unescape(value)
    return None


def _next_tag(text: str, position: int) -> _Tag | None:
    """The next tag at or after ``position``; comments, ``<!`` and ``<?`` are skipped, and a
    ``<`` that begins no tag is text."""
    while True:
        start = text.find("<", position)
        if start < 0:
            return None
        if text.startswith("<!--", start):
            close = text.find("-->", start + 4)
            if close < 0:
                return None
            position = close + 3
            continue
        if text.startswith(("<!", "<?"), start):
            close = text.find(">", start)
            if close < 0:
                return None
            position = close + 1
            continue
        is_end = text.startswith("</", start)
        name = _TAG_NAME.match(text, start + (2 if is_end else 1))
        if name is None:
            position = start + 1
            continue
        ended = _attributes_end(text, name.end())
        if ended is None:
            return None
        end, sgid = ended
        return _Tag(
            start=start,
            end=end,
            name=name.group(0).lower(),
            is_end=is_end,
            self_closing=text[start:end].endswith("/>"),
            sgid=None if is_end else sgid,
        )


def person_id_from_sgid(sgid: str) -> int | None:
    """The Person id an attachable sgid names (``base64(payload)--digest``, the payload holding
    ``gid://bc3/Person/<id>``), or None when it names no one person."""
    payload = sgid.strip().split("--", 1)[0]
    if not payload:
        return None
    padded = payload + "=" * (-len(payload) % 4)
    found: set[int] = set()
    for decode in (base64.b64decode, base64.urlsafe_b64decode):
        try:
            raw = decode(padded)
        except (binascii.Error, ValueError):
            continue
        text = raw.decode("utf-8", "replace").replace("\\/", "/")
        found.update(int(match) for match in _PERSON_GID.findall(text))
    if len(found) != 1:
        return None
    (person_id,) = found
    return person_id


def mentioned_person_ids(rich_text: str) -> tuple[int, ...]:
    """The Person ids mentioned in ``rich_text``, in order of appearance, each once."""
    found: list[int] = []
    position = 0
    while (tag := _next_tag(rich_text, position)) is not None:
        if not tag.is_end and tag.name == _ATTACHMENT and tag.sgid is not None:
            person_id = person_id_from_sgid(tag.sgid)
            if person_id is not None and person_id not in found:
                found.append(person_id)
        position = tag.end
    return tuple(found)


def _mention_end(text: str, position: int) -> int:
    """Where a mention whose start tag ends at ``position`` ends: after the first
    ``</bc-attachment>``, or at ``position`` when another attachment starts first or none closes."""
    cursor = position
    while (tag := _next_tag(text, cursor)) is not None:
        if tag.name == _ATTACHMENT:
            return tag.end if tag.is_end else position
        cursor = tag.end
    return position


def strip_mentions_of(rich_text: str, person_id: int) -> str:
    """``rich_text`` without any mention of ``person_id`` (rule 7)."""
    if person_id not in mentioned_person_ids(rich_text):
        return rich_text
    pieces: list[str] = []
    position = 0
    cursor = 0
    while (tag := _next_tag(rich_text, cursor)) is not None:
        if (
            not tag.is_end
            and tag.name == _ATTACHMENT
            and tag.sgid is not None
            and person_id_from_sgid(tag.sgid) == person_id
        ):
            pieces.append(rich_text[position : tag.start])
            pieces.append(_STRIPPED_MENTION)
            position = tag.end if tag.self_closing else _mention_end(rich_text, tag.end)
            cursor = position
            continue
        cursor = tag.end
    pieces.append(rich_text[position:])
    stripped = "".join(pieces)
    if person_id in mentioned_person_ids(stripped):
        return html.escape(stripped)  # a backstop: the words, and no markup
    return stripped
