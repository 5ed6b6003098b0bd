"""The worker's dispatch tools over MCP: a small stdio server, no dependencies.

Rules:
1. MCP stdio: one JSON-RPC 2.0 message per line on stdin and on stdout, UTF-8. stdout carries
   protocol messages only; logs go to stderr. End of stdin ends the server.
2. ``initialize`` answers the client's protocol version when spoken here (``PROTOCOL_VERSIONS``),
   else the newest; capabilities are ``tools`` only. Notifications are never answered; errors
   are JSON-RPC's codes.
3. The four dispatch tools, bound to the task whose token started the server, answer their JSON
   as text and as ``structuredContent`` conforming to the tool's ``outputSchema``.
4. A refusal is a result with ``isError: true`` and text ``{"error": kind, "message": ...}``, for
   the worker to correct itself, without ``structuredContent`` (not the output schema). Anything
   else is kind ``ledger_failure`` with a fixed message; its detail goes to stderr, never into
   the model's transcript.
5. ``on_initialized`` is called on ``notifications/initialized``: the handshake is complete
   (``doctor --deep``'s probe marks it, ``shell.worker.probe``).
6. The tools' arguments and receipts (``core.dispatch_tools.decisions``, ``.instruction``) are
   imported by the call that reads them: ``initialize`` and ``tools/list`` need neither, and a
   worker waits on the start."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping
from typing import IO, TYPE_CHECKING, Any, Final, Protocol

from returns.result import Failure, Result, Success

from core.dispatch_tools import LEDGER_FAILURE, NOTHING_WAITING, ToolRefusal
from core.json_input import JsonRefused, decode_json
from shell.worker.mcp_tools import BLURB, TOOLS

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


class DispatchTools(Protocol):
    """What the server serves: ``shell.ledger.worker_calls.DispatchLedger``, or a fake in a test."""

    def get_dispatch(self, request: GetRequest) -> Result[Dispatched, ToolRefusal]: ...
    def ack_dispatch(self, request: AckRequest) -> Result[DeliveryReceipt, ToolRefusal]: ...
    def complete_dispatch(self, request: CompleteRequest) -> Result[DeliveryReceipt, ToolRefusal]: ...
    def reply_dispatch(self, request: ReplyRequest) -> Result[DeliveryReceipt, ToolRefusal]: ...


# -- the server ---------------------------------------------------------------------------------


class _RpcError(Exception):
    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def _error(request_id: object, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}


def _tool_result(body: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "content": [{"type": "text", "text": json.dumps(body, ensure_ascii=False)}],
        "structuredContent": dict(body),
        "isError": False,
    }


def _tool_error(body: Mapping[str, Any]) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": json.dumps(body, ensure_ascii=False)}], "isError": True}


class McpServer:
    """One session's protocol: a decoded message in, the reply (or None) out."""

    def __init__(
        self,
        tools: DispatchTools,
        *,
        version: str = "0.1.0",
        on_initialized: Callable[[], None] | None = None,
    ) -> None:
        self._tools = tools
        self._version = version
        self._on_initialized = on_initialized
        self._handlers: dict[str, Callable[[Mapping[str, Any]], Result[Mapping[str, Any], ToolRefusal]]] = {
            "get_dispatch": self._get_dispatch,
            "ack_dispatch": self._ack_dispatch,
            "complete_dispatch": self._complete_dispatch,
            "reply_dispatch": self._reply_dispatch,
        }

    # -- the wire

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
            return _error(
                request_id if valid_id else None,
                INVALID_REQUEST,
                "invalid request: jsonrpc 2.0, a method, an id",
            )
        params = message.get("params", {})
        if not has_id:
            self._notification(method)
            return None
        try:
            if params is not None and not isinstance(params, dict):
                raise _RpcError(INVALID_PARAMS, "invalid params: params is an object")
            result = self._request(method, params or {})
        except _RpcError as error:
            return _error(request_id, error.code, error.message)
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
        log.info(
            "initialize: client %s asked for protocol %s, answered %s",
            client.get("name") if isinstance(client, dict) else "unnamed", asked, version,
        )
        return {
            "protocolVersion": version,
            "capabilities": {"tools": {"listChanged": False}},
            "serverInfo": {"name": SERVER_NAME, "version": self._version},
            "instructions": BLURB,
        }

    def _call(self, params: Mapping[str, Any]) -> dict[str, Any]:
        name = params.get("name")
        arguments = params.get("arguments")
        if arguments is None:
            arguments = {}
        if not isinstance(name, str) or name not in self._handlers:
            raise _RpcError(INVALID_PARAMS, f"unknown tool: {name}")
        if not isinstance(arguments, dict):
            raise _RpcError(INVALID_PARAMS, "invalid params: arguments is an object")
        log.info("tools/call %s", name)
        try:
            answer = self._handlers[name](arguments)
        except Exception as error:
            # The ledger failing, not the worker: the detail is for the log, never the transcript.
            log.error("%s failed: %s: %s", name, type(error).__name__, error)
            return _tool_error({"error": LEDGER_FAILURE_KIND, "message": LEDGER_FAILURE})
        match answer:
            case Success(body):
                return _tool_result(body)
            case Failure(refusal):
                log.info("%s refused: %s", name, refusal.kind)
                return _tool_error(refusal.to_json())
        raise AssertionError("a Result is a Success or a Failure")  # pragma: no cover

    # -- the tools

    def _get_dispatch(self, arguments: Mapping[str, Any]) -> Result[Mapping[str, Any], ToolRefusal]:
        from core.dispatch_tools.decisions import read_get_arguments  # noqa: PLC0415 -- rule 6

        return read_get_arguments(arguments).bind(self._tools.get_dispatch).map(_dispatched_json)

    def _ack_dispatch(self, arguments: Mapping[str, Any]) -> Result[Mapping[str, Any], ToolRefusal]:
        from core.dispatch_tools.decisions import read_ack_arguments  # noqa: PLC0415 -- rule 6
        from core.dispatch_tools.instruction import DeliveryReceipt  # noqa: PLC0415 -- rule 6

        return read_ack_arguments(arguments).bind(self._tools.ack_dispatch).map(DeliveryReceipt.to_json)

    def _complete_dispatch(self, arguments: Mapping[str, Any]) -> Result[Mapping[str, Any], ToolRefusal]:
        from core.dispatch_tools.decisions import read_complete_arguments  # noqa: PLC0415 -- rule 6
        from core.dispatch_tools.instruction import DeliveryReceipt  # noqa: PLC0415 -- rule 6

        return (
            read_complete_arguments(arguments)
            .bind(self._tools.complete_dispatch)
            .map(DeliveryReceipt.to_json)
        )

    def _reply_dispatch(self, arguments: Mapping[str, Any]) -> Result[Mapping[str, Any], ToolRefusal]:
        from core.dispatch_tools.decisions import read_reply_arguments  # noqa: PLC0415 -- rule 6
        from core.dispatch_tools.instruction import DeliveryReceipt  # noqa: PLC0415 -- rule 6

        return read_reply_arguments(arguments).bind(self._tools.reply_dispatch).map(DeliveryReceipt.to_json)


def _dispatched_json(dispatched: Dispatched) -> Mapping[str, Any]:
    if dispatched.instruction is None:
        return {"instruction": None, "message": NOTHING_WAITING}
    return {"instruction": dispatched.instruction.to_json()}


def _encode(message: object) -> bytes:
    """One line: ASCII only, so no character in a body (U+2028, say) reads as a line break to a
    client that splits lines more eagerly than on ``\\n``."""
    return json.dumps(message, ensure_ascii=True, separators=(",", ":")).encode("ascii") + b"\n"


def serve(reader: IO[bytes], writer: IO[bytes], server: McpServer) -> None:
    """Answer each line from ``reader`` on ``writer`` until ``reader`` ends."""
    for line in iter(reader.readline, b""):
        reply = server.handle_line(line)
        if reply is not None:
            writer.write(reply)
            writer.flush()
    log.info("stdin closed; the server stops")
