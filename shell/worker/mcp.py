"""The worker's dispatch tools over MCP: a small stdio server, no dependencies.

One JSON-RPC 2.0 message a line on stdin and on stdout; stdout carries protocol messages only,
and the end of stdin ends the server. ``initialize`` answers the client's protocol version when
spoken here, else the newest; a notification is never answered. The four tools, bound to the
task whose token started the server, answer their JSON as text and as ``structuredContent``. A
refusal is a result with ``isError`` and ``{"error": kind, "message": ...}``, for the worker to
correct itself; any other failure is ``ledger_failure`` with a fixed message, its detail on
stderr, never in the model's transcript.

``TOOLS`` is what ``tools/list`` answers, in the order a worker uses them; an input schema refuses
what it does not name. Their bounds are core's, read from ``core.dispatch_tools``: a schema
is advice, core is the judge. A worker waits on the start, so the tools' arguments and receipts
are imported by the first call that reads them."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping
from typing import IO, TYPE_CHECKING, Any, Final, Protocol

from returns.result import Failure, Result, Success

from core import dispatch_tools as bounds
from core.dispatch_tools import LEDGER_FAILURE, NOTHING_WAITING, WORDS_STATES, ToolRefusal
from core.json_input import JsonRefused, decode_json
from core.states import DeliveryState

if TYPE_CHECKING:
    from core.dispatch_tools.decisions import AckRequest, CompleteRequest, GetRequest, ReplyRequest
    from core.dispatch_tools.instruction import DeliveryReceipt
    from shell.ledger.worker_calls import Dispatched

log = logging.getLogger(__name__)

SERVER_NAME: Final = "basecamp-connect"
PROTOCOL_VERSIONS: Final = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")  # newest first
LEDGER_FAILURE_KIND: Final = "ledger_failure"
PARSE_ERROR: Final = -32700
INVALID_REQUEST: Final = -32600
METHOD_NOT_FOUND: Final = -32601
INVALID_PARAMS: Final = -32602
INTERNAL_ERROR: Final = -32603

BLURB: Final = ("Your dispatch from the Basecamp connector: pull the instruction you were started for, "
                "acknowledge it, and report its outcome. The connector posts your words in Basecamp for you, "
                "exactly once. Bound to this task; there is no listing.")

_INT, _STR, _BOOL = {"type": "integer"}, {"type": "string"}, {"type": "boolean"}
_ID = {"type": "integer", "minimum": 1}
_DELIVERY = {"type": "string", "enum": [str(state) for state in DeliveryState]}
_EVENT = {**_ID, "description": "The event get_dispatch returned."}
_EARLIEST = "An event on your task. Omit for the earliest not yet acknowledged."
_ANNOTATIONS = {"readOnlyHint": False, "destructiveHint": False, "idempotentHint": True,
                "openWorldHint": False}  # fmt: skip


def _object(required: list[str] | None = None, **properties: object) -> dict[str, Any]:
    """An object schema: every property required, unless ``required`` names which."""
    return {"type": "object", "properties": properties, "required": required or list(properties)}


def _input(*required: str, **properties: object) -> dict[str, Any]:
    """A tool's arguments: no property it does not name."""
    return {"type": "object", "properties": properties, **({"required": list(required)} if required else {}),
            "additionalProperties": False}  # fmt: skip


def _tool(name: str, title: str, description: str, arguments: object, answer: object) -> dict[str, Any]:
    return {"name": name, "title": title, "description": f"{BLURB} {name}: {description}",
            "inputSchema": arguments, "outputSchema": answer, "annotations": _ANNOTATIONS}  # fmt: skip


_AUTHOR = _object(id={"type": ["integer", "null"]}, trusted=_BOOL)  # who wrote a field; trusted or not
_INSTRUCTION_SCHEMA = _object(
    event_id=_INT, event_type=_STR, trigger=_STR,
    recording=_object(bucket_id=_INT, recording_id=_INT, type=_STR, title=_STR, title_author=_AUTHOR,
                      url=_STR),
    reply_to=_object(kind=_STR, recording_id=_INT),
    requester_id=_INT, acknowledge=_BOOL, guard_acknowledged=_BOOL, delivery=_DELIVERY, content=_STR,
    content_updated_at={"type": ["string", "null"]}, content_author=_AUTHOR)  # fmt: skip
_RECEIPT_SCHEMA = _object(
    ["event_id", "delivery"],
    event_id=_INT, delivery=_DELIVERY, ack_id=_INT,
    outcome={"type": "string", "enum": ["succeeded", "failed", "unknown"]},
    reply_id=_INT, links={"type": "array", "items": _STR},
    message=_object(["state"], state={"type": "string", "enum": list(WORDS_STATES)},
                    kind={"type": "string", "enum": ["boost", "comment", "chat_line"]}, id=_INT,
                    note=_STR))  # fmt: skip
_POSTED = (" The connector posts it for you, exactly once: the answer's message says posted (with its id), "
           "or waiting (it will be posted; do not send it again).")
_MARKDOWN = ("Markdown at a comment (bold, italics, links, lists, quotes, code blocks), "
             "plain text in a Campfire.")

TOOLS: Final[tuple[dict[str, Any], ...]] = (
    _tool("get_dispatch", "Get your dispatch",
          "the instruction for an event on your task, or, without event_id, the earliest you have not "
          "acknowledged. Returns the recording, where to reply, who asked, the request's content with your "
          "own mention removed, who wrote the content and the title and whether the connector trusts them "
          "(content_author, recording.title_author), whether to acknowledge, and whether the connector "
          "already acknowledged for you (guard_acknowledged). Calling it records that you were handed the "
          "instruction; it does not acknowledge. A repeat returns the same instruction.",
          _input(event_id={**_ID, "description": _EARLIEST}),
          _object(["instruction"], instruction={"anyOf": [{"type": "null"}, _INSTRUCTION_SCHEMA]},
                  message=_STR)),
    _tool("ack_dispatch", "Acknowledge your dispatch",
          f"acknowledge an instruction you were handed, in your own words (text): up to {bounds.BOOST_LIMIT} "
          f"characters is a boost on the request, longer a short message at reply_to.{_POSTED} Marks it "
          "delivered. Safe to retry: a repeat answers the same receipt.",
          _input("event_id", event_id=_EVENT,
                 text={"type": "string", "maxLength": bounds.MAX_ACK_CHARACTERS,
                       "description": f"Your acknowledgement, e.g. 'On it'. {_MARKDOWN}"},
                 ack_id={**_ID, "description": "Only if you posted an acknowledgement yourself, with tools "
                         "of your own: its id. Never with text."}),
          _RECEIPT_SCHEMA),
    _tool("complete_dispatch", "Report your dispatch's outcome",
          "report the outcome of an instruction: succeeded or failed, with your reply to the person who "
          f"asked (reply) and any links (a pull request, a card).{_POSTED} Also acknowledges it. A repeat of "
          "the same report answers the same receipt; a different report is refused, because a reported "
          "outcome stands.",
          _input("event_id", "outcome",
                 event_id=_EVENT, outcome={"type": "string", "enum": ["succeeded", "failed"]},
                 reply={"type": "string", "maxLength": bounds.MAX_MESSAGE_CHARACTERS,
                        "description": f"Your answer, posted at reply_to. {_MARKDOWN}"},
                 reply_id={**_ID, "description": "Only if you replied yourself, with tools of your own: its "
                           "id. Never with reply."},
                 links={"type": "array", "maxItems": bounds.MAX_LINKS,
                        "items": {"type": "string", "maxLength": bounds.MAX_LINK_LENGTH},
                        "description": "http(s) URLs to what the work produced."}),
          _RECEIPT_SCHEMA),
    _tool("reply_dispatch", "Say something before you finish",
          "a message at reply_to before you complete (a question, a note on progress), at most "
          f"{bounds.MAX_NOTES} per event.{_POSTED} Your final answer goes in complete_dispatch's reply, not "
          "here. The same text again is the same message.",
          _input("event_id", "text", event_id=_EVENT,
                 text={"type": "string", "maxLength": bounds.MAX_MESSAGE_CHARACTERS,
                       "description": _MARKDOWN}),
          _RECEIPT_SCHEMA))  # fmt: skip


_TOOL_NAMES = frozenset(tool["name"] for tool in TOOLS)


class DispatchTools(Protocol):
    """What the server serves: ``shell.ledger.worker_calls.DispatchLedger``, or a fake in a test."""

    def get_dispatch(self, request: GetRequest) -> Result[Dispatched, ToolRefusal]: ...
    def ack_dispatch(self, request: AckRequest) -> Result[DeliveryReceipt, ToolRefusal]: ...
    def complete_dispatch(self, request: CompleteRequest) -> Result[DeliveryReceipt, ToolRefusal]: ...
    def reply_dispatch(self, request: ReplyRequest) -> Result[DeliveryReceipt, ToolRefusal]: ...


class _RpcError(Exception):
    """A request answered with a JSON-RPC error: its ``(code, message)``."""


def _error(request_id: object, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}


def _tool_answer(body: Mapping[str, Any], *, refused: bool = False) -> dict[str, Any]:
    text = [{"type": "text", "text": json.dumps(body, ensure_ascii=False)}]
    if refused:
        return {"content": text, "isError": True}
    return {"content": text, "structuredContent": dict(body), "isError": False}


class McpServer:
    """One session's protocol: a decoded message in, the reply (or None) out."""

    def __init__(self, tools: DispatchTools, *, version: str = "0.1.0",
                 on_initialized: Callable[[], None] | None = None) -> None:
        self._tools = tools
        self._version = version
        self._on_initialized = on_initialized

    def handle_line(self, line: bytes) -> bytes | None:
        """One line from stdin; the line to write back (with its newline), or None."""
        if not line.strip():
            return None
        decoded = decode_json(line)
        if isinstance(decoded, JsonRefused):  # not JSON, not UTF-8, or too deep or large (core.json_input)
            return _encode(_error(None, PARSE_ERROR, "parse error: a line is one JSON-RPC message"))
        message = decoded.value
        if isinstance(message, list):
            if not message:
                return _encode(_error(None, INVALID_REQUEST, "invalid request: an empty batch"))
            replies = [reply for item in message if (reply := self.handle_message(item)) is not None]
            return _encode(replies) if replies else None
        reply = self.handle_message(message)
        return None if reply is None else _encode(reply)

    def handle_message(self, message: object) -> dict[str, Any] | None:
        """One decoded JSON-RPC message; its response, or None for a notification or a response."""
        if not isinstance(message, dict):
            return _error(None, INVALID_REQUEST, "invalid request: a message is a JSON object")
        request_id = message.get("id")
        has_id = "id" in message
        method = message.get("method")
        if method is None and has_id and ("result" in message or "error" in message):
            return None  # a response to a request this server never sends; nothing to say
        valid_id = isinstance(request_id, str | int) and not isinstance(request_id, bool)
        if message.get("jsonrpc") != "2.0" or not isinstance(method, str) or (has_id and not valid_id):
            shown = request_id if valid_id else None
            return _error(shown, INVALID_REQUEST, "invalid request: jsonrpc 2.0, a method, an id")
        params = message.get("params", {})
        if not has_id:
            self._notification(method)
            return None
        try:
            if params is not None and not isinstance(params, dict):
                raise _RpcError(INVALID_PARAMS, "invalid params: params is an object")
            result = self._request(method, params or {})
        except _RpcError as error:
            return _error(request_id, *error.args)
        except Exception:  # a bug here must not end the session, nor leak into the transcript
            log.exception("%s failed", method)
            return _error(request_id, INTERNAL_ERROR, "internal error")
        return {"jsonrpc": "2.0", "id": request_id, "result": result}

    def _notification(self, method: str) -> None:
        if method == "notifications/initialized":
            log.info("the client is initialized")
            if self._on_initialized is not None:
                self._on_initialized()
        # notifications/cancelled: each call is answered before the next line is read, so there is
        # never one in flight to cancel. Any other notification is not this server's business.

    def _request(self, method: str, params: Mapping[str, Any]) -> dict[str, Any]:
        match method:
            case "initialize":
                return self._initialize(params)
            case "ping":
                return {}
            case "tools/list":
                return {"tools": [dict(tool) for tool in TOOLS]}
            case "tools/call":
                return self._call(params)
        raise _RpcError(METHOD_NOT_FOUND, f"method not found: {method}")

    def _initialize(self, params: Mapping[str, Any]) -> dict[str, Any]:
        asked = params.get("protocolVersion")
        version = asked if asked in PROTOCOL_VERSIONS else PROTOCOL_VERSIONS[0]
        client = params.get("clientInfo")
        log.info("initialize: client %s asked for protocol %s, answered %s",
                 client.get("name") if isinstance(client, dict) else "unnamed", asked, version)
        return {"protocolVersion": version, "capabilities": {"tools": {"listChanged": False}},
                "serverInfo": {"name": SERVER_NAME, "version": self._version}, "instructions": BLURB}

    def _call(self, params: Mapping[str, Any]) -> dict[str, Any]:
        name = params.get("name")
        arguments = {} if (given := params.get("arguments")) is None else given
        if not isinstance(name, str) or name not in _TOOL_NAMES:
            raise _RpcError(INVALID_PARAMS, f"unknown tool: {name}")
        if not isinstance(arguments, dict):
            raise _RpcError(INVALID_PARAMS, "invalid params: arguments is an object")
        log.info("tools/call %s", name)
        try:
            answer = self._answer(name, arguments)
        except Exception as error:
            # The ledger failing, not the worker: the detail is for the log, never the transcript.
            log.error("%s failed: %s: %s", name, type(error).__name__, error)
            return _tool_answer({"error": LEDGER_FAILURE_KIND, "message": LEDGER_FAILURE}, refused=True)
        match answer:
            case Success(body):
                return _tool_answer(body)
            case Failure(refusal):
                log.info("%s refused: %s", name, refusal.kind)
                return _tool_answer(refusal.to_json(), refused=True)
        raise AssertionError("a Result is a Success or a Failure")  # pragma: no cover

    def _answer(self, name: str, arguments: Mapping[str, Any]) -> Result[Mapping[str, Any], ToolRefusal]:
        from core.dispatch_tools import decisions as given  # noqa: PLC0415
        from core.dispatch_tools.instruction import DeliveryReceipt  # noqa: PLC0415

        tools, receipt = self._tools, DeliveryReceipt.to_json
        match name:
            case "get_dispatch":
                return given.read_get_arguments(arguments).bind(tools.get_dispatch).map(_dispatched_json)
            case "ack_dispatch":
                return given.read_ack_arguments(arguments).bind(tools.ack_dispatch).map(receipt)
            case "complete_dispatch":
                return given.read_complete_arguments(arguments).bind(tools.complete_dispatch).map(receipt)
            case _:  # reply_dispatch
                return given.read_reply_arguments(arguments).bind(tools.reply_dispatch).map(receipt)


def _dispatched_json(dispatched: Dispatched) -> Mapping[str, Any]:
    if dispatched.instruction is None:
        return {"instruction": None, "message": NOTHING_WAITING}
    return {"instruction": dispatched.instruction.to_json()}


def _encode(message: object) -> bytes:
    """One line: ASCII only, so no character in a body (U+2028, say) reads as a line break to a
    client that splits lines more eagerly than on ``\\n``."""
    return json.dumps(message, ensure_ascii=True, separators=(",", ":")).encode("ascii") + b"\n"


def serve(reader: IO[bytes], writer: IO[bytes], server: McpServer) -> None:
    for line in iter(reader.readline, b""):
        if (reply := server.handle_line(line)) is not None:
            writer.write(reply)
            writer.flush()
    log.info("stdin closed; the server stops")
