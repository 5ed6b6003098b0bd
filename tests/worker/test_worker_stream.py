"""core.worker_stream with plain values: Claude Code's init checked, its result read, a stream
folded, and when a worker provably never began its work."""

from __future__ import annotations

import json
from collections.abc import Iterable
from functools import reduce
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from core.dispatch_prompt import DISPATCH_TOOLS, tool_name
from core.snapshots import StopReason
from core.worker_stream import (
    MAX_ERROR_TEXT,
    REDACTED,
    LatestAttempt,
    StreamFacts,
    WorkerAccount,
    WorkerResult,
    account,
    bounded,
    fold,
    init_problem,
    not_started,
    read_result,
    resumable,
)

TOOLS = ["Read", *(tool_name(tool) for tool in DISPATCH_TOOLS)]


def fold_all(lines: Iterable[str], facts: StreamFacts | None = None) -> StreamFacts:
    return reduce(fold, lines, facts or StreamFacts())


def init(**changes: Any) -> dict[str, Any]:
    message = {
        "type": "system",
        "subtype": "init",
        "tools": TOOLS,
        "mcp_servers": [{"name": "connector", "status": "connected"}],
        "permissionMode": "acceptEdits",
    }
    return {**message, **changes}


def line(message: dict[str, Any]) -> str:
    return json.dumps(message)


def result(**changes: Any) -> dict[str, Any]:
    message = {
        "type": "result",
        "subtype": "success",
        "is_error": False,
        "num_turns": 4,
        "total_cost_usd": 0.01,
        "duration_ms": 900,
        "permission_denials": [],
        "result": "done",
        "terminal_reason": "completed",
    }
    return {**message, **changes}


CALLED = {
    "type": "assistant",
    "message": {"content": [{"type": "tool_use", "name": "mcp__connector__get_dispatch", "input": {}}]},
}


def test_an_init_as_asked_has_no_problem() -> None:
    assert init_problem(init(), permission_mode="acceptEdits") is None


def test_the_connectors_server_must_be_connected() -> None:
    failed = init(mcp_servers=[{"name": "connector", "status": "failed"}])
    assert init_problem(failed, permission_mode="acceptEdits") == "the connector MCP server is failed, not connected"
    assert "not listed" in str(init_problem(init(mcp_servers=[]), permission_mode="acceptEdits"))


def test_every_dispatch_tool_must_be_listed() -> None:
    problem = init_problem(init(tools=TOOLS[:2]), permission_mode="acceptEdits")
    assert problem is not None
    assert "mcp__connector__ack_dispatch" in problem


def test_the_permission_mode_must_be_the_one_asked_for() -> None:
    assert init_problem(init(permissionMode="default"), permission_mode="acceptEdits") == (
        "the permission mode is 'default', not 'acceptEdits'"
    )


def test_a_result_is_read_with_its_denials_by_name_and_an_error_only_when_it_is_one() -> None:
    read = read_result(result(permission_denials=[{"tool_name": "Bash", "tool_input": {"command": "ls"}}]))
    assert read == WorkerResult(False, 4, 0.01, 900, ("Bash",), "", "completed")
    failed = read_result(result(is_error=True, result="Not logged in · Please run /login", total_cost_usd=0))
    assert failed.error == "Not logged in · Please run /login"


@given(st.text(max_size=2000) | st.lists(st.sampled_from(["word", "x", "é", "Not logged in"]), max_size=400).map(" ".join))
def test_an_error_text_is_bounded_whatever_it_says(text: str) -> None:
    assert len(bounded(text)) <= MAX_ERROR_TEXT


def test_a_long_error_text_is_cut_with_an_ellipsis() -> None:
    said = bounded("Not logged in " * 100)
    assert len(said) == MAX_ERROR_TEXT
    assert said.endswith("…")


def test_secrets_in_an_error_text_are_redacted() -> None:
    said = bounded("key sk-ant-api03-abcdefghijkl and Bearer abcdefgh.ijkl token " + "Q" * 43)
    assert "sk-ant" not in said
    assert "abcdefgh" not in said
    assert "Q" * 32 not in said
    assert said.count(REDACTED) == 3


def test_a_stream_is_folded_first_init_last_result_and_whether_the_connector_was_called() -> None:
    facts = fold_all(["not json", "[1]", line(init()), line(CALLED), line(init(permissionMode="x")), line(result())])
    assert facts.init == init()
    assert facts.connector_called
    assert facts.result is not None
    assert facts.result.turns == 4


def test_what_proves_a_worker_never_began_its_work() -> None:
    mode = "acceptEdits"
    assert not_started(StreamFacts(), permission_mode=mode) == "Claude Code ended before its init message"
    bad = fold_all([line(init(permissionMode="default"))])
    assert "permission mode" in str(not_started(bad, permission_mode=mode))
    no_login = fold_all([line(init()), line(result(is_error=True, result="Not logged in", total_cost_usd=0))])
    assert not_started(no_login, permission_mode=mode) == "the worker could not reach its model: Not logged in"
    idle = fold_all([line(init()), line(result())])
    assert not_started(idle, permission_mode=mode) == "the worker ended without pulling its dispatch"
    worked = fold_all([line(init()), line(CALLED), line(result(is_error=True, terminal_reason="api_error"))])
    assert not_started(worked, permission_mode=mode) is None, "it pulled: it may have acted"


def test_a_stop_the_dispatcher_asked_for_is_never_a_non_start() -> None:
    silent = StreamFacts()
    assert account(StopReason.deadline, silent, permission_mode="acceptEdits", cut_short=True) == WorkerAccount(
        StopReason.deadline
    )
    told = account(StopReason.finished, silent, permission_mode="acceptEdits", cut_short=False)
    assert told.stop_reason == StopReason.failed
    assert told.not_started
    assert account(StopReason.finished, None, permission_mode="", cut_short=False) == WorkerAccount(
        StopReason.finished
    )


def test_a_result_answers_the_messages_replayed_before_it() -> None:
    replay = {"type": "user", "isReplay": True, "message": {"role": "user", "content": "x"}}
    first = fold_all([line(replay), line(init()), line(replay), line(result())])
    assert (first.replays, first.answered, first.results) == (2, 2, 1), "a follow-up taken mid-turn"
    later = fold_all([line(replay)], first)
    assert (later.replays, later.answered) == (3, 2), "a message taken after the result: a turn of its own"
    assert fold_all([line(result())], later).answered == 3


def test_a_session_is_resumed_only_after_a_clean_finish() -> None:
    session = "61eea7ae-1832-47df-aab6-881403c2bbf3"
    assert resumable(LatestAttempt("finished", "", session, left_unknown=False)) == session
    assert resumable(None) == ""
    for latest in (
        LatestAttempt("lost", "", session, left_unknown=False),  # a crash: it may have acted
        LatestAttempt("deadline", "", session, left_unknown=False),
        LatestAttempt("finished", "", session, left_unknown=True),  # it left an instruction unreported
        LatestAttempt("failed", "the worker ended before its init", session, left_unknown=False),
        LatestAttempt("finished", "", "not-a-session --dangerously-skip-permissions", left_unknown=False),
    ):
        assert resumable(latest) == "", latest
