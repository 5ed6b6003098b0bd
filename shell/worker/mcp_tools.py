"""The dispatch tools as an MCP client lists them: names, descriptions and JSON schemas.

Rules:
1. ``TOOLS`` is what ``tools/list`` answers, in the order a worker uses them: ``get_dispatch``,
   ``ack_dispatch``, ``complete_dispatch``, ``reply_dispatch``. Every input schema refuses
   properties it does not name; every output schema is an object the answers conform to.
2. The descriptions say what a worker needs to act: that the connector posts its words for it,
   exactly once, where each goes (a boost up to ``BOOST_LIMIT`` characters, else a message at
   ``reply_to``), Markdown at a comment and plain text in a Campfire, and that a repeat is the
   same message, so nothing needs to be sent twice.
3. The bounds shown (``maxLength``, ``maxItems``) are those core enforces (``core.worker_words``,
   ``core.dispatch_tools.decisions``), read from their plain home ``core.dispatch_tools``
   so the server's start builds none of the classes that enforce them; a schema is advice to
   the client, core is the judge.
"""

from __future__ import annotations

from typing import Any, Final

from core.dispatch_tools import (
    BOOST_LIMIT,
    MAX_ACK_CHARACTERS,
    MAX_LINK_LENGTH,
    MAX_LINKS,
    MAX_MESSAGE_CHARACTERS,
    MAX_NOTES,
    WORDS_STATES,
)
from core.states import DeliveryState

BLURB: Final = (
    "Your dispatch from the Basecamp connector: pull the instruction you were started for, "
    "acknowledge it, and report its outcome. The connector posts your words in Basecamp for you, "
    "exactly once. Bound to this task; there is no listing."
)

_ID = {"type": "integer", "minimum": 1}
_DELIVERIES = [str(state) for state in DeliveryState]

_INSTRUCTION_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "event_id": {"type": "integer"},
        "event_type": {"type": "string"},
        "trigger": {"type": "string"},
        "recording": {
            "type": "object",
            "properties": {
                "bucket_id": {"type": "integer"},
                "recording_id": {"type": "integer"},
                "type": {"type": "string"},
                "title": {"type": "string"},
                "url": {"type": "string"},
            },
            "required": ["bucket_id", "recording_id", "type", "title", "url"],
        },
        "reply_to": {
            "type": "object",
            "properties": {"kind": {"type": "string"}, "recording_id": {"type": "integer"}},
            "required": ["kind", "recording_id"],
        },
        "requester_id": {"type": "integer"},
        "acknowledge": {"type": "boolean"},
        "guard_acknowledged": {"type": "boolean"},
        "delivery": {"type": "string", "enum": _DELIVERIES},
        "content": {"type": "string"},
        "content_updated_at": {"type": ["string", "null"]},
    },
    "required": [
        "event_id", "event_type", "trigger", "recording", "reply_to", "requester_id", "acknowledge",
        "guard_acknowledged", "delivery", "content", "content_updated_at",
    ],
}

_RECEIPT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "event_id": {"type": "integer"},
        "delivery": {"type": "string", "enum": _DELIVERIES},
        "ack_id": {"type": "integer"},
        "outcome": {"type": "string", "enum": ["succeeded", "failed", "unknown"]},
        "reply_id": {"type": "integer"},
        "links": {"type": "array", "items": {"type": "string"}},
        "message": {
            "type": "object",
            "properties": {
                "state": {"type": "string", "enum": list(WORDS_STATES)},
                "kind": {"type": "string", "enum": ["boost", "comment", "chat_line"]},
                "id": {"type": "integer"},
                "note": {"type": "string"},
            },
            "required": ["state"],
        },
    },
    "required": ["event_id", "delivery"],
}

_POSTED = (
    " The connector posts it for you, exactly once: the answer's message says posted (with its id), "
    "or waiting (it will be posted; do not send it again)."
)
_MARKDOWN = (
    "Markdown at a comment (bold, italics, links, lists, quotes, code blocks), plain text in a Campfire."
)

_ANNOTATIONS = {
    "readOnlyHint": False,
    "destructiveHint": False,
    "idempotentHint": True,
    "openWorldHint": False,
}

TOOLS: Final[tuple[dict[str, Any], ...]] = (
    {
        "name": "get_dispatch",
        "title": "Get your dispatch",
        "description": (
            f"{BLURB} get_dispatch: the instruction for an event on your task, or, without event_id, "
            "the earliest you have not acknowledged. Returns the recording, where to reply, who asked, "
            "the request's content with your own mention removed, whether to acknowledge, and whether "
            "the connector already acknowledged for you (guard_acknowledged). Calling it records that "
            "you were handed the instruction; it does not acknowledge. A repeat returns the same "
            "instruction."
        ),
        "inputSchema": {
            "type": "object",
            "properties": {
                "event_id": {
                    **_ID,
                    "description": "An event on your task. Omit for the earliest not yet acknowledged.",
                },
            },
            "additionalProperties": False,
        },
        "outputSchema": {
            "type": "object",
            "properties": {
                "instruction": {"anyOf": [{"type": "null"}, _INSTRUCTION_SCHEMA]},
                "message": {"type": "string"},
            },
            "required": ["instruction"],
        },
        "annotations": _ANNOTATIONS,
    },
    {
        "name": "ack_dispatch",
        "title": "Acknowledge your dispatch",
        "description": (
            f"{BLURB} ack_dispatch: acknowledge an instruction you were handed, in your own words "
            f"(text): up to {BOOST_LIMIT} characters is a boost on the request, longer a short message "
            f"at reply_to.{_POSTED} Marks it delivered. Safe to retry: a repeat answers the same receipt."
        ),
        "inputSchema": {
            "type": "object",
            "properties": {
                "event_id": {**_ID, "description": "The event get_dispatch returned."},
                "text": {
                    "type": "string",
                    "maxLength": MAX_ACK_CHARACTERS,
                    "description": f"Your acknowledgement, e.g. 'On it'. {_MARKDOWN}",
                },
                "ack_id": {
                    **_ID,
                    "description": (
                        "Only if you posted an acknowledgement yourself, with tools of your own: its id. "
                        "Never with text."
                    ),
                },
            },
            "required": ["event_id"],
            "additionalProperties": False,
        },
        "outputSchema": _RECEIPT_SCHEMA,
        "annotations": _ANNOTATIONS,
    },
    {
        "name": "complete_dispatch",
        "title": "Report your dispatch's outcome",
        "description": (
            f"{BLURB} complete_dispatch: report the outcome of an instruction: succeeded or failed, "
            "with your reply to the person who asked (reply) and any links (a pull request, a card)."
            f"{_POSTED} Also acknowledges it. A repeat of the same report answers the same receipt; "
            "a different report is refused, because a reported outcome stands."
        ),
        "inputSchema": {
            "type": "object",
            "properties": {
                "event_id": {**_ID, "description": "The event get_dispatch returned."},
                "outcome": {"type": "string", "enum": ["succeeded", "failed"]},
                "reply": {
                    "type": "string",
                    "maxLength": MAX_MESSAGE_CHARACTERS,
                    "description": f"Your answer, posted at reply_to. {_MARKDOWN}",
                },
                "reply_id": {
                    **_ID,
                    "description": (
                        "Only if you replied yourself, with tools of your own: its id. Never with reply."
                    ),
                },
                "links": {
                    "type": "array",
                    "maxItems": MAX_LINKS,
                    "items": {"type": "string", "maxLength": MAX_LINK_LENGTH},
                    "description": "http(s) URLs to what the work produced.",
                },
            },
            "required": ["event_id", "outcome"],
            "additionalProperties": False,
        },
        "outputSchema": _RECEIPT_SCHEMA,
        "annotations": _ANNOTATIONS,
    },
    {
        "name": "reply_dispatch",
        "title": "Say something before you finish",
        "description": (
            f"{BLURB} reply_dispatch: a message at reply_to before you complete (a question, a note on "
            f"progress), at most {MAX_NOTES} per event.{_POSTED} Your final answer goes in "
            "complete_dispatch's reply, not here. The same text again is the same message."
        ),
        "inputSchema": {
            "type": "object",
            "properties": {
                "event_id": {**_ID, "description": "The event get_dispatch returned."},
                "text": {"type": "string", "maxLength": MAX_MESSAGE_CHARACTERS, "description": _MARKDOWN},
            },
            "required": ["event_id", "text"],
            "additionalProperties": False,
        },
        "outputSchema": _RECEIPT_SCHEMA,
        "annotations": _ANNOTATIONS,
    },
)
