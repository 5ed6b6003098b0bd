"""What setup allows the default worker beyond its defaults: the rules of core.worker_allowances
with plain values, the command they widen, ``setup`` recording, showing and refusing them, the
exact ``--allowed-tools`` setup, status and doctor print, and an MCP file read within bounds."""

from __future__ import annotations

import json
import os
import re
import threading
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.worker_allowances import (
    MCP_FILE_MAX_BYTES,
    WorkerAllowances,
    allowed_tools,
    gives,
    merged,
    pattern_problem,
    read,
    server_name_problem,
)
from shell.basecamp.standin.server import StandIn
from shell.cli.main import main
from shell.errors import EXIT_CONFIG, EXIT_OK, UserError
from shell.ledger.connection import open_ledger
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


# -- what a pattern, a server name and an MCP file can give -------------------------------------
EVERY_COMMAND = [
    ":*", "*:*", " :*", "* status", "git* status", "sh *", "bash -c *", "zsh script", "dash", "/bin/sh -c x",
    "sudo *", "su", "env *", "doas make", "xargs *", "python -c x", "python3 -c *", "node -e *", "perl -e x",
    "ruby -e *", "python *", "python3.11 *", "node *", "node:*", "python:*", "git diff:* x",
]  # fmt: skip


@pytest.mark.parametrize("pattern", EVERY_COMMAND)
def test_a_pattern_that_allows_every_command_is_refused_in_one_line(pattern: str) -> None:
    problem = pattern_problem(pattern)
    assert problem is not None, pattern
    assert "\n" not in problem
    assert "every command" in problem or "':*' before its end" in problem


@pytest.mark.parametrize("pattern", ["npm test *", "make *", "pytest *", "cargo test *", "tox", "./gradlew *",
                                     "npm test:*", "python -m pytest tests", "scripts/check.sh"])
def test_a_pattern_that_runs_the_repositorys_code_is_accepted_and_named_every_command(pattern: str) -> None:
    assert pattern_problem(pattern) is None
    assert gives(pattern) == (f"Bash({pattern}) runs the repository's code, which the worker may edit: "
                              "this is every command")


def test_a_pattern_of_a_program_that_runs_nothing_of_the_repository_gives_its_commands_alone() -> None:
    for pattern in ("ls *", "wc -l *", "grep -rn *", "cat README.md", "ls:*"):
        assert (pattern_problem(pattern), gives(pattern)) == (None, None), pattern


def test_a_server_name_outside_the_safe_alphabet_is_refused() -> None:
    for name in ("x,Edit(//**)", "x,Bash", "a b", "a:b", "a(b)", "", "é", "x" * 65, "connector"):
        assert server_name_problem(name) is not None, name
    for name in ("search", "my-server_2", "A1"):
        assert server_name_problem(name) is None, name


_RULE = re.compile(r"mcp__[A-Za-z0-9_-]{1,64}|Bash\([^(),]+\)")


@given(st.lists(st.text(alphabet="ab *:(),-_ \tx/", max_size=12), max_size=3),
       st.lists(st.text(alphabet="ab,()-_ :*B", max_size=10), max_size=3))
def test_no_part_adds_a_rule_to_the_allowed_tools_beyond_itself(bash: list[str], servers: list[str]) -> None:
    try:
        value = allowed_tools(bash, servers)
    except ValueError:
        assert any(map(pattern_problem, bash)) or any(map(server_name_problem, servers))
        return
    rules = value.split(",")
    assert len(rules) == 1 + len(bash) + len(servers)
    assert all(_RULE.fullmatch(rule) for rule in rules), rules


def test_the_default_command_is_built_from_checked_parts_only() -> None:
    for bash, servers in ((("*:*",), {}), (("git status",), {"/a.json": ("x,Edit(//**)",)})):
        with pytest.raises(ValueError, match=r"every command|letters, digits"):
            WorkerCommand.claude_code(bash=bash, mcp_files=servers)


def _configure(standin: StandIn, token_file: Path, work_dir: Path, capsys: pytest.CaptureFixture[str],
               *more: str) -> tuple[int, str, str]:
    project = standin.world.projects[0].id
    return run(setup_args(standin, token_file, "--route", f"{project}={work_dir}", "--no-check", *more), capsys)


def test_setup_prints_the_exact_allowed_tools_and_names_a_pattern_that_is_every_command(
    standin: StandIn, state_home: Path, token_file: Path, work_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    extra = mcp_file(work_dir.parent / "search.json", {"mcpServers": {"search": {"command": "search-server"}}})
    code, out, _ = _configure(standin, token_file, work_dir, capsys, "--worker-allow-bash", "ls *",
                              "--worker-allow-bash", "npm test *", "--worker-mcp", str(extra))
    assert code == EXIT_OK
    spawned = WorkerCommand.of(load_config(config_path(standin))).allowed_tools  # the spawn's argv
    assert spawned == "mcp__connector,Bash(ls *),Bash(npm test *),mcp__search"
    assert f"  worker --allowed-tools {spawned} (what Claude Code is given, exactly)" in out
    assert "Bash(npm test *) runs the repository's code, which the worker may edit: this is every command" in out
    assert "Bash(ls *) runs" not in out
    code, _, err = _configure(standin, token_file, work_dir, capsys, "--worker-allow-bash", ":*")
    assert code == EXIT_CONFIG
    assert "allows every command" in err


def test_status_and_doctor_print_the_exact_allowed_tools(
    standin: StandIn, state_home: Path, token_file: Path, work_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    extra = mcp_file(work_dir.parent / "search.json", {"mcpServers": {"search": {"command": "search-server"}}})
    code, _, _ = _configure(standin, token_file, work_dir, capsys, "--worker-allow-bash", "make *",
                            "--worker-mcp", str(extra))
    assert code == EXIT_OK
    path = config_path(standin)
    spawned = WorkerCommand.of(load_config(path)).allowed_tools
    assert spawned == "mcp__connector,Bash(make *),mcp__search"
    with open_ledger(path.parent / "ledger.sqlite3"):
        pass
    assert main(["status", "--state-dir", str(path.parent)]) == EXIT_OK
    shown = capsys.readouterr().out
    assert f"--allowed-tools {spawned}" in shown
    assert "Bash(make *) runs the repository's code" in shown
    main(["doctor", "--state-dir", str(path.parent), "--json"])
    checks = {check["name"]: check for check in json.loads(capsys.readouterr().out)["checks"]}
    assert f"--allowed-tools {spawned}" in checks["worker allowances"]["detail"]


def test_doctor_prints_the_default_workers_allowed_tools(
    standin: StandIn, state_home: Path, token_file: Path, work_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _configure(standin, token_file, work_dir, capsys)[0] == EXIT_OK
    main(["doctor", "--state-dir", str(config_path(standin).parent), "--json"])
    checks = {check["name"]: check for check in json.loads(capsys.readouterr().out)["checks"]}
    assert checks["worker allowances"]["detail"].endswith("(--allowed-tools mcp__connector)")


def _refusal(path: Path) -> str:
    with pytest.raises(UserError) as raised:
        WorkerCommand.configured(None, (), WorkerAllowances((), (str(path),)))
    assert raised.value.exit_code == EXIT_CONFIG
    return str(raised.value)


@pytest.mark.parametrize("mode", [0o666, 0o620, 0o644])
def test_an_mcp_file_open_to_others_is_refused_with_the_chmod(tmp_path: Path, mode: int) -> None:
    extra = mcp_file(tmp_path / "extra.json", {"mcpServers": {"search": {"command": "x"}}}, mode)
    assert f"make it owner-only: chmod 600 {extra}" in _refusal(extra)


def test_an_mcp_file_that_is_no_regular_file_is_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo, 0o600)
    said: list[str] = []
    reader = threading.Thread(target=lambda: said.append(_refusal(fifo)), daemon=True)
    reader.start()
    reader.join(10)
    assert said, "refused at once, never blocked on the FIFO"
    assert "is not a regular file" in said[0]
    assert "is not a regular file" in _refusal(Path("/dev/zero"))
    (tmp_path / "link.json").symlink_to(mcp_file(tmp_path / "real.json", {"mcpServers": {"s": {}}}))
    assert "is a symlink" in _refusal(tmp_path / "link.json")


def test_an_mcp_file_too_large_or_too_deep_is_refused_in_one_line(tmp_path: Path) -> None:
    large = mcp_file(tmp_path / "large.json", json.dumps({"mcpServers": {"s": {"pad": "x" * (2 << 20)}}}))
    assert f"larger than {MCP_FILE_MAX_BYTES} bytes" in _refusal(large)
    deep = mcp_file(tmp_path / "deep.json", "[" * 100_000 + "]" * 100_000)
    assert "nested deeper than" in _refusal(deep)


@pytest.mark.parametrize("name", ["x,Edit(//**)", "x,Bash", "a b", "a:b"])
def test_an_mcp_file_naming_a_server_outside_the_safe_alphabet_is_refused(tmp_path: Path, name: str) -> None:
    extra = mcp_file(tmp_path / "extra.json", {"mcpServers": {name: {"command": "x"}}})
    assert "letters, digits, '-' or '_'" in _refusal(extra)
