"""The real Claude Code as the connector's worker, with the default worker command: the real
connector (``bin/connect run``), the stand-in, and a scripted Messages API
(``tests/support/scripted_model.py``) that ``ANTHROPIC_BASE_URL`` points Claude Code at.

Each Claude Code start costs about a second, so these are few: one whole mention, and one worker
that cannot log in. They fail, never skip, where Claude Code is not installed
(``tests/support/claude_code.py``).
"""

from __future__ import annotations

import json
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from core.dispatch_prompt import DISPATCH_TOOLS, tool_name
from core.task_token import PROBE_PREFIX
from core.worker_allowances import MCP_SERVER_NAME
from shell.basecamp.standin.server import StandIn
from shell.ledger.connection import open_ledger_read_only
from shell.worker.command import WorkerCommand, user_message
from shell.worker.driver import mcp_session_config
from tests.support.child import wait_until
from tests.support.claude_code import claude_code, pinned_version, worker_environment
from tests.support.configured import REPOSITORY, configure_connector, start_run
from tests.support.scripted_model import ScriptedModel, Step, worker_script

pytestmark = pytest.mark.slow
KEY = "sk-scripted-model"
MODEL_VARIABLES = ("--worker-env", "ANTHROPIC_BASE_URL", "--worker-env", "ANTHROPIC_API_KEY")


@pytest.fixture
def standin() -> Iterator[StandIn]:
    with StandIn(world="demo") as server:
        yield server


def _rows(state: Path, sql: str) -> list[tuple[object, ...]]:
    with open_ledger_read_only(state / "ledger.sqlite3") as ledger, ledger.read() as connection:
        return [tuple(row) for row in connection.execute(sql).fetchall()]


def _start(state: Path, tmp_path: Path, model: ScriptedModel) -> subprocess.Popen[str]:
    """``bin/connect run`` whose worker, the real Claude Code, asks ``model`` with a key."""
    environment = worker_environment(tmp_path / "home", ANTHROPIC_BASE_URL=model.base_url, ANTHROPIC_API_KEY=KEY)
    return start_run(state, environment)


def _stop(process: subprocess.Popen[str]) -> str:
    process.send_signal(signal.SIGTERM)
    output, errors = process.communicate(timeout=90)
    return output + errors[-6000:]


def test_a_mention_is_worked_by_the_real_claude_code_with_the_default_command(
    standin: StandIn, tmp_path: Path
) -> None:
    claude_code()
    state = configure_connector(standin, tmp_path, *MODEL_VARIABLES, default_worker=True)
    work = next(tmp_path.glob("work-*"))
    with ScriptedModel(script=worker_script(str(work / "done.txt"))) as model:
        process = _start(state, tmp_path, model)
        card = standin.world.projects[0].recording_ids[0]
        try:
            standin.mention(standin.world.people[0], card, "please write the file")
            wait_until(lambda: _rows(state, "SELECT state FROM events") == [("completed",)], timeout=60)
            wait_until(lambda: _rows(state, "SELECT state FROM attempts") == [("ended",)], timeout=30)
        finally:
            log = _stop(process)
        turns = model.worker_turns()
    print(log)
    assert (work / "done.txt").read_text() == "written by the worker\n", "acceptEdits: it changed its directory"
    first = {tool["name"] for tool in turns[0]["tools"]}
    assert {tool_name(tool) for tool in DISPATCH_TOOLS} <= first, "the connector's tools are in the first request"
    assert "Bash" not in first, "the pinned built-in tools only: it runs nothing"
    assert _rows(state, "SELECT outcome FROM task_events") == [("succeeded",)]
    ((stop, spawn_failed, not_started, result, is_error, turns_taken, denied),) = _rows(
        state,
        "SELECT stop_reason, spawn_failed, not_started, worker_result, result_is_error, result_turns,"
        " denied_tools FROM attempts",
    )
    assert (stop, spawn_failed, not_started, result, is_error, denied) == ("finished", 0, "", 1, 0, "")
    assert turns_taken == len(turns) >= 4, "get, ack, write, complete: the result's turns"
    agent = standin.world.agent.id
    (asking,) = [m["id"] for m in standin.messages("comment", card) if m["creator"]["id"] != agent]
    assert [b["content"] for b in standin.messages("boost", asking)] == ["On it"], "its own acknowledgement"
    replies = [m["content"] for m in standin.messages("comment", card) if m["creator"]["id"] == agent]
    assert len(replies) == 1, "its own reply, and no connector notice"
    assert "Done: wrote the file." in replies[0]
    assert _rows(state, "SELECT kind, state FROM outbox ORDER BY id") == [
        ("guard_ack", "canceled"), ("worker_ack", "sent"), ("worker_reply", "sent"),
    ]  # fmt: skip


def test_a_follow_up_joins_the_running_worker_and_a_later_task_resumes_the_conversation(
    standin: StandIn, tmp_path: Path
) -> None:
    claude_code()
    state = configure_connector(standin, tmp_path, *MODEL_VARIABLES, default_worker=True)
    first = [
        Step("get_dispatch"),
        Step("ack_dispatch", {"text": "On it"}),
        Step("complete_dispatch", {"outcome": "succeeded", "links": []}, delay=4),  # the follow-up joins
        Step("get_dispatch"),  # the follow-up's event, as its turn names it
        Step("complete_dispatch", {"outcome": "succeeded", "links": []}),
        Step(text="Done."),
    ]
    later = [Step("get_dispatch"), Step("complete_dispatch", {"outcome": "succeeded", "links": []}), Step(text="Done.")]
    with ScriptedModel(per_task=[first, later]) as model:
        process = _start(state, tmp_path, model)
        card = standin.world.projects[0].recording_ids[0]
        asker = standin.world.people[0]
        try:
            standin.mention(asker, card, "please look")
            wait_until(lambda: _rows(state, "SELECT count(*) FROM task_events WHERE pulled_at IS NOT NULL") == [(1,)])
            standin.mention(asker, card, "and this too")
            wait_until(lambda: _rows(state, "SELECT state FROM attempts") == [("ended",)], timeout=60)
            standin.mention(asker, card, "one more thing")
            wait_until(lambda: _rows(state, "SELECT count(*) FROM events WHERE state = 'completed'") == [(3,)], 60)
            wait_until(lambda: _rows(state, "SELECT state FROM attempts WHERE state <> 'ended'") == [], timeout=30)
        finally:
            log = _stop(process)
        turns = model.worker_turns()
        print(*(json.dumps(answer)[:200] for answer in model.answers), sep="\n")
    print(log)
    assert _rows(state, "SELECT task_id, outcome FROM task_events ORDER BY event_id") == [
        (1, "succeeded"), (1, "succeeded"), (2, "succeeded"),
    ], "the follow-up was the running worker's, as a turn of its own conversation"  # fmt: skip
    sessions = _rows(state, "SELECT session_id FROM attempts ORDER BY launched_at")
    assert len(sessions) == 2
    assert sessions[0] == sessions[1] != ("",), "the later task went on with the conversation's session"
    resumed = turns[-1]["messages"]
    assert "Task 1." in json.dumps(resumed), "the resumed worker remembers the first task"


def test_claude_codes_transcripts_live_under_the_state_directory_and_go_once_no_task_resumes_them(
    standin: StandIn, tmp_path: Path
) -> None:
    claude_code()
    state = configure_connector(standin, tmp_path, *MODEL_VARIABLES, default_worker=True)
    work = next(tmp_path.glob("work-*"))
    unreported = [Step("get_dispatch"), Step(text="Done.")]  # its instruction is left unknown
    claude = state / "sessions" / "claude"
    with ScriptedModel(per_task=[worker_script(str(work / "done.txt")), unreported]) as model:
        process = _start(state, tmp_path, model)
        card = standin.world.projects[0].recording_ids[0]
        try:
            standin.mention(standin.world.people[0], card, "please write the file")
            wait_until(lambda: _rows(state, "SELECT state FROM attempts") == [("ended",)], timeout=60)
            kept = sorted(claude.glob("*/projects/*/*.jsonl"))
            standin.mention(standin.world.people[0], card, "and once more")
            ended = [("ended",), ("ended",)]
            wait_until(lambda: _rows(state, "SELECT state FROM attempts") == ended, timeout=60)
        finally:
            log = _stop(process)
    print(log)
    home = tmp_path / "home"
    assert [path.name for path in home.iterdir() if path.name.startswith(".claude")] == [], "nothing in HOME"
    ((session,),) = _rows(state, "SELECT session_id FROM attempts WHERE seq = 1 ORDER BY launched_at LIMIT 1")
    assert [path.name for path in kept] == [f"{session}.jsonl"], "kept for the next task to resume"
    assert oct(claude.stat().st_mode & 0o777) == "0o700"
    assert _rows(state, "SELECT outcome FROM task_events ORDER BY event_id") == [("succeeded",), ("unknown",)]
    assert list(claude.iterdir()) == [], "no task resumes it now: swept with its session"


def test_an_allowed_bash_pattern_runs_and_any_other_command_is_refused(standin: StandIn, tmp_path: Path) -> None:
    claude_code()
    allow = ("--worker-allow-bash", "echo *")
    state = configure_connector(standin, tmp_path, *MODEL_VARIABLES, *allow, default_worker=True)
    work = next(tmp_path.glob("work-*"))
    script = [
        Step("get_dispatch"),
        Step("Bash", {"command": "echo allowed", "description": "say allowed"}),
        # Not `touch`: under acceptEdits Claude Code accepts its filesystem commands (touch, mkdir,
        # mv, cp) in the working directory once it has Bash at all (seen with 2.1.332).
        Step("Bash", {"command": "python3 -c \"open('forbidden.txt', 'w')\"", "description": "make a file"}),
        Step("complete_dispatch", {"outcome": "succeeded", "links": []}),
        Step(text="Done."),
    ]
    with ScriptedModel(script=script) as model:
        process = _start(state, tmp_path, model)
        try:
            card = standin.world.projects[0].recording_ids[0]
            standin.mention(standin.world.people[0], card, "please run things")
            wait_until(lambda: _rows(state, "SELECT state FROM attempts") == [("ended",)], timeout=60)
        finally:
            log = _stop(process)
        turns = model.worker_turns()
    print(log)
    results = [
        part for turn in turns for message in turn["messages"] if isinstance(message["content"], list)
        for part in message["content"] if part.get("type") == "tool_result"
    ]  # fmt: skip
    said = json.dumps(results)
    assert "allowed" in said, "the allowed command ran"
    assert not (work / "forbidden.txt").exists(), "any other command is refused, never asked"
    assert _rows(state, "SELECT denied_tools, refusals FROM attempts") == [("Bash", 1)]


def test_a_worker_that_cannot_log_in_is_a_start_failure_retried_once_then_blocked(
    standin: StandIn, tmp_path: Path
) -> None:
    claude_code()
    state = configure_connector(standin, tmp_path, *MODEL_VARIABLES, default_worker=True)
    with ScriptedModel(script=[]) as model:
        environment = worker_environment(tmp_path / "home", ANTHROPIC_BASE_URL=model.base_url)
        environment.pop("ANTHROPIC_API_KEY", None)
        process = start_run(state, environment)
        try:
            card = standin.world.projects[0].recording_ids[0]
            standin.mention(standin.world.people[0], card, "please write the file")
            wait_until(lambda: _rows(state, "SELECT state, reason FROM events") == [("blocked", "spawn_failed")], 60)
        finally:
            log = _stop(process)
        asked = model.worker_turns()
    print(log)
    assert asked == [], "no model was reached"
    attempts = _rows(state, "SELECT stop_reason, spawn_failed, not_started FROM attempts ORDER BY launched_at")
    assert len(attempts) == 2, "one automatic retry, then blocked"
    for stop, spawn_failed, not_started in attempts:
        assert (stop, spawn_failed) == ("failed", 1)
        assert "Not logged in" in str(not_started), "Claude Code's own reason"
    assert _rows(state, "SELECT outcome FROM task_events WHERE outcome = 'unknown'") == []
    status = subprocess.run(
        [str(REPOSITORY / "bin" / "connect"), "status", "--state-dir", str(state), "--json"],
        capture_output=True, text=True, check=True, env=environment,
    )  # fmt: skip
    dispatches = json.loads(status.stdout)["dispatches"]
    assert all("Not logged in" in dispatch["not_started"] for dispatch in dispatches), "status shows the reason"


def test_doctor_reads_claude_codes_version_and_login_and_deep_never_reaches_the_model(
    standin: StandIn, tmp_path: Path
) -> None:
    tmp_path.chmod(0o700)
    state = configure_connector(standin, tmp_path, *MODEL_VARIABLES, default_worker=True)
    with ScriptedModel(script=worker_script(str(tmp_path / "never.txt"))) as model:
        logged_out = worker_environment(tmp_path / "home", ANTHROPIC_BASE_URL=model.base_url)
        logged_out.pop("ANTHROPIC_API_KEY", None)
        status, checks = _doctor(state, logged_out)
        assert status != 0
        assert checks["worker version"]["status"] == "ok"
        assert checks["worker version"]["detail"] == f"Claude Code {pinned_version()}"
        assert checks["worker login"]["status"] == "failing", "doctor says it before run does"
        assert "--worker-env ANTHROPIC_API_KEY" in checks["worker login"]["advice"]
        logged_in = {**logged_out, "ANTHROPIC_API_KEY": KEY}
        status, checks = _doctor(state, logged_in, "--deep")
        assert checks["worker login"]["status"] == "ok"
        assert checks["worker handshake"]["status"] == "ok", checks["worker handshake"]
        assert model.requests == [], "--deep's probe started Claude Code and asked its model nothing"


def test_doctor_counts_a_login_kept_in_home_for_nothing_as_the_worker_does(standin: StandIn, tmp_path: Path) -> None:
    """A subscription login ``claude`` itself keeps (``~/.claude/.credentials.json``) is not read
    under the worker's own configuration directory; a token given by name is."""
    tmp_path.chmod(0o700)
    state = configure_connector(standin, tmp_path, default_worker=True)
    environment = worker_environment(tmp_path / "home")
    environment.pop("ANTHROPIC_API_KEY", None)
    credentials = tmp_path / "home" / ".claude" / ".credentials.json"
    credentials.parent.mkdir(mode=0o700)
    credentials.write_text(json.dumps({"claudeAiOauth": {
        "accessToken": "sk-ant-oat01-" + "a" * 20, "refreshToken": "sk-ant-ort01-" + "b" * 20,
        "expiresAt": 4_102_444_800_000, "scopes": ["user:inference", "user:profile"], "subscriptionType": "pro"}}))
    credentials.chmod(0o600)
    _, checks = _doctor(state, environment)
    assert checks["worker login"]["status"] == "failing", checks["worker login"]
    assert "CLAUDE_CODE_OAUTH_TOKEN" in checks["worker login"]["advice"]
    carried = subprocess.run(
        [str(REPOSITORY / "bin" / "connect"), "setup", "--state-dir", str(state), "--worker-env",
         "CLAUDE_CODE_OAUTH_TOKEN"], capture_output=True, text=True, timeout=60, check=False, env=environment,
    )  # fmt: skip
    assert carried.returncode == 0, carried.stdout + carried.stderr
    _, checks = _doctor(state, {**environment, "CLAUDE_CODE_OAUTH_TOKEN": "sk-ant-oat01-" + "c" * 20})
    assert checks["worker login"]["status"] == "ok", checks["worker login"]
    assert "oauth_token" in checks["worker login"]["detail"]


def _doctor(state: Path, environment: dict[str, str], *more: str) -> tuple[int, dict[str, dict[str, str]]]:
    done = subprocess.run(
        [str(REPOSITORY / "bin" / "connect"), "doctor", "--state-dir", str(state), "--json", *more],
        capture_output=True, text=True, timeout=120, check=False, env=environment,
    )  # fmt: skip
    assert "Traceback" not in done.stderr, done.stderr
    return done.returncode, {check["name"]: check for check in json.loads(done.stdout)["checks"]}


def test_a_slow_mcp_start_with_tool_search_on_still_lists_the_connectors_tools_at_the_first_request(
    tmp_path: Path,
) -> None:
    """The default command's server entry and environment: a 3 s MCP server start and tool search
    on, and the dispatch tools are in the first model request. (Claude Code 2.1.332 waits in
    stream-json mode even without ``alwaysLoad`` and ``MCP_CONNECTION_NONBLOCKING=0``; those are
    proven by the argv and config tests; this holds the behaviour for a later version.)"""
    program = claude_code()
    command = WorkerCommand.claude_code(program=str(program))
    token = PROBE_PREFIX + "0" * 32
    config = mcp_session_config(tmp_path / "ledger.sqlite3", token)
    entry = config["mcpServers"][MCP_SERVER_NAME]  # type: ignore[index]
    entry["args"] = ["-c", 'sleep 3; exec "$0" "$@"', entry["command"], *entry["args"]]
    entry["command"] = "/bin/sh"
    (tmp_path / "mcp.json").write_text(json.dumps(config))
    argv = command.render(prompt="", mcp_config=tmp_path / "mcp.json", work_dir=tmp_path)
    with ScriptedModel(script=[Step("get_dispatch"), Step(text="Done.")]) as model:
        environment = {
            **command.environment(worker_environment(tmp_path / "home")),
            "ANTHROPIC_BASE_URL": model.base_url, "ANTHROPIC_API_KEY": KEY,
            "ENABLE_TOOL_SEARCH": "true",
        }  # fmt: skip
        done = subprocess.run(
            argv, input=user_message("Task 1. Call get_dispatch with event_id 7."), env=environment,
            cwd=tmp_path, capture_output=True, timeout=120, check=False,
        )  # fmt: skip
        first = model.worker_turns()[0]
    assert done.returncode == 0, done.stdout[-2000:]
    listed = {tool["name"] for tool in first["tools"]}
    assert {tool_name(tool) for tool in DISPATCH_TOOLS} <= listed
