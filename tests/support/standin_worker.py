"""A worker that stands in for Claude Code: it speaks MCP to the connector's dispatch tools and
acts in Basecamp (the stand-in) as the agent.

    python -m tests.support.standin_worker --mcp-config FILE

It starts the MCP server its config names (as Claude Code would), then: get_dispatch; unless
guard_acknowledged, a boost of its own and ack_dispatch; a reply comment; complete_dispatch;
and pulls again until nothing waits. Its Basecamp address and token come from
STANDIN_BASE_URL, STANDIN_ACCOUNT and STANDIN_TOKEN (the worker's own credentials: the
connector never hands it one). WORKER_BEHAVIOUR shapes it:
``answer`` (default), ``slow:<seconds>`` (waits before its first pull), ``fail`` (pulls, then
exits 1 without reporting), ``hang`` (pulls, then sleeps until killed), ``hang_after_ack``, ``report_failed``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from typing import Any

from core.destinations import Destination, MessageKind
from core.posting import Receipt
from shell.basecamp import BasecampClient


class McpClient:
    """The smallest MCP stdio client: newline-delimited JSON-RPC to a child process."""

    def __init__(self, command: list[str], env: dict[str, str]) -> None:
        self.process = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, text=True, bufsize=1
        )
        self._next = 0
        self.request(
            "initialize",
            {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "standin-worker", "version": "1"},
            },
        )
        self._send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def _send(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(message) + "\n")
        self.process.stdin.flush()

    def request(self, method: str, params: dict[str, Any]) -> Any:
        self._next += 1
        self._send({"jsonrpc": "2.0", "id": self._next, "method": method, "params": params})
        assert self.process.stdout is not None
        while True:
            line = self.process.stdout.readline()
            if not line:
                raise RuntimeError("the MCP server went away")
            answer = json.loads(line)
            if answer.get("id") == self._next:
                if "error" in answer:
                    raise RuntimeError(f"MCP error: {answer['error']}")
                return answer["result"]

    def call(self, tool: str, **arguments: Any) -> dict[str, Any]:
        result = self.request("tools/call", {"name": tool, "arguments": arguments})
        payload: dict[str, Any] = result.get("structuredContent") or json.loads(result["content"][0]["text"])
        if result.get("isError"):
            raise RuntimeError(f"{tool} refused: {payload}")
        return payload

    def close(self) -> None:
        if self.process.stdin:
            self.process.stdin.close()
        self.process.wait(timeout=10)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mcp-config", required=True)
    args = parser.parse_args()
    behaviour = os.environ.get("WORKER_BEHAVIOUR", "answer")
    with open(args.mcp_config) as config_file:
        (server,) = json.load(config_file)["mcpServers"].values()
    env = {**os.environ, **server.get("env", {})}
    basecamp = BasecampClient(
        os.environ["STANDIN_BASE_URL"],
        int(os.environ["STANDIN_ACCOUNT"]),
        os.environ["STANDIN_TOKEN"],
        "standin-worker (tests@example.com)",
    )
    if behaviour.startswith("slow:"):
        time.sleep(float(behaviour.split(":", 1)[1]))
    tools = McpClient([server["command"], *server.get("args", [])], env)
    try:
        while True:
            pulled = tools.call("get_dispatch")
            instruction = pulled.get("instruction")
            if not instruction:
                return 0
            event_id = instruction["event_id"]
            if behaviour == "fail":
                return 1
            if behaviour == "hang":
                time.sleep(3600)
            recording = instruction["recording"]
            if instruction.get("acknowledge") and not instruction.get("guard_acknowledged"):
                boost = basecamp.post(
                    Destination(MessageKind.boost, recording["bucket_id"], recording["recording_id"]), "on it"
                )
                if isinstance(boost, Receipt):
                    tools.call("ack_dispatch", event_id=event_id, ack_id=boost.id)
            if behaviour == "hang_after_ack":
                time.sleep(3600)
            reply_to = instruction["reply_to"]
            kind = MessageKind(reply_to["kind"])
            reply = basecamp.post(
                Destination(kind, recording["bucket_id"], reply_to["recording_id"]),
                f"<div>Done with event {event_id}.</div>"
                if kind is MessageKind.comment
                else f"Done with event {event_id}.",
            )
            outcome = "failed" if behaviour == "report_failed" else "succeeded"
            report: dict[str, Any] = {"event_id": event_id, "outcome": outcome}
            if isinstance(reply, Receipt):
                report["reply_id"] = reply.id
            tools.call("complete_dispatch", **report)
    finally:
        tools.close()


if __name__ == "__main__":
    sys.exit(main())
