"""shell.worker.driver's spawn with the worker program faked (pytest-subprocess): the argv, directory,
environment and session config every worker is started with, and how its exit is read.
"""

from __future__ import annotations

import json
import os
import re
import stat
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from pytest_subprocess import FakeProcess

from core.dispatch_prompt import dispatch_prompt
from core.snapshots import StopReason
from core.task_token import TASK_TOKEN_ENV
from core.worker_stream import Exited, Signaled, WorkerAccount
from shell.clock import FakeClock
from shell.worker.command import WORKER_MARK_ENV, WorkerCommand
from shell.worker.driver import (
    CommandDriver,
    RunningWorker,
    SessionSetupError,
    SpawnFailed,
    release,
    spawn,
    supervise,
    sweep_sessions,
)
from tests.worker.support import ATTEMPT, PROMPT, TOKEN, Attempt

REPOSITORY = Path(__file__).resolve().parents[2]  # the clone whose code its MCP servers run
CONNECTOR_ENVIRONMENT = {
    "PATH": "/usr/local/bin:/usr/bin:/bin",
    "HOME": "/home/agent",
    "LANG": "C.UTF-8",
    "LC_ALL": "C.UTF-8",
    "LC_TIME": "en_GB.UTF-8",
    "TERM": "xterm",
    "USER": "agent",
    "LOGNAME": "agent",
    "SHELL": "/bin/bash",
    "TMPDIR": "/tmp",
    "XDG_CONFIG_HOME": "/home/agent/.config",
    "XDG_RUNTIME_DIR": "/run/user/1000",
    # Everything below is the connector's, or nobody's business: none of it reaches a worker.
    "BASECAMP_TOKEN": "connector-secret",
    "BASECAMP_CONNECT_TASK_TOKEN": "a-task-token-left-over",
    "ANTHROPIC_API_KEY": "sk-not-passed-unless-configured",
    "AWS_SECRET_ACCESS_KEY": "aws-secret",
    "PYTHONPATH": "/somewhere",
    "LD_PRELOAD": "/evil.so",
    "SSH_AUTH_SOCK": "/tmp/ssh-agent",
}
ALLOWLISTED = {
    name: value
    for name, value in CONNECTOR_ENVIRONMENT.items()
    if name in {"PATH", "HOME", "LANG", "LC_ALL", "TERM", "USER", "LOGNAME", "SHELL", "TMPDIR"}
}  # names, not prefixes: XDG_RUNTIME_DIR and LC_TIME were named by no one


BLOCKING_MCP_START = {"MCP_CONNECTION_NONBLOCKING": "0"}  # the default worker's own setting
MARK = {WORKER_MARK_ENV: ATTEMPT}  # the driver's: what the worker starts is found by it


def default_argv(attempt: Attempt) -> list[str]:
    """The default worker: stream-json in and out (the prompt on stdin), host settings ignored,
    acceptEdits, the pinned built-in tools, the connector's server alone and its tools allowed."""
    return [
        "claude",
        "-p",
        "--input-format",
        "stream-json",
        "--output-format",
        "stream-json",
        "--verbose",
        "--replay-user-messages",
        "--setting-sources",
        "",
        "--permission-mode",
        "acceptEdits",
        "--tools",
        "Read,Edit,Write,NotebookEdit",
        "--allowed-tools",
        "mcp__connector",
        "--strict-mcp-config",
        "--mcp-config",
        str(attempt.private_dir / ATTEMPT / "mcp.json"),
    ]


def args_of(running: RunningWorker) -> list[str]:
    return [str(argument) for argument in running.process.args]  # type: ignore[union-attr]


def kwargs_of(running: RunningWorker) -> dict[str, Any]:
    kwargs = running.process.kwargs  # type: ignore[attr-defined]  # a FakePopen's record
    assert kwargs is not None
    return dict(kwargs)


def finish(running: RunningWorker) -> Any:
    return supervise(running, deadline_at=None, stop_event=threading.Event(), clock=FakeClock())


# -- argv, directory, process group -------------------------------------------------------------


def test_claude_code_is_started_with_the_pinned_argv(fp: FakeProcess, attempt: Attempt) -> None:
    fp.register(default_argv(attempt))
    running = attempt.spawn(WorkerCommand.claude_code(), environ=CONNECTOR_ENVIRONMENT)
    assert args_of(running) == default_argv(attempt)
    assert fp.call_count(default_argv(attempt)) == 1


def test_the_worker_runs_in_the_routes_directory_in_a_group_of_its_own_with_stdin_closed(
    fp: FakeProcess, attempt: Attempt
) -> None:
    fp.register(["agent", PROMPT])
    running = attempt.spawn(WorkerCommand(argv=("agent", "{prompt}")), environ=CONNECTOR_ENVIRONMENT)
    kwargs = kwargs_of(running)
    assert Path(kwargs["cwd"]) == attempt.work_dir
    assert kwargs["start_new_session"] is True
    assert kwargs["stdin"] == subprocess.DEVNULL
    assert kwargs["close_fds"] is True
    assert isinstance(kwargs["stdout"], int)
    assert isinstance(kwargs["stderr"], int)
    assert "shell" not in kwargs


def test_a_configured_command_gets_its_placeholders_filled(fp: FakeProcess, attempt: Attempt) -> None:
    command = WorkerCommand(
        argv=("my-agent", "--config={mcp_config}", "--in", "{work_dir}", "--", "{prompt}")
    )
    config = attempt.private_dir / ATTEMPT / "mcp.json"
    expected = ["my-agent", f"--config={config}", "--in", str(attempt.work_dir), "--", PROMPT]
    fp.register(expected)
    running = attempt.spawn(command, environ={})
    assert args_of(running) == expected


def test_a_value_is_never_read_again_as_a_template(fp: FakeProcess, attempt: Attempt) -> None:
    prompt = "say {work_dir} and {mcp_config} literally"
    fp.register(["agent", prompt])
    running = attempt.spawn(WorkerCommand(argv=("agent", "{prompt}")), prompt=prompt, environ={})
    assert args_of(running) == ["agent", prompt]


def test_an_unknown_placeholder_is_refused_when_the_command_is_made() -> None:
    with pytest.raises(ValueError, match="promt"):
        WorkerCommand(argv=("agent", "{promt}"))
    # Braces that are not a placeholder name stay literal.
    assert WorkerCommand(argv=("agent", '{"a": 1}', "{prompt}")).argv[1] == '{"a": 1}'
    with pytest.raises(ValueError, match=re.escape("unclosed placeholder '{prompt'")):
        WorkerCommand(argv=("agent", "{prompt"))
    assert WorkerCommand(argv=("agent", "awk '{print $1}'", "}")).argv[1:] == ("awk '{print $1}'", "}"), (
        "a brace that closes is literal text")


def test_the_task_token_is_never_in_argv(fp: FakeProcess, attempt: Attempt) -> None:
    fp.register(default_argv(attempt))
    running = attempt.spawn(WorkerCommand.claude_code(), environ=CONNECTOR_ENVIRONMENT)
    assert not any(TOKEN in argument for argument in args_of(running))


def test_a_prompt_that_would_carry_the_token_into_argv_is_refused_and_leaves_no_session(
    fp: FakeProcess, attempt: Attempt
) -> None:
    with pytest.raises(ValueError, match="argv"):
        attempt.spawn(WorkerCommand(argv=("agent", "{prompt}")), prompt=f"token {TOKEN}", environ={})
    assert fp.call_count(["agent", fp.any()]) == 0
    assert not (attempt.private_dir / ATTEMPT).exists()


# -- environment --------------------------------------------------------------------------------


def test_the_worker_gets_only_the_allowlisted_environment(fp: FakeProcess, attempt: Attempt) -> None:
    fp.register(default_argv(attempt))
    running = attempt.spawn(WorkerCommand.claude_code(), environ=CONNECTOR_ENVIRONMENT)
    assert kwargs_of(running)["env"] == {**ALLOWLISTED, **BLOCKING_MCP_START, **MARK}


def test_a_secret_in_the_connectors_own_environment_does_not_reach_the_worker(
    fp: FakeProcess, attempt: Attempt, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BASECAMP_TOKEN", "connector-secret")
    monkeypatch.setenv(TASK_TOKEN_ENV, "a-task-token-left-over")
    monkeypatch.setenv("SOME_API_KEY", "hush")
    fp.register(default_argv(attempt))
    running = attempt.spawn(WorkerCommand.claude_code())  # environ defaults to os.environ
    env = kwargs_of(running)["env"]
    assert "BASECAMP_TOKEN" not in env
    assert TASK_TOKEN_ENV not in env
    assert "SOME_API_KEY" not in env
    assert not {"connector-secret", "a-task-token-left-over", "hush", TOKEN} & set(env.values())
    assert env["PATH"] == os.environ["PATH"]


def test_the_configuration_adds_exactly_what_it_names(fp: FakeProcess, attempt: Attempt) -> None:
    command = WorkerCommand.claude_code(
        env={"CLAUDE_CODE_MAX_OUTPUT_TOKENS": "8000"}, pass_env=["ANTHROPIC_API_KEY"]
    )
    fp.register(default_argv(attempt))
    running = attempt.spawn(command, environ=CONNECTOR_ENVIRONMENT)
    assert kwargs_of(running)["env"] == {
        **ALLOWLISTED,
        **BLOCKING_MCP_START, **MARK,
        "ANTHROPIC_API_KEY": "sk-not-passed-unless-configured",
        "CLAUDE_CODE_MAX_OUTPUT_TOKENS": "8000",
    }


def test_the_allowlist_names_variables_and_passes_no_prefix(fp: FakeProcess, attempt: Attempt) -> None:
    fp.register(default_argv(attempt))
    running = attempt.spawn(WorkerCommand.claude_code(), environ=CONNECTOR_ENVIRONMENT)
    env = kwargs_of(running)["env"]
    assert env == {**ALLOWLISTED, **BLOCKING_MCP_START, **MARK}
    assert not {"XDG_CONFIG_HOME", "XDG_RUNTIME_DIR", "LC_TIME"} & set(env)


def test_a_variable_setup_names_with_worker_env_is_passed_as_it_is(fp: FakeProcess, attempt: Attempt) -> None:
    fp.register(default_argv(attempt))
    running = attempt.spawn(WorkerCommand.configured(None, ("XDG_CONFIG_HOME",)), environ=CONNECTOR_ENVIRONMENT)
    assert kwargs_of(running)["env"] == {
        **ALLOWLISTED,
        **BLOCKING_MCP_START, **MARK,
        "XDG_CONFIG_HOME": "/home/agent/.config",
    }


def test_the_task_token_variable_cannot_be_configured_into_a_worker() -> None:
    with pytest.raises(ValueError, match=TASK_TOKEN_ENV):
        WorkerCommand.claude_code(env={TASK_TOKEN_ENV: "x"})
    with pytest.raises(ValueError, match=TASK_TOKEN_ENV):
        WorkerCommand.claude_code(pass_env=[TASK_TOKEN_ENV])


def test_a_malformed_variable_name_is_refused() -> None:
    with pytest.raises(ValueError, match="not an environment variable name"):
        WorkerCommand.claude_code(env={"A=B": "x"})


# -- the session config -------------------------------------------------------------------------


def test_the_mcp_config_names_the_connectors_server_with_the_token_in_its_env_only(
    fp: FakeProcess, attempt: Attempt
) -> None:
    fp.register(default_argv(attempt))
    running = attempt.spawn(WorkerCommand.claude_code(), environ=CONNECTOR_ENVIRONMENT)
    assert json.loads(running.mcp_config.read_text()) == {
        "mcpServers": {
            "connector": {
                "type": "stdio",
                "alwaysLoad": True,  # loaded before Claude Code's first model request
                "command": sys.executable,
                "args": ["-P", "-m", "shell.worker.mcp_entry", "--ledger", str(attempt.ledger_path.resolve())],
                "env": {"PYTHONPATH": str(REPOSITORY), TASK_TOKEN_ENV: TOKEN},
            }
        }
    }


def test_the_agents_person_id_is_handed_to_the_mcp_server_when_known(
    fp: FakeProcess, attempt: Attempt
) -> None:
    fp.register(default_argv(attempt))
    running = attempt.spawn(WorkerCommand.claude_code(), environ={}, agent_id=4242)
    server = json.loads(running.mcp_config.read_text())["mcpServers"]["connector"]
    assert server["args"] == [
        "-P", "-m", "shell.worker.mcp_entry", "--ledger", str(attempt.ledger_path.resolve()), "--agent-id", "4242"
    ]  # fmt: skip


def test_the_session_is_owner_only(fp: FakeProcess, attempt: Attempt) -> None:
    fp.register(default_argv(attempt))
    running = attempt.spawn(WorkerCommand.claude_code(), environ=CONNECTOR_ENVIRONMENT)
    assert stat.S_IMODE(attempt.private_dir.stat().st_mode) == 0o700
    assert running.session_dir == attempt.private_dir / ATTEMPT
    assert stat.S_IMODE(running.session_dir.stat().st_mode) == 0o700
    for path in (running.mcp_config, running.stdout, running.stderr):
        assert stat.S_IMODE(path.stat().st_mode) == 0o600, path
        assert path.stat().st_uid == os.geteuid()


def test_a_loose_private_directory_is_refused_not_tightened(attempt: Attempt) -> None:
    attempt.private_dir.mkdir(mode=0o755)
    attempt.private_dir.chmod(0o755)
    with pytest.raises(SessionSetupError, match="open to others"):
        attempt.spawn(WorkerCommand.claude_code(), environ=CONNECTOR_ENVIRONMENT)
    assert stat.S_IMODE(attempt.private_dir.stat().st_mode) == 0o755
    assert list(attempt.private_dir.iterdir()) == []


def test_a_private_directory_that_is_a_link_is_refused(attempt: Attempt) -> None:
    elsewhere = attempt.root / "elsewhere"
    elsewhere.mkdir(mode=0o700)
    attempt.private_dir.symlink_to(elsewhere)
    with pytest.raises(SessionSetupError):
        attempt.spawn(WorkerCommand.claude_code(), environ={})


@pytest.mark.parametrize("attempt_id", ["../escape", "att/1", "", "a" * 65, "att 1"])
def test_an_attempt_id_that_is_no_plain_name_is_refused(attempt: Attempt, attempt_id: str) -> None:
    with pytest.raises(SessionSetupError):
        attempt.spawn(WorkerCommand.claude_code(), attempt_id=attempt_id, environ={})


def test_a_second_session_for_the_same_attempt_is_refused(fp: FakeProcess, attempt: Attempt) -> None:
    fp.register(default_argv(attempt))
    attempt.spawn(WorkerCommand.claude_code(), environ={})
    with pytest.raises(SessionSetupError):
        attempt.spawn(WorkerCommand.claude_code(), environ={})


def test_the_mcp_config_is_removed_when_the_attempt_ends_and_the_session_on_release(
    fp: FakeProcess, attempt: Attempt
) -> None:
    fp.register(default_argv(attempt))
    running = attempt.spawn(WorkerCommand.claude_code(), environ={})
    finish(running)
    assert not running.mcp_config.exists()
    assert running.stdout.exists()
    release(running)
    assert not running.session_dir.exists()


def test_sweeping_removes_every_session_a_previous_connector_left(attempt: Attempt) -> None:
    attempt.private_dir.mkdir(mode=0o700)
    for name in ("att_1", "att_2"):
        (attempt.private_dir / name).mkdir(mode=0o700)
        (attempt.private_dir / name / "mcp.json").write_text("{}")
    (attempt.private_dir / "notes.txt").write_text("not a session")
    assert sweep_sessions(attempt.private_dir) == ["att_1", "att_2"]
    assert [path.name for path in attempt.private_dir.iterdir()] == ["notes.txt"]


# -- exit handling ------------------------------------------------------------------------------


def test_exit_zero_is_finished(fp: FakeProcess, attempt: Attempt) -> None:
    fp.register(default_argv(attempt), returncode=0)
    supervision = finish(attempt.spawn(WorkerCommand.claude_code(), environ={}))
    assert supervision.stop_reason == StopReason.finished
    assert supervision.end.ending == Exited(0)
    assert supervision.signals == ()


def test_exit_one_is_failed(fp: FakeProcess, attempt: Attempt) -> None:
    fp.register(default_argv(attempt), returncode=1)
    supervision = finish(attempt.spawn(WorkerCommand.claude_code(), environ={}))
    assert supervision.stop_reason == StopReason.failed
    assert supervision.end.ending == Exited(1)


def test_death_by_a_signal_nobody_asked_for_is_failed(fp: FakeProcess, attempt: Attempt) -> None:
    fp.register(default_argv(attempt), returncode=-9)
    supervision = finish(attempt.spawn(WorkerCommand.claude_code(), environ={}))
    assert supervision.stop_reason == StopReason.failed
    assert supervision.end.ending == Signaled(9)


def test_a_missing_program_is_a_spawn_failure_and_leaves_no_session(
    fp: FakeProcess, attempt: Attempt
) -> None:
    fp.allow_unregistered(True)  # the real exec, which finds nothing to run
    outcome = spawn(
        WorkerCommand.claude_code(program=str(attempt.root / "no-such-claude")),
        attempt_id=ATTEMPT,
        prompt=PROMPT,
        work_dir=attempt.work_dir,
        private_dir=attempt.private_dir,
        ledger_path=attempt.ledger_path,
        token=TOKEN,
        environ={},
    )
    assert isinstance(outcome, SpawnFailed)
    assert outcome.detail.startswith("FileNotFoundError")
    assert TOKEN not in outcome.detail
    assert not (attempt.private_dir / ATTEMPT).exists()


def test_a_program_that_may_not_run_is_a_spawn_failure(fp: FakeProcess, attempt: Attempt) -> None:
    fp.allow_unregistered(True)
    program = attempt.root / "not-executable"
    program.write_text("#!/bin/sh\nexit 0\n")
    program.chmod(0o600)
    outcome = spawn(
        WorkerCommand(argv=(str(program), "{prompt}")),
        attempt_id=ATTEMPT,
        prompt=PROMPT,
        work_dir=attempt.work_dir,
        private_dir=attempt.private_dir,
        ledger_path=attempt.ledger_path,
        token=TOKEN,
        environ={},
    )
    assert isinstance(outcome, SpawnFailed)
    assert outcome.detail.startswith("PermissionError")


def test_a_missing_work_directory_is_a_spawn_failure(fp: FakeProcess, attempt: Attempt) -> None:
    fp.allow_unregistered(True)
    outcome = spawn(
        WorkerCommand(argv=("/bin/true",)),
        attempt_id=ATTEMPT,
        prompt=PROMPT,
        work_dir=attempt.root / "gone",
        private_dir=attempt.private_dir,
        ledger_path=attempt.ledger_path,
        token=TOKEN,
        environ={},
    )
    assert isinstance(outcome, SpawnFailed)
    assert not (attempt.private_dir / ATTEMPT).exists()


# -- the driver the dispatcher calls ------------------------------------------------------------


class _Launch:
    task_id = 12
    attempt_id = ATTEMPT
    token = TOKEN
    event_ids = (345, 346)
    trigger = "mention"
    recording_url = "https://3.basecamp.com/1/buckets/2/messages/3"
    resume_session = ""
    conversation = "recording:3"


def test_the_driver_prompts_with_the_originating_events_facts(fp: FakeProcess, attempt: Attempt) -> None:
    prompt = dispatch_prompt(12, 345, _Launch.trigger, _Launch.recording_url)
    fp.register(["agent", prompt], returncode=0)
    driver = CommandDriver(
        WorkerCommand(argv=("agent", "{prompt}")),
        attempt.private_dir,
        attempt.ledger_path,
        clock=FakeClock(),
        environ={},
    )
    started = driver.spawn(_Launch(), attempt.work_dir)
    assert isinstance(started, RunningWorker)
    assert (
        driver.supervise(started, FakeClock().now(), threading.Event(), lambda: None)
        == WorkerAccount(StopReason.finished)
    )
    driver.release(started)
    assert not started.session_dir.exists()
