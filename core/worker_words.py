"""A worker's words, posted for it by the connector: where each goes, its body, its key, its bounds.

The worker holds no Basecamp credential: its dispatch tools write its words as outbox intents with
the move they report. The acknowledgement is a boost on the recording that asked when it fits one
(one line of at most ``BOOST_LIMIT``), else a short message at the reply destination, where the
reply and the notes go too. Text with no words, over its bound or with nowhere to go is refused
with what to change, and nothing is written. Control characters but newline and tab, and the
marks and overrides that reorder text (``DROPPED``), are dropped from the words first: what a
terminal or a reader's screen would obey never reaches a body. A key makes one message however
often a call is repeated: one acknowledgement and one reply per task and event, one note per text.

At a Campfire a message is a plain line; at a comment, the worker's Markdown rendered from the
parser's tokens (never by its renderer, raw HTML off) to Basecamp's rich text (``ALLOWED_TAGS``):
a tag the worker writes is text, a token with no tag keeps only its text, and a link keeps its
``href``, the only attribute written, only for an http(s) or mailto URL.
"""

from __future__ import annotations

import hashlib
import html
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import cache
from typing import TYPE_CHECKING, Any

from returns.result import Result, Success

from core.destinations import MessageKind
from core.dispatch_tools import (
    BOOST_LIMIT,
    MAX_ACK_CHARACTERS,
    MAX_MESSAGE_CHARACTERS,
    RefusalKind,
    ToolRefusal,
    refused,
)
from core.dispatch_tools.instruction import InstructionRecord, Spoken
from core.intent_kinds import IntentKind
from core.text import message_text

if TYPE_CHECKING:
    from markdown_it import MarkdownIt

WAITING_NOTE = "The connector will post it exactly once; do not send it again."
UNCERTAIN_NOTE = "It may or may not have been posted; a person will settle it. Do not send it again."
REFUSED_NOTE = "Basecamp refused it, so nothing was posted; a person can send it again."
GUARD_FIRED = "not posted: the connector already acknowledged this request for you (guard_acknowledged)"
NOT_ASKED = "not posted: this event asks for no acknowledgement (acknowledge is false)"

DROPPED = frozenset({*range(0x00, 0x20), *range(0x7F, 0xA0)} - {ord("\n"), ord("\t")}) | frozenset(
    {0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A)}
)  # C0 and C1 controls and DEL, but newline and tab; the bidi marks, embeddings, overrides and isolates
_DROP = dict.fromkeys(DROPPED)


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
    state: str
    kind: str = ""
    message_id: int | None = None
    note: str = ""

    def to_json(self) -> dict[str, Any]:
        body = {"state": self.state, "kind": self.kind, "id": self.message_id, "note": self.note}
        return {name: value for name, value in body.items() if name == "state" or value not in ("", None)}


def ack_key(task_id: int, event_id: int) -> str:
    return f"worker_ack:task:{task_id}:event:{event_id}"


def reply_key(task_id: int, event_id: int) -> str:
    return f"worker_reply:task:{task_id}:event:{event_id}"


def note_key(task_id: int, event_id: int, body: str) -> str:
    digest = hashlib.sha256(body.encode("utf-8")).hexdigest()[:16]
    return f"worker_note:task:{task_id}:event:{event_id}:{digest}"


def acknowledgement(record: InstructionRecord, task_id: int, text: str) -> Result[WorkerMessage, ToolRefusal]:
    words = _words(text)
    if not words:
        return refused(RefusalKind.invalid_message, "text has no words")
    key = ack_key(task_id, record.event_id)
    if len(words) <= BOOST_LIMIT and "\n" not in words and record.recording_id > 0:
        return Success(WorkerMessage(key, IntentKind.worker_ack, MessageKind.boost, record.bucket_id,
                                     record.recording_id, words))
    if len(words) > MAX_ACK_CHARACTERS:
        return refused(RefusalKind.invalid_message, f"an acknowledgement is at most {BOOST_LIMIT} characters "
                       f"(a boost) or {MAX_ACK_CHARACTERS} (a short message), not {len(words)}")
    return _at_reply_destination(record, key, IntentKind.worker_ack, words)


def reply(record: InstructionRecord, task_id: int, text: str) -> Result[WorkerMessage, ToolRefusal]:
    key = reply_key(task_id, record.event_id)
    return _bounded(text).bind(lambda said: _at_reply_destination(record, key, IntentKind.worker_reply, said))


def note(record: InstructionRecord, task_id: int, text: str) -> Result[WorkerMessage, ToolRefusal]:
    return (
        _bounded(text)
        .bind(lambda words: _at_reply_destination(record, "", IntentKind.worker_note, words))
        .map(lambda message: replace(message, key=note_key(task_id, record.event_id, message.body)))
    )


def answer(spoken: Spoken | None, *, skipped: str = "") -> WordsAnswer:
    """What the worker is told of ``spoken`` (None: nothing was written, for ``skipped``)."""
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


def said(text: str) -> tuple[str, str]:
    """What a reader could be shown of ``text``: its words, and the words of their rich text."""
    words = _words(text)
    return words, message_text(render_markdown(words))


def _words(text: str) -> str:
    return text.translate(_DROP).strip()


def _bounded(text: str) -> Result[str, ToolRefusal]:
    words = _words(text)
    if not words:
        return refused(RefusalKind.invalid_message, "the text has no words")
    if len(words) > MAX_MESSAGE_CHARACTERS:
        return refused(RefusalKind.invalid_message, f"a message is at most {MAX_MESSAGE_CHARACTERS} "
                       f"characters, not {len(words)}: say it shorter, or link to the rest")
    return Success(words)


def _at_reply_destination(
    record: InstructionRecord, key: str, kind: IntentKind, words: str
) -> Result[WorkerMessage, ToolRefusal]:
    reply_kinds = (MessageKind.comment, MessageKind.chat_line)
    if record.reply_kind not in reply_kinds or record.reply_recording_id <= 0:
        return refused(RefusalKind.invalid_message, "this event has no reply destination")
    message_kind = MessageKind(record.reply_kind)
    body = render_markdown(words) if message_kind is MessageKind.comment else words
    return Success(WorkerMessage(key, kind, message_kind, record.reply_bucket_id, record.reply_recording_id,
                                 body))


# -- Markdown to Basecamp's rich text ------------------------------------------------------------
ALLOWED_TAGS = frozenset({
    "div", "h1", "br", "strong", "em", "strike", "a", "pre", "ol", "ul", "li", "blockquote",
})  # fmt: skip

BLOCK_TAGS: dict[str, str] = {
    "paragraph": "div", "heading": "h1", "bullet_list": "ul", "ordered_list": "ol", "list_item": "li",
    "blockquote": "blockquote",
}
INLINE_TAGS: dict[str, str] = {"strong": "strong", "em": "em", "s": "strike"}

LINK_SCHEMES = ("http://", "https://", "mailto:")


@cache
def _parser() -> MarkdownIt:
    from markdown_it import MarkdownIt  # noqa: PLC0415 -- the parser only when a comment needs it

    return MarkdownIt("commonmark", {"html": False}).enable("strikethrough")


def render_markdown(text: str) -> str:
    """The body of a Basecamp comment saying ``text`` (Markdown), within ``ALLOWED_TAGS``."""
    tokens = _parser().parse(text)
    blocks: list[str] = []
    out: list[str] = []
    depth = 0
    for token in tokens:
        out.append(_block(token))
        depth += token.nesting
        if depth == 0 and token.nesting <= 0:
            blocks.append("".join(out))
            out = []
    blocks.append("".join(out))
    return "<br>".join(block for block in blocks if block)


def _block(token: Any) -> str:
    kind = str(token.type)
    if kind == "inline":
        return _inline(token.children or ())
    if kind in ("fence", "code_block"):
        return "<pre>" + _escape(str(token.content).rstrip("\n")) + "</pre>"
    if kind == "hr":
        return ""
    name, edge = _split(kind)
    tag = BLOCK_TAGS.get(name)
    if tag is None or token.hidden:
        return "" if edge else _escape(str(token.content))
    return f"<{tag}>" if edge == "open" else f"</{tag}>"


def _inline(children: Sequence[Any]) -> str:
    out: list[str] = []
    links: list[bool] = []  # for each open link: was its <a> written?
    for token in children:
        kind = str(token.type)
        name, edge = _split(kind)
        if kind in ("softbreak", "hardbreak"):
            out.append("<br>")
        elif name == "link":
            if edge == "open":
                href = _safe_href(token.attrGet("href"))
                links.append(href is not None)
                if href is not None:
                    out.append(f'<a href="{_escape(href, quote=True)}">')
            elif links.pop():
                out.append("</a>")
        elif kind == "image":
            src = _safe_href(token.attrGet("src"))
            alt = _escape(str(token.content)) or (_escape(src) if src else "")
            out.append(alt if src is None else f'<a href="{_escape(src, quote=True)}">{alt}</a>')
        elif name in INLINE_TAGS and edge:
            tag = INLINE_TAGS[name]
            out.append(f"<{tag}>" if edge == "open" else f"</{tag}>")
        elif not edge:
            out.append(_escape(str(token.content)))
    return "".join(out)


def _split(kind: str) -> tuple[str, str]:
    for edge in ("open", "close"):
        if kind.endswith("_" + edge):
            return kind[: -len(edge) - 1], edge
    return kind, ""


def _safe_href(value: object) -> str | None:
    if not isinstance(value, str):
        return None
    return value if value.lower().startswith(LINK_SCHEMES) else None


def _escape(text: str, *, quote: bool = False) -> str:
    return html.escape(text, quote=quote)
