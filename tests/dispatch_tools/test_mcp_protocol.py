"""shell.worker.mcp in process: the JSON-RPC and MCP shapes, line by line, over a real ledger."""

from __future__ import annotations

import io
import json
import logging
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from core.dispatch_tools import LEDGER_FAILURE
from core.dispatch_tools.decisions import AckRequest, CompleteRequest, GetRequest
from core.dispatch_tools.instruction import DeliveryReceipt
from shell.ledger.worker_calls import Dispatched
from shell.worker.mcp import BLURB, PROTOCOL_VERSIONS, TOOLS, McpServer, serve
from tests.dispatch_tools.world import DispatchWorld, Task


class Session:
    """A client's side of one in-process session."""

    def __init__(self, server: McpServer) -> None:
        self.server = server
        self.ids = 0

    def send(self, message: object) -> Any:
        raw = json.dumps(message).encode() + b"\n"
        reply = self.server.handle_line(raw)
        return None if reply is None else json.loads(reply)

    def request(self, method: str, params: dict[str, Any] | None = None) -> Any:
        self.ids += 1
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": self.ids, "method": method}
        if params is not None:
            message["params"] = params
        reply = self.send(message)
        assert reply["id"] == self.ids
        return reply

    def call(self, name: str, **arguments: Any) -> dict[str, Any]:
        reply = self.request("tools/call", {"name": name, "arguments": arguments})
        result: dict[str, Any] = reply["result"]
        (content,) = result["content"]
        assert content["type"] == "text"
        body = json.loads(content["text"])
        if result["isError"]:
            assert "structuredContent" not in result
        else:
            assert result["structuredContent"] == body
            tool = next(tool for tool in TOOLS if tool["name"] == name)
            Draft202012Validator(tool["outputSchema"]).validate(body)
        return {"isError": result["isError"], **body}


@pytest.fixture
def task(world: DispatchWorld) -> Task:
    world.request(1)
    return world.task(1)


@pytest.fixture
def session(world: DispatchWorld, task: Task) -> Session:
    return Session(McpServer(world.tools(task)))


@pytest.mark.parametrize("version", PROTOCOL_VERSIONS)
def test_initialize_answers_the_version_asked_for(session: Session, version: str) -> None:
    reply = session.request(
        "initialize", {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
    )
    result = reply["result"]
    assert result["protocolVersion"] == version
    assert result["capabilities"] == {"tools": {"listChanged": False}}
    assert result["serverInfo"]["name"] == "basecamp-connect"
    assert result["instructions"] == BLURB
    assert reply["jsonrpc"] == "2.0"


def test_initialize_answers_its_newest_for_a_version_it_does_not_speak(session: Session) -> None:
    result = session.request("initialize", {"protocolVersion": "2099-01-01", "capabilities": {}})["result"]
    assert result["protocolVersion"] == PROTOCOL_VERSIONS[0]


def test_notifications_are_never_answered(session: Session) -> None:
    assert session.send({"jsonrpc": "2.0", "method": "notifications/initialized"}) is None
    assert session.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}) is None
    assert session.send({"jsonrpc": "2.0", "method": "no/such/notification"}) is None
    assert session.send({"jsonrpc": "2.0", "id": 5, "result": {}}) is None, "a response is not answered"


def test_ping_unknown_methods_and_malformed_lines(session: Session) -> None:
    assert session.request("ping")["result"] == {}
    assert session.request("resources/list")["error"]["code"] == -32601
    assert json.loads(session.server.handle_line(b"{not json\n") or b"") == {
        "jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "parse error: a line is one JSON-RPC message"},
    }
    assert json.loads(session.server.handle_line(b"\xff\xfe\n") or b"")["error"]["code"] == -32700
    assert session.server.handle_line(b"   \n") is None
    assert session.send([1])[0]["error"]["code"] == -32600
    assert session.send({"jsonrpc": "1.0", "id": 3, "method": "ping"})["error"]["code"] == -32600
    assert session.send({"jsonrpc": "2.0", "id": True, "method": "ping"}) == {
        "jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "invalid request: jsonrpc 2.0, a method, an id"},
    }
    assert session.send({"jsonrpc": "2.0", "id": 4, "method": "ping", "params": [1]})["error"]["code"] == -32602
    assert session.send([])["error"]["code"] == -32600


def test_a_batch_is_answered_as_a_batch(session: Session) -> None:
    replies = session.send(
        [
            {"jsonrpc": "2.0", "id": "a", "method": "ping"},
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {"jsonrpc": "2.0", "id": "b", "method": "tools/list"},
        ]
    )
    assert [reply["id"] for reply in replies] == ["a", "b"]


def test_tools_list_names_four_tools_with_valid_schemas(session: Session) -> None:
    tools = session.request("tools/list")["result"]["tools"]
    assert [tool["name"] for tool in tools] == ["get_dispatch", "ack_dispatch", "complete_dispatch", "reply_dispatch"]
    for tool in tools:
        assert tool["description"].startswith(BLURB)
        Draft202012Validator.check_schema(tool["inputSchema"])
        Draft202012Validator.check_schema(tool["outputSchema"])
        assert tool["inputSchema"]["type"] == tool["outputSchema"]["type"] == "object"
        assert tool["inputSchema"]["additionalProperties"] is False
    assert tools[2]["inputSchema"]["required"] == ["event_id", "outcome"]


def test_the_tools_over_the_protocol(session: Session, world: DispatchWorld, task: Task) -> None:
    got = session.call("get_dispatch")
    assert got["isError"] is False
    assert got["instruction"]["event_id"] == 1
    assert got["instruction"]["delivery"] == "exposed"
    assert world.guard_intent(1) == ("canceled", "get_dispatch")

    assert session.call("ack_dispatch", event_id=1, ack_id=501) == {
        "isError": False, "event_id": 1, "delivery": "delivered", "ack_id": 501,
    }
    assert session.call("complete_dispatch", event_id=1, outcome="succeeded", reply_id=9, links=["https://e.com/1"]) == {
        "isError": False, "event_id": 1, "delivery": "completed", "ack_id": 501, "outcome": "succeeded",
        "reply_id": 9, "links": ["https://e.com/1"],
    }
    assert session.call("get_dispatch") == {
        "isError": False, "instruction": None, "message": "Nothing on this task is waiting to be acknowledged.",
    }


def test_refusals_are_tool_errors_the_worker_can_read(session: Session, world: DispatchWorld, task: Task) -> None:
    assert session.call("ack_dispatch", event_id=1) == {
        "isError": True, "error": "not_exposed",
        "message": "the event was not handed to this worker; call get_dispatch for it first",
    }
    assert session.call("get_dispatch", event_id=2)["error"] == "not_on_task"
    session.call("get_dispatch", event_id=1)
    assert session.call("complete_dispatch", event_id=1, outcome="done") == {
        "isError": True, "error": "invalid_report", "message": 'outcome must be "succeeded" or "failed"',
    }
    assert session.call("complete_dispatch", event_id=1, outcome="failed")["isError"] is False
    assert session.call("complete_dispatch", event_id=1, outcome="succeeded")["error"] == "report_conflict"
    assert session.call("get_dispatch", event="1")["error"] == "invalid_arguments"
    assert session.call("ack_dispatch", event_id="one")["error"] == "invalid_arguments"
    world.supersede(task)
    assert session.call("get_dispatch") == {
        "isError": True, "error": "task_token_refused", "message": "the task token names no current task",
    }


def test_bad_tool_calls_are_protocol_errors(session: Session) -> None:
    assert session.request("tools/call", {"name": "list_tasks", "arguments": {}})["error"]["code"] == -32602
    assert session.request("tools/call", {"arguments": {}})["error"]["code"] == -32602
    assert session.request("tools/call", {"name": "get_dispatch", "arguments": [1]})["error"]["code"] == -32602
    assert session.request("tools/call", {"name": "get_dispatch"})["result"]["isError"] is False


class BrokenLedger:
    def get_dispatch(self, request: GetRequest) -> Dispatched:
        raise OSError("disk I/O error at /secret/path/connector.db")

    def ack_dispatch(self, request: AckRequest) -> DeliveryReceipt:
        raise RuntimeError("boom")

    def complete_dispatch(self, request: CompleteRequest) -> DeliveryReceipt:
        raise KeyError("x")


def test_a_ledger_failure_is_answered_without_its_detail(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.ERROR)
    session = Session(McpServer(BrokenLedger()))
    reply = session.request("tools/call", {"name": "get_dispatch", "arguments": {}})
    assert reply["result"]["isError"] is True
    text = reply["result"]["content"][0]["text"]
    assert json.loads(text) == {"error": "ledger_failure", "message": LEDGER_FAILURE}
    assert "/secret/path" not in text
    assert any("disk I/O error" in record.getMessage() for record in caplog.records), "the detail goes to the log"
    assert session.call("ack_dispatch", event_id=1)["error"] == "ledger_failure"


def test_serve_answers_each_line_and_stops_at_the_end_of_input(session: Session) -> None:
    lines = b"".join(
        json.dumps(message).encode() + b"\n"
        for message in (
            {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18"}},
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {"jsonrpc": "2.0", "id": 2, "method": "ping"},
        )
    )
    written = io.BytesIO()
    serve(io.BytesIO(lines), written, session.server)
    replies = written.getvalue().splitlines()
    assert [json.loads(reply)["id"] for reply in replies] == [1, 2]


def test_every_answer_is_one_ascii_line_whatever_the_content(world: DispatchWorld) -> None:
    world.request(5, content="<div>line\u2028separator\nnewline \u00e9 \U0001f600</div>")
    session = Session(McpServer(world.tools(world.task(5))))
    raw = session.server.handle_line(
        b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_dispatch","arguments":{}}}\n'
    )
    assert raw is not None
    assert raw.endswith(b"\n")
    assert raw.count(b"\n") == 1
    assert raw.isascii()
    body = json.loads(json.loads(raw)["result"]["content"][0]["text"])
    assert body["instruction"]["content"] == "<div>line\u2028separator\nnewline \u00e9 \U0001f600</div>"
