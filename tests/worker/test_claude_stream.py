"""A worker that speaks Claude Code's stream-json, as a real child process (this interpreter
playing Claude Code's part): its prompt arrives on stdin, its init is checked as it runs, its
stdin is closed once its result is read, and a worker that outlives its result is ended."""

from __future__ import annotations

import json
import os
import sys
import threading
from datetime import timedelta
from pathlib import Path

import pytest

from core.dispatch_prompt import DISPATCH_TOOLS, tool_name
from core.snapshots import StopReason
from core.worker_stream import StopRequest
from shell.clock import SystemClock
from shell.worker.command import StreamWatch, Turns, WorkerCommand
from shell.worker.driver import Supervision, supervise
from tests.worker.support import PROMPT, Attempt

pytestmark = pytest.mark.slow

# Plays Claude Code: reads one user message, says its init (the mode in argv[1], the server's
# status in argv[2]), calls the connector, writes its result, then waits for stdin to end, unless
# argv[3] is "hang" (it then sleeps on after its result).
PLAYS_CLAUDE_CODE = """
import json, pathlib, sys, time
mode, status, after = sys.argv[1:4]  # argv[4]: the dispatch tools, as Claude Code lists them
message = json.loads(sys.stdin.readline())
pathlib.Path("prompt.txt").write_text(message["message"]["content"])
def say(obj):
    print(json.dumps(obj), flush=True)
tools = json.loads(sys.argv[4])
say({"type": "system", "subtype": "init", "tools": tools, "permissionMode": mode,
     "mcp_servers": [{"name": "connector", "status": status}]})
if status != "connected":
    time.sleep(60)
say({"type": "assistant", "message": {"content": [{"type": "tool_use", "name": tools[0], "input": {}}]}})
say({"type": "result", "is_error": False, "num_turns": 2, "total_cost_usd": 0.5, "duration_ms": 7,
     "permission_denials": [{"tool_name": "Bash"}], "result": "done"})
if after == "hang":
    time.sleep(60)
sys.stdin.read()
"""


def plays(mode: str, status: str, after: str) -> WorkerCommand:
    return WorkerCommand(
        argv=(sys.executable, "-c", PLAYS_CLAUDE_CODE, mode, status, after,
              json.dumps([tool_name(tool) for tool in DISPATCH_TOOLS]),
              "--input-format", "stream-json", "--permission-mode", "acceptEdits"),
    )  # fmt: skip


def run(attempt: Attempt, command: WorkerCommand, after_result_seconds: float = 30.0) -> Supervision:
    running = attempt.spawn(command)
    clock = SystemClock()
    return supervise(
        running, deadline_at=clock.now() + timedelta(seconds=60), stop_event=threading.Event(), clock=clock,
        grace_seconds=1.0, watch=StreamWatch(running.stdout), permission_mode=command.permission_mode,
        after_result_seconds=after_result_seconds,
    )  # fmt: skip


def test_the_prompt_is_a_user_message_on_stdin_and_stdin_closes_after_the_result(attempt: Attempt) -> None:
    supervision = run(attempt, plays("acceptEdits", "connected", "exit"))
    assert (attempt.work_dir / "prompt.txt").read_text() == PROMPT
    assert supervision.stop_reason == StopReason.finished
    assert supervision.signals == ()  # it exited once its stdin ended
    facts = supervision.facts
    assert facts is not None
    assert facts.connector_called
    assert facts.result is not None
    assert facts.result.denials == ("Bash",)
    assert facts.result.cost_usd == 0.5


def test_an_init_that_is_not_what_was_asked_ends_the_worker_at_once(attempt: Attempt) -> None:
    supervision = run(attempt, plays("acceptEdits", "failed", "exit"))
    assert supervision.end.stop_requested == StopRequest.not_started
    assert supervision.stop_reason == StopReason.failed
    assert supervision.signals[:1] == ("SIGTERM",)


def test_a_permission_mode_other_than_asked_ends_the_worker_at_once(attempt: Attempt) -> None:
    supervision = run(attempt, plays("default", "connected", "hang"))
    assert supervision.end.stop_requested == StopRequest.not_started


def test_a_worker_that_outlives_its_result_has_its_group_ended(attempt: Attempt) -> None:
    supervision = run(attempt, plays("acceptEdits", "connected", "hang"), after_result_seconds=0.5)
    assert supervision.end.stop_requested == StopRequest.after_result
    assert supervision.stop_reason == StopReason.finished
    assert supervision.signals[:1] == ("SIGTERM",)


def test_a_turn_is_never_given_after_the_input_closed(tmp_path: Path) -> None:
    reader, writer = os.pipe()
    with os.fdopen(writer, "wb") as stdin, os.fdopen(reader, "rb") as out:
        turns = Turns(stdin)
        assert turns.give("first")
        assert not turns.close_if_answered(0), "a turn given and not yet answered keeps the input open"
        assert turns.close_if_answered(1)
        assert not turns.give("too late"), "once closed, a follow-up waits for a task of its own"
        assert out.read().count(b'"type": "user"') == 1
