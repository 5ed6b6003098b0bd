"""Interop: the official MCP Python SDK's stdio client drives ``bin/connect mcp`` -- initialize,
list the tools, call them, and validate every structured result against its output schema
(the client does that itself, and raises when a result does not conform)."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest

from shell.cli.mcp import TOKEN_ENV
from tests.dispatch_tools.world import AGENT, DispatchWorld, Task

CONNECT = Path(__file__).resolve().parents[2] / "bin" / "connect"


def text_of(result: Any) -> dict[str, Any]:
    (content,) = result.content
    assert content.type == "text"
    body: dict[str, Any] = json.loads(content.text)
    return body


@asynccontextmanager
async def official_session(ledger_path: Path, token: str) -> AsyncIterator[tuple[Any, dict[str, str]]]:
    """``bin/connect mcp`` under the official SDK's stdio client: the session, and a dict that
    holds the server's stderr once the session has closed."""
    # Imported here: the SDK takes seconds to import, and only these tests pay for it.
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    parameters = StdioServerParameters(
        command=str(CONNECT),
        args=["mcp", "--ledger", str(ledger_path), "--agent-id", str(AGENT)],
        env={TOKEN_ENV: token, "PYTHONPATH": os.environ.get("PYTHONPATH", "")},
    )
    said: dict[str, str] = {}
    with tempfile.TemporaryFile("w+") as errors:
        async with stdio_client(parameters, errlog=errors) as (read, write), ClientSession(read, write) as session:
            yield session, said
        errors.seek(0)
        said["stderr"] = errors.read()


async def drive(ledger_path: Path, token: str) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    async with official_session(ledger_path, token) as (session, said):
        initialized = await session.initialize()
        seen["protocol"] = initialized.protocol_version
        seen["server"] = initialized.server_info.name
        listed = await session.list_tools()
        seen["tools"] = {tool.name: tool for tool in listed.tools}

        got = await session.call_tool("get_dispatch", {})
        seen["get"] = (got.is_error, got.structured_content, text_of(got))
        acked = await session.call_tool("ack_dispatch", {"event_id": 1, "ack_id": 501})
        seen["ack"] = (acked.is_error, acked.structured_content)
        again = await session.call_tool("ack_dispatch", {"event_id": 1, "ack_id": 502})
        seen["conflict"] = (again.is_error, text_of(again))
        done = await session.call_tool(
            "complete_dispatch",
            {"event_id": 1, "outcome": "succeeded", "reply_id": 503, "links": ["https://github.com/a/b/pull/1"]},
        )
        seen["complete"] = (done.is_error, done.structured_content)
        nothing = await session.call_tool("get_dispatch", {})
        seen["nothing"] = nothing.structured_content
        stranger = await session.call_tool("get_dispatch", {"event_id": 2})
        seen["stranger"] = (stranger.is_error, text_of(stranger))
    seen["stderr"] = said["stderr"]
    return seen


@pytest.mark.slow
def test_the_official_client_drives_the_dispatch_tools(world: DispatchWorld, ledger_path: Path) -> None:
    pytest.importorskip("mcp", reason="the official MCP SDK (pip install mcp) drives the interop test")
    world.request(1)
    task: Task = world.task(1)

    seen = anyio.run(drive, ledger_path, task.token)

    assert seen["server"] == "basecamp-connect"
    assert seen["protocol"] in ("2025-11-25", "2025-06-18")
    assert set(seen["tools"]) == {"get_dispatch", "ack_dispatch", "complete_dispatch", "reply_dispatch"}
    assert seen["tools"]["complete_dispatch"].input_schema["required"] == ["event_id", "outcome"]
    is_error, structured, text = seen["get"]
    assert is_error is False
    assert structured == text
    assert structured["instruction"]["event_id"] == 1
    assert structured["instruction"]["guard_acknowledged"] is False
    assert seen["ack"] == (False, {"event_id": 1, "delivery": "delivered", "ack_id": 501})
    assert seen["conflict"][0] is True
    assert seen["conflict"][1]["error"] == "report_conflict"
    assert seen["complete"] == (
        False,
        {
            "event_id": 1, "delivery": "completed", "ack_id": 501, "outcome": "succeeded", "reply_id": 503,
            "links": ["https://github.com/a/b/pull/1"],
        },
    )
    assert seen["nothing"] == {"instruction": None, "message": "Nothing on this task is waiting to be acknowledged."}
    assert seen["stranger"] == (True, {"error": "not_on_task", "message": "the event is not on this task"})
    assert world.record_state(1) == "completed"
    assert world.guard_intent(1) == ("canceled", "get_dispatch")
    assert task.token not in seen["stderr"]


async def speak(ledger_path: Path, token: str) -> dict[str, Any]:
    """The worker's words through the official client: each answer is validated by the SDK
    against the tool's output schema (no connector runs here, so each says it is waiting)."""
    seen: dict[str, Any] = {}
    async with official_session(ledger_path, token) as (session, _):
        await session.initialize()
        await session.call_tool("get_dispatch", {"event_id": 1})
        for name, arguments in (
            ("ack_dispatch", {"event_id": 1, "text": "on it"}),
            ("reply_dispatch", {"event_id": 1, "text": "Which **branch**?"}),
            ("complete_dispatch", {"event_id": 1, "outcome": "succeeded", "reply": "Done"}),
            ("ack_dispatch", {"event_id": 1, "text": "on it", "ack_id": 5}),
        ):
            answered = await session.call_tool(name, arguments)
            seen[name if "ack_id" not in arguments else "both"] = (answered.is_error, text_of(answered))
    return seen


@pytest.mark.slow
def test_the_official_client_hands_over_the_workers_words(world: DispatchWorld, ledger_path: Path) -> None:
    pytest.importorskip("mcp", reason="the official MCP SDK (pip install mcp) drives the interop test")
    world.request(1)
    task: Task = world.task(1)

    seen = anyio.run(speak, ledger_path, task.token)

    for name in ("ack_dispatch", "reply_dispatch", "complete_dispatch"):
        is_error, body = seen[name]
        assert is_error is False, body
        assert body["message"]["state"] == "waiting", body
    assert seen["complete_dispatch"][1]["delivery"] == "completed"
    assert seen["both"][0] is True
    assert seen["both"][1]["error"] == "invalid_arguments"
