"""What setup allows the default worker beyond its defaults: the rules of core.worker_allowances
with plain values, the command they widen, and ``setup`` recording, showing and refusing them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.worker_allowances import WorkerAllowances, merged, pattern_problem, read
from shell.basecamp.standin.server import StandIn
from shell.cli.main import main
from shell.errors import EXIT_CONFIG, EXIT_OK, UserError
from shell.state.config import load_config
from shell.worker.command import WorkerCommand
from tests.state.test_setup_command import config_path, run, setup_args


def mcp_file(path: Path, content: object, mode: int = 0o600) -> Path:
    """An MCP config file as a person keeps one: owner-only."""
    path.write_text(content if isinstance(content, str) else json.dumps(content))
    path.chmod(mode)
    return path


def test_a_bash_pattern_is_a_plain_rule_and_never_every_command() -> None:
    assert pattern_problem("git status") is None
    assert pattern_problem("npm test *") is None
    for refused in ("", "*", "  * ", "ls) Bash(rm", "a,b", "x\ny", "a" * 201):
        assert pattern_problem(refused) is not None, refused


def test_the_lists_keep_first_occurrences_and_say_each_problem() -> None:
    allowances, problems = read({"bash": ["git status", "git status", "*"], "mcp_files": ["relative.json"]})
    assert allowances.bash == ("git status", "*")
    assert len(problems) == 2
    assert read(None) == (WorkerAllowances(), ())
    assert read({"other": []})[1] != ()
    recorded = {"bash": ["git status"], "mcp_files": ["/a.json"]}
    assert merged(recorded, bash=("ls",), remove_bash=("git status",), mcp=("/a.json",), remove_mcp=()) == {
        "bash": ["ls"],
        "mcp_files": ["/a.json"],
    }


def test_allowances_widen_the_default_command_by_name(tmp_path: Path) -> None:
    extra = mcp_file(tmp_path / "search.json", {"mcpServers": {"search": {"command": "search-server"}}})
    command = WorkerCommand.configured(None, (), WorkerAllowances(("git status",), (str(extra),)))
    argv = list(command.argv)
    assert argv[argv.index("--tools") + 1] == "Read,Edit,Write,NotebookEdit,Bash"
    assert argv[argv.index("--allowed-tools") + 1] == "mcp__connector,Bash(git status),mcp__search"
    assert argv[argv.index("--mcp-config") + 1 :] == ["{mcp_config}", str(extra)]
    default = list(WorkerCommand.configured(None).argv)
    assert "Bash" not in default[default.index("--tools") + 1]


@pytest.mark.parametrize(
    "content",
    [
        {"mcpServers": {"connector": {"command": "x"}}},  # the connector's own name
        {"mcpServers": {}},
        "not json",
    ],
)
def test_an_mcp_file_the_worker_cannot_use_is_refused_before_anything_starts(tmp_path: Path, content: object) -> None:
    extra = mcp_file(tmp_path / "extra.json", content)
    with pytest.raises(UserError) as raised:
        WorkerCommand.configured(None, (), WorkerAllowances((), (str(extra),)))
    assert raised.value.exit_code == EXIT_CONFIG


def test_allowances_beside_a_configured_command_are_refused() -> None:
    with pytest.raises(UserError, match="default worker only"):
        WorkerCommand.configured(["my-agent", "{prompt}"], (), WorkerAllowances(("ls",)))


def test_setup_records_them_by_name_and_shows_them(
    standin: StandIn, state_home: Path, token_file: Path, work_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    extra = mcp_file(work_dir.parent / "search.json", {"mcpServers": {"search": {"command": "search-server"}}})
    project = standin.world.projects[0].id
    given = setup_args(
        standin, token_file, "--route", f"{project}={work_dir}",
        "--worker-allow-bash", "git status", "--worker-mcp", str(extra),
    )  # fmt: skip
    code, out, _ = run(given, capsys)
    assert code == EXIT_OK
    assert "worker allowed beyond its defaults: Bash(git status); MCP servers of " + str(extra) in out
    allowed = load_config(config_path(standin)).worker_allow
    assert allowed == WorkerAllowances(("git status",), (str(extra),))
    code, _, _ = run(setup_args(standin, token_file, "--remove-worker-allow-bash", "git status"), capsys)
    assert code == EXIT_OK
    assert load_config(config_path(standin)).worker_allow.bash == ()
    assert main(setup_args(standin, token_file, "--worker-allow-bash", "*")) == EXIT_CONFIG
