"""The bundled demo worker: it stands in for Claude Code, speaking MCP to the connector's dispatch tools,
which post its words in Basecamp (the stand-in) for it.

It pulls, acknowledges only when ``acknowledgement_called_for`` says (the value its prompt is rendered
from), completes with its reply and pulls again until nothing waits. Its part is chosen per event: from the
``--scenes`` file (``{"N": part}``, waited for, else ``answer``), or else ``$WORKER_BEHAVIOUR``. Parts:
``answer``; ``slow:<seconds>`` (waits before its first pull); ``fail`` (pulls, exits 1 unreported);
``give_up`` (acknowledges, reports ``failed`` without a reply); ``hang``; ``hang_after_ack``;
``report_failed`` (``failed`` with its reply); ``reply_unreported`` (replies with a tool of its own, exits 0
unreported). Only that last one posts by itself, with its own credentials (an owner-only token file or
``$STANDIN_TOKEN``), never the connector's, never a token as an argument.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import IO, Any, cast

from core.destinations import Destination, MessageKind
from core.dispatch_prompt import acknowledgement_called_for
from core.posting import PostOutcome, Refused
from shell.basecamp.client import BasecampClient

SCENE_WAIT_SECONDS = 15.0
RATE_LIMITED_TRIES = 5
USER_AGENT = "basecamp-connector demo worker (https://github.com/basecamp/basecamp-connector)"
_EVENT = re.compile(r"\bEvent (\d+):")


class McpClient:
    """The smallest MCP stdio client: newline-delimited JSON-RPC to a child process."""

    def __init__(self, command: list[str], env: dict[str, str]) -> None:
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env,
                                        text=True, bufsize=1)
        self._in, self._out = cast("IO[str]", self.process.stdin), cast("IO[str]", self.process.stdout)
        self._next = 0
        hello = {"protocolVersion": "2025-06-18", "capabilities": {}}
        self.request("initialize", {**hello, "clientInfo": {"name": "demo-worker", "version": "1"}})
        self._send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def _send(self, message: dict[str, Any]) -> None:
        self._in.write(json.dumps(message) + "\n")
        self._in.flush()

    def request(self, method: str, params: dict[str, Any]) -> Any:
        self._next += 1
        self._send({"jsonrpc": "2.0", "id": self._next, "method": method, "params": params})
        while line := self._out.readline():
            answer = json.loads(line)
            if answer.get("id") == self._next:
                if "error" in answer:
                    raise RuntimeError(f"MCP error: {answer['error']}")
                return answer["result"]
        raise RuntimeError("the MCP server went away")

    def call(self, tool: str, **arguments: Any) -> dict[str, Any]:
        result = self.request("tools/call", {"name": tool, "arguments": arguments})
        payload: dict[str, Any] = result.get("structuredContent") or json.loads(result["content"][0]["text"])
        if result.get("isError"):
            raise RuntimeError(f"{tool} refused: {payload}")
        return payload

    def close(self) -> None:
        self._in.close()
        self.process.wait(timeout=10)


def scene_part(prompt: str, scenes: Path, wait_seconds: float = SCENE_WAIT_SECONDS) -> str:
    """This worker's part from the scene file, by the event its prompt names."""
    found = _EVENT.search(prompt)
    if found is None:
        return "answer"
    deadline = time.monotonic() + wait_seconds
    while True:
        try:
            part = json.loads(scenes.read_text()).get(found.group(1))
        except (OSError, ValueError):
            part = None
        if isinstance(part, str):
            return part
        if time.monotonic() >= deadline:
            print(f"demo worker: no part for event {found.group(1)}; answering", file=sys.stderr)
            return "answer"
        time.sleep(0.05)


def basecamp_client(args: argparse.Namespace) -> BasecampClient:
    """The worker's own credentials: its token file, or the stand-in's from the environment."""
    if args.token_file:
        token = Path(args.token_file).read_text().strip()
        return BasecampClient(args.base_url, int(args.account), token, USER_AGENT)
    environ = os.environ
    account = int(environ["STANDIN_ACCOUNT"])
    return BasecampClient(environ["STANDIN_BASE_URL"], account, environ["STANDIN_TOKEN"], USER_AGENT)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m shell.demo.worker", description=__doc__)
    parser.add_argument("--mcp-config", required=True)
    for option in ("--prompt", "--scenes", "--base-url", "--account", "--token-file"):
        parser.add_argument(option, default="")
    args = parser.parse_args(argv)
    behaviour = os.environ.get("WORKER_BEHAVIOUR", "answer")
    part = scene_part(args.prompt, Path(args.scenes)) if args.scenes else behaviour
    (server,) = json.loads(Path(args.mcp_config).read_text())["mcpServers"].values()
    if part.startswith("slow:"):
        time.sleep(float(part.split(":", 1)[1]))
    tools = McpClient([server["command"], *server.get("args", [])], {**os.environ, **server.get("env", {})})
    try:
        return work(tools, args, part)
    finally:
        tools.close()


def post(basecamp: BasecampClient, destination: Destination, text: str) -> PostOutcome:
    """One message, posted as a careful worker would: a 429 created nothing, so it is made again
    after its Retry-After, a few times at most (the connector and its workers share one address,
    and Basecamp's limit is per address)."""
    outcome = basecamp.post(destination, text)
    for _ in range(RATE_LIMITED_TRIES):
        if not (isinstance(outcome, Refused) and outcome.status == 429):
            break
        time.sleep(outcome.retry_after_seconds or 1.0)
        outcome = basecamp.post(destination, text)
    return outcome


def post_own_reply(basecamp: BasecampClient, instruction: dict[str, Any], text: str) -> None:
    """A reply posted with a tool of the worker's own, never reported."""
    reply_to = instruction["reply_to"]
    kind = MessageKind(reply_to["kind"])
    where = Destination(kind, instruction["recording"]["bucket_id"], reply_to["recording_id"])
    post(basecamp, where, f"<div>{text}</div>" if kind is MessageKind.comment else text)


def work(tools: McpClient, args: argparse.Namespace, part: str) -> int:
    """Pull and handle, as ``part`` says, until nothing waits."""
    while True:
        instruction = tools.call("get_dispatch").get("instruction")
        if not instruction:
            return 0
        event_id = instruction["event_id"]
        if part == "fail":
            return 1
        if part == "hang":
            time.sleep(3600)
        if acknowledgement_called_for(instruction):
            tools.call("ack_dispatch", event_id=event_id, text="on it")
        if part == "hang_after_ack":
            time.sleep(3600)
        if part == "give_up":
            tools.call("complete_dispatch", event_id=event_id, outcome="failed")
            return 1
        reply = f"Done with event {event_id}."
        if part == "reply_unreported":
            post_own_reply(basecamp_client(args), instruction, reply)
            return 0
        outcome = "failed" if part == "report_failed" else "succeeded"
        tools.call("complete_dispatch", event_id=event_id, outcome=outcome, reply=reply)


if __name__ == "__main__":
    sys.exit(main())
