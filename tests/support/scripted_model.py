"""A scripted Anthropic Messages API, for the real Claude Code (``ANTHROPIC_BASE_URL``).

A fake with behaviour, not a recording: it reads each request as the real API would, and answers
with the next step of its script, chosen from what the request itself holds.

Rules:
1. ``POST /v1/messages`` is answered as the API answers it: server-sent events when the request
   says ``stream``, one JSON message otherwise. Every other path (``count_tokens`` and the like)
   gets a small well-formed answer. Every request is logged, in arrival order, whole.
2. A request is a *worker turn* when its tools or its messages name the connector's tools or its
   prompt; anything else Claude Code asks on the side (a title, a quota probe) is answered with
   one word of text and never advances the script.
3. A worker turn's step is the number of tool results its conversation holds since its latest
   task prompt (the connector's dispatch prompt, "Task N."): the script is a list of ``Step``;
   step N is what the model says after N tool results. A conversation resumed into a later task
   starts that task's script afresh: ``per_task[k]`` is the script of the conversation's k-th task
   prompt, when given (``script`` otherwise). Past a script's end, the model ends its turn with
   text.
4. A step names a tool by the end of its name (``get_dispatch`` matches
   ``mcp__connector__get_dispatch``), and it is called only when the request lists that tool:
   otherwise the model says so in text and ends its turn, as a model that cannot wait would.
5. A step's arguments are filled against the listed tool's own schema: each property the schema
   names is taken from the step's arguments, or else from what the model knows (``task_id`` from
   the prompt; ``event_id`` from the latest ``get_dispatch`` answer, or before any, the latest
   prompt that names one: a follow-up's turn names its own); a property the schema does not name
   is never sent, so the script works with whichever version of a tool's schema the connector
   offers. A ``get_dispatch`` step asks for the event the latest prompt names.
7. A step's ``delay`` is waited before it is answered: a worker that takes that long to think.
6. ``answer_error`` makes every worker turn answer that HTTP status with the API's error body
   (an invalid key is a 401).
"""

from __future__ import annotations

import json
import re
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

CONNECTOR_TOOL_PREFIX = "mcp__connector__"
_EVENT = re.compile(r"event_id (\d+)")
_TASK = re.compile(r"Task (\d+)\.")
_PULLED = re.compile(r'"event_id":\s*(\d+)')


@dataclass(frozen=True)
class Step:
    """One thing the model says: a tool call (``tool``, by the end of its name) or text only."""

    tool: str = ""
    arguments: dict[str, Any] = field(default_factory=dict)
    text: str = ""
    delay: float = 0.0  # seconds before it is answered (rule 7)


def worker_script(file_path: str, reply: str = "Done: wrote the file.") -> list[Step]:
    """The script of a worker that does its whole job: pull, acknowledge, write a file in its
    directory, complete (with its words, where the schema takes them)."""
    return [
        Step("get_dispatch"),
        Step("ack_dispatch", {"text": "On it"}),
        Step("Write", {"file_path": file_path, "content": "written by the worker\n"}),
        Step("complete_dispatch", {"outcome": "succeeded", "reply": reply, "links": []}),
        Step(text="All done."),
    ]


def _text_of(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(_text_of(part.get("text", "") if isinstance(part, dict) else part) for part in content)
    return ""


def _prompt_text(message: dict[str, Any]) -> str:
    """A user message's own words (no tool result's)."""
    if message.get("role") != "user":
        return ""
    content = message.get("content")
    parts = content if isinstance(content, list) else [content]
    return "\n".join(
        _text_of(part.get("text", "")) if isinstance(part, dict) and part.get("type") == "text" else _text_of(part)
        for part in parts
        if not (isinstance(part, dict) and part.get("type") == "tool_result")
    )


def _tool_results(messages: list[dict[str, Any]]) -> int:
    count = 0
    for message in messages:
        content = message.get("content")
        if isinstance(content, list):
            count += sum(1 for part in content if isinstance(part, dict) and part.get("type") == "tool_result")
    return count


@dataclass
class ScriptedModel:
    """The scripted API (rules 1-6): ``start()``, then ``base_url`` for ``ANTHROPIC_BASE_URL``."""

    script: list[Step] = field(default_factory=list)
    per_task: list[list[Step]] = field(default_factory=list)  # rule 3
    answer_error: int | None = None
    requests: list[dict[str, Any]] = field(default_factory=list)  # every request, in order
    answers: list[list[dict[str, Any]]] = field(default_factory=list)  # every worker turn's answer
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _server: ThreadingHTTPServer | None = None

    @property
    def base_url(self) -> str:
        assert self._server is not None, "start() the model first"
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def worker_turns(self) -> list[dict[str, Any]]:
        """The logged requests that were worker turns (rule 2)."""
        with self._lock:
            return [body for body in self.requests if _is_worker_turn(body)]

    def start(self) -> ScriptedModel:
        model = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: object) -> None:
                return

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    body = {"unreadable": raw.decode("utf-8", "replace")}
                with model._lock:
                    model.requests.append({"path": self.path, **body})
                model._answer(self, self.path, body)

            def do_GET(self) -> None:
                self._send_json(200, {"data": [], "has_more": False})

            def do_HEAD(self) -> None:
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def _send_json(self, status: int, payload: object) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self._handler = Handler
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, name="scripted-model", daemon=True).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    def __enter__(self) -> ScriptedModel:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- answering ---------------------------------------------------------------------------

    def _answer(self, handler: Any, path: str, body: dict[str, Any]) -> None:
        if not path.split("?", maxsplit=1)[0].endswith("/v1/messages"):
            handler._send_json(200, {"input_tokens": 1})
            return
        if not _is_worker_turn(body):
            self._reply(handler, body, [{"type": "text", "text": "Worker"}], "end_turn")
            return
        if self.answer_error is not None:
            handler._send_json(
                self.answer_error,
                {"type": "error", "error": {"type": "authentication_error", "message": "invalid x-api-key"}},
            )
            return
        content, stop = self._next(body)
        with self._lock:
            self.answers.append(content)
        self._reply(handler, body, content, stop)

    def _next(self, body: dict[str, Any]) -> tuple[list[dict[str, Any]], str]:
        messages = body.get("messages") or []
        prompts = [index for index, message in enumerate(messages) if _TASK.search(_prompt_text(message))]
        since = prompts[-1] if prompts else 0
        step_index = _tool_results(messages[since:])
        script = self.per_task[len(prompts) - 1] if 0 < len(prompts) <= len(self.per_task) else self.script
        if step_index >= len(script):
            return [{"type": "text", "text": "Nothing more to do."}], "end_turn"
        step = script[step_index]
        if step.delay:
            time.sleep(step.delay)
        if not step.tool:
            return [{"type": "text", "text": step.text or "Done."}], "end_turn"
        tools = {tool.get("name", ""): tool for tool in body.get("tools") or [] if isinstance(tool, dict)}
        name = next((listed for listed in tools if listed == step.tool or listed.endswith("__" + step.tool)), None)
        if name is None:
            return [{"type": "text", "text": f"I have no tool {step.tool}; stopping."}], "end_turn"
        known = _known_values(messages, asking=step.tool == "get_dispatch")
        schema = tools[name].get("input_schema") or {}
        properties = schema.get("properties") or {}
        arguments = {
            key: step.arguments[key] if key in step.arguments else known[key]
            for key in properties
            if key in step.arguments or key in known
        }
        call = {"type": "tool_use", "id": f"toolu_{len(self.requests):04d}", "name": name, "input": arguments}
        return [call], "tool_use"

    def _reply(self, handler: Any, body: dict[str, Any], content: list[dict[str, Any]], stop: str) -> None:
        message = {
            "id": f"msg_{len(self.requests):04d}",
            "type": "message",
            "role": "assistant",
            "model": body.get("model", "scripted"),
            "content": content,
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 5},
        }
        if not body.get("stream"):
            handler._send_json(200, message)
            return
        events: list[tuple[str, dict[str, Any]]] = [
            ("message_start", {"type": "message_start", "message": {**message, "content": [], "stop_reason": None}})
        ]
        for index, block in enumerate(content):
            start: dict[str, Any]
            if block["type"] == "text":
                start = {"type": "text", "text": ""}
                delta = {"type": "text_delta", "text": block["text"]}
            else:
                start = {**block, "input": {}}
                delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
            events.append(("content_block_start", {"type": "content_block_start", "index": index, "content_block": start}))
            events.append(("content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}))
            events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
        events.append(
            (
                "message_delta",
                {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None}, "usage": {"output_tokens": 5}},
            )
        )
        events.append(("message_stop", {"type": "message_stop"}))
        data = b"".join(f"event: {name}\ndata: {json.dumps(payload)}\n\n".encode() for name, payload in events)
        handler.send_response(200)
        handler.send_header("Content-Type", "text/event-stream")
        handler.send_header("Content-Length", str(len(data)))
        handler.end_headers()
        handler.wfile.write(data)


def _is_worker_turn(body: dict[str, Any]) -> bool:
    tools = body.get("tools") or []
    if any(isinstance(tool, dict) and str(tool.get("name", "")).startswith(CONNECTOR_TOOL_PREFIX) for tool in tools):
        return True
    return any("get_dispatch" in _text_of(message.get("content")) for message in body.get("messages") or [])


def _known_values(messages: list[dict[str, Any]], *, asking: bool) -> dict[str, Any]:
    """What the model knows from its conversation (rule 5)."""
    prompts, answers = [], []
    for message in messages:
        content = message.get("content")
        parts = content if isinstance(content, list) else [content]
        for part in parts:
            if isinstance(part, dict) and part.get("type") == "tool_result":
                answers.append(_text_of(part.get("content")))
            elif message.get("role") == "user":
                prompts.append(_text_of(part.get("text", "") if isinstance(part, dict) else part))
    known: dict[str, Any] = {}
    asked = [int(found) for text in prompts for found in _EVENT.findall(text)]
    pulled = [int(found) for text in answers for found in _PULLED.findall(text)]
    if asked and (asking or not pulled):
        known["event_id"] = asked[-1]
    elif pulled:
        known["event_id"] = pulled[-1]
    tasks = [found for text in prompts for found in _TASK.findall(text)]
    if tasks:
        known["task_id"] = int(tasks[0])
    return known
