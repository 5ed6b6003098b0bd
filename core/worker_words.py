"""A worker's words, posted for it by the connector: where each goes, its body, its key, its bounds.

The worker holds no Basecamp credential: its dispatch tools write its words as outbox intents
with the move they report, and the outbox posts them with the promise it keeps for its own
messages (``core.intent_kinds``).

Rules:
1. The acknowledgement (``ack_dispatch``'s ``text``) is a boost on the recording that asked when
   it fits one (one line of at most ``BOOST_LIMIT`` code points); else a message of at most
   ``MAX_ACK_CHARACTERS`` at the event's reply destination.
2. The reply (``complete_dispatch``'s ``reply``) and a note (``reply_dispatch``'s ``text``) go to
   the reply destination, at most ``MAX_MESSAGE_CHARACTERS``.
3. At a comment the text is Markdown rendered by ``core.rich_text`` (an allowlist of tags); at a
   Campfire a plain line, trimmed; a boost plain text.
4. Text with no words or over its bound, or with nowhere to go, is refused with what to change;
   nothing is written.
5. A key makes one message however often the call is repeated: one acknowledgement and one reply
   per task and event, one note per text (its hash in the key), at most ``MAX_NOTES`` an event.
6. The worker is told (``WordsAnswer.state``) ``posted`` with the id once landed; ``waiting``
   while pending or sending (do not send it again); ``uncertain`` when left for a person;
   ``refused`` when Basecamp refused it; ``not_posted`` with the reason when nothing was written.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

from returns.result import Failure, Result, Success

from core.destinations import MessageKind
from core.dispatch_tools.bounds import BOOST_LIMIT, MAX_ACK_CHARACTERS, MAX_MESSAGE_CHARACTERS
from core.dispatch_tools.refusals import RefusalKind, ToolRefusal, refuse
from core.dispatch_tools.rows import InstructionRecord, Spoken
from core.intent_kinds import IntentKind

WAITING_NOTE = "The connector will post it exactly once; do not send it again."
UNCERTAIN_NOTE = "It may or may not have been posted; a person will settle it. Do not send it again."
REFUSED_NOTE = "Basecamp refused it, so nothing was posted; a person can send it again."
GUARD_FIRED = "not posted: the connector already acknowledged this request for you (guard_acknowledged)"
NOT_ASKED = "not posted: this event asks for no acknowledgement (acknowledge is false)"


@dataclass(frozen=True, slots=True)
class WorkerMessage:
    """One message a worker's call asks the connector to post: the intent its transaction writes."""

    key: str
    kind: IntentKind
    message_kind: MessageKind
    bucket_id: int
    recording_id: int
    body: str


@dataclass(frozen=True, slots=True)
class WordsAnswer:
    """What a worker's call says of its words (rule 6)."""

    state: str
    kind: str = ""
    message_id: int | None = None
    note: str = ""

    def to_json(self) -> dict[str, Any]:
        body: dict[str, Any] = {"state": self.state}
        if self.kind:
            body["kind"] = self.kind
        if self.message_id is not None:
            body["id"] = self.message_id
        if self.note:
            body["note"] = self.note
        return body


def ack_key(task_id: int, event_id: int) -> str:
    return f"worker_ack:task:{task_id}:event:{event_id}"


def reply_key(task_id: int, event_id: int) -> str:
    return f"worker_reply:task:{task_id}:event:{event_id}"


def note_key(task_id: int, event_id: int, body: str) -> str:
    digest = hashlib.sha256(body.encode("utf-8")).hexdigest()[:16]
    return f"worker_note:task:{task_id}:event:{event_id}:{digest}"


def acknowledgement(record: InstructionRecord, task_id: int, text: str) -> Result[WorkerMessage, ToolRefusal]:
    """Rule 1: a boost when ``text`` fits one, else a short message at the reply destination."""
    words = text.strip()
    if not words:
        return Failure(refuse(RefusalKind.invalid_message, "text has no words"))
    if len(words) <= BOOST_LIMIT and "\n" not in words and record.recording_id > 0:
        return Success(
            WorkerMessage(
                ack_key(task_id, record.event_id), IntentKind.worker_ack, MessageKind.boost,
                record.bucket_id, record.recording_id, words,
            )
        )  # fmt: skip
    if len(words) > MAX_ACK_CHARACTERS:
        return Failure(
            refuse(
                RefusalKind.invalid_message,
                f"an acknowledgement is at most {BOOST_LIMIT} characters (a boost) or "
                f"{MAX_ACK_CHARACTERS} (a short message), not {len(words)}",
            )
        )
    return _at_reply_destination(record, ack_key(task_id, record.event_id), IntentKind.worker_ack, words)


def reply(record: InstructionRecord, task_id: int, text: str) -> Result[WorkerMessage, ToolRefusal]:
    """Rule 2: the worker's answer, at the reply destination."""
    return _bounded(text).bind(
        lambda words: _at_reply_destination(
            record, reply_key(task_id, record.event_id), IntentKind.worker_reply, words
        )
    )


def note(record: InstructionRecord, task_id: int, text: str) -> Result[WorkerMessage, ToolRefusal]:
    """Rule 2: a message before completion, keyed by its body (rule 5)."""

    def keyed(message: WorkerMessage) -> WorkerMessage:
        return WorkerMessage(
            note_key(task_id, record.event_id, message.body), message.kind, message.message_kind,
            message.bucket_id, message.recording_id, message.body,
        )  # fmt: skip

    return (
        _bounded(text)
        .bind(lambda words: _at_reply_destination(record, "", IntentKind.worker_note, words))
        .map(keyed)
    )


def answer(spoken: Spoken | None, *, skipped: str = "") -> WordsAnswer:
    """Rule 6: what the worker is told of ``spoken`` (None: nothing was written, for ``skipped``)."""
    if spoken is None:
        return WordsAnswer("not_posted", note=skipped)
    kind = spoken.message_kind
    match spoken.state:
        case "sent":
            return WordsAnswer("posted", kind, spoken.receipt_id)
        case "pending" | "sending":
            return WordsAnswer("waiting", kind, note=WAITING_NOTE)
        case "canceled":
            return WordsAnswer("refused", kind, note=REFUSED_NOTE)
        case _:
            return WordsAnswer("uncertain", kind, note=UNCERTAIN_NOTE)


def settled(spoken: Spoken) -> bool:
    """Whether the worker's message has reached a state the connector will not move on its own."""
    return spoken.state not in ("pending", "sending")


def _bounded(text: str) -> Result[str, ToolRefusal]:
    words = text.strip()
    if not words:
        return Failure(refuse(RefusalKind.invalid_message, "the text has no words"))
    if len(words) > MAX_MESSAGE_CHARACTERS:
        return Failure(
            refuse(
                RefusalKind.invalid_message,
                f"a message is at most {MAX_MESSAGE_CHARACTERS} characters, not {len(words)}: "
                "say it shorter, or link to the rest",
            )
        )
    return Success(words)


def _at_reply_destination(
    record: InstructionRecord, key: str, kind: IntentKind, words: str
) -> Result[WorkerMessage, ToolRefusal]:
    reply_kinds = (MessageKind.comment, MessageKind.chat_line)
    if record.reply_kind not in reply_kinds or record.reply_recording_id <= 0:
        return Failure(refuse(RefusalKind.invalid_message, "this event has no reply destination"))
    message_kind = MessageKind(record.reply_kind)
    body = words
    if message_kind is MessageKind.comment:
        from core.rich_text import render_markdown  # noqa: PLC0415 - the Markdown parser only when a comment needs it

        body = render_markdown(words)
    return Success(
        WorkerMessage(key, kind, message_kind, record.reply_bucket_id, record.reply_recording_id, body)
    )
