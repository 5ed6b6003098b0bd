"""``bin/connect setup`` against real files in a temp dir and the real stand-in on 127.0.0.1."""

from __future__ import annotations

import json
import os
import shutil
import stat
from pathlib import Path
from typing import Any

import pytest

from core.configuration import RouteFacts, route_problem
from shell.basecamp.standin.server import StandIn
from shell.cli.main import main
from shell.errors import EXIT_CONFIG, EXIT_OK, EXIT_UNAVAILABLE, UserError
from shell.state.config import load_config, read_token, save_config, state_paths
from tests.state.conftest import write_token


def setup_args(standin: StandIn, token_file: Path, *extra: str) -> list[str]:
    return [
        "setup", "--base-url", standin.base_url, "--account", str(standin.world.account_id),
        "--agent", str(standin.world.agent.id), "--token-file", str(token_file), *extra,
    ]


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def config_path(standin: StandIn) -> Path:
    return state_paths(standin.world.account_id, standin.world.agent.id).config


def mode_of(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def test_setup_writes_an_owner_only_file_in_an_owner_only_directory(
    standin: StandIn, state_home: Path, token_file: Path, work_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    project = standin.world.projects[0].id
    code, out, err = run(setup_args(standin, token_file, "--route", f"{project}={work_dir}"), capsys)
    assert (code, err) == (EXIT_OK, "")
    path = config_path(standin)
    assert path.parent == state_home / "basecamp-connector" / f"{standin.world.account_id}-{standin.world.agent.id}"
    assert mode_of(path) == 0o600
    assert mode_of(path.parent) == 0o700
    assert f"wrote {path}" in out
    assert "Claude Agent: the token answers as the agent" in out
    configuration = load_config(path)
    assert configuration.route(project) is not None
    assert "missing: no operator" in out
    assert "no route" not in out


def test_what_is_missing_is_one_line_each(
    standin: StandIn, state_home: Path, token_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(setup_args(standin, token_file), capsys)
    assert code == EXIT_OK
    missing = [line for line in out.splitlines() if line.startswith("missing: ")]
    assert len(missing) == 2 + (shutil.which("claude") is None), "no operator, no route; Claude Code if absent"
    assert any("no route: mentions in every project will get a holding reply" in line for line in missing)


def test_a_token_answering_as_someone_else_is_refused_and_nothing_written(
    standin: StandIn, state_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    other = standin.world.people[0]
    wrong = write_token(tmp_path / "other.token", other.token)
    code, out, err = run(setup_args(standin, wrong), capsys)
    assert code == EXIT_CONFIG
    assert out == ""
    assert err.count("\n") == 1
    assert f"acts as person {other.id} ({other.name}), not the configured agent {standin.world.agent.id}" in err
    assert not config_path(standin).exists()
    assert other.token not in err


def test_a_refused_token_is_a_clear_line(
    standin: StandIn, state_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bogus = write_token(tmp_path / "bogus.token", "not-a-real-token")
    code, _, err = run(setup_args(standin, bogus), capsys)
    assert code == EXIT_CONFIG
    assert "refused the token" in err
    assert "not-a-real-token" not in err


def test_an_unreachable_basecamp_writes_nothing_unless_no_check(
    standin: StandIn, state_home: Path, token_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = [
        "setup", "--base-url", "http://127.0.0.1:9", "--account", "5", "--agent", "6",
        "--token-file", str(token_file),
    ]
    code, _, err = run(argv, capsys)
    assert code == EXIT_UNAVAILABLE
    assert "--no-check" in err
    assert not state_paths(5, 6).config.exists()
    code, out, _ = run([*argv, "--no-check"], capsys)
    assert code == EXIT_OK
    assert "token not checked" in out
    assert state_paths(5, 6).config.exists()


def test_a_world_readable_token_file_is_refused(
    standin: StandIn, state_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    loose = write_token(tmp_path / "loose.token", standin.world.token, mode=0o644)
    code, _, err = run(setup_args(standin, loose), capsys)
    assert code == EXIT_CONFIG
    assert f"token file {loose} is open to others (mode 0644)" in err
    assert standin.world.token not in err
    assert not config_path(standin).exists()
    with pytest.raises(UserError, match="open to others"):
        read_token(loose)


def test_a_world_readable_config_is_refused(
    standin: StandIn, state_home: Path, token_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(setup_args(standin, token_file), capsys)[0] == EXIT_OK
    path = config_path(standin)
    os.chmod(path, 0o644)
    for argv in (setup_args(standin, token_file, "--concurrency", "3"), ["setup", "--show"]):
        code, _, err = run(argv, capsys)
        assert code == EXIT_CONFIG
        assert f"configuration file {path} is open to others (mode 0644); make it owner-only" in err
    assert mode_of(path) == 0o644  # refused, not silently tightened
    # and nothing rewrote it:
    assert '"concurrency": 2' in path.read_text()


def test_a_loose_state_directory_is_refused(
    standin: StandIn, state_home: Path, token_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(setup_args(standin, token_file), capsys)[0] == EXIT_OK
    os.chmod(config_path(standin).parent, 0o755)
    code, _, err = run(["setup", "--show"], capsys)
    assert code == EXIT_CONFIG
    assert "state directory" in err
    assert "open to others (mode 0755)" in err


def test_a_symlinked_config_is_refused(
    standin: StandIn, state_home: Path, token_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(setup_args(standin, token_file), capsys)[0] == EXIT_OK
    path = config_path(standin)
    real = tmp_path / "elsewhere.json"
    real.write_bytes(path.read_bytes())
    os.chmod(real, 0o600)
    path.unlink()
    path.symlink_to(real)
    code, _, err = run(setup_args(standin, token_file, "--concurrency", "3"), capsys)
    assert code == EXIT_CONFIG
    assert "is a symlink" in err
    assert path.is_symlink()
    with pytest.raises(UserError, match="symlink"):
        save_config(path, load_config(real))


def test_a_repeated_setup_keeps_what_it_is_not_told_to_change(
    standin: StandIn, state_home: Path, token_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first, second = standin.world.projects[0].id, standin.world.projects[1].id
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    operator = str(standin.world.people[0].id)
    assert run(setup_args(
        standin, token_file, "--operator", operator, "--trust", "allowlist", "--allow",
        str(standin.world.people[1].id), "--route", f"{first}={tmp_path / 'a'}", "--route",
        f"{second}={tmp_path / 'b'}", "--class", f"{first}=backend", "--watch-completions", str(first),
        "--worker-command", "my-worker --prompt {prompt}", "--deadline", "2h", "--guard-delay", "2s",
        "--still-running", "5s", "--reconcile-after", "3s", "--unsafe-test-timings",
    ), capsys)[0] == EXIT_OK
    before = json.loads(config_path(standin).read_text())
    # Only the account and agent, to find the directory: nothing else changes.
    assert run(["setup", "--account", str(standin.world.account_id), "--agent",
                str(standin.world.agent.id), "--concurrency", "4", "--remove-route", str(second)], capsys)[0] == 0
    after = json.loads(config_path(standin).read_text())
    assert after["concurrency"] == 4
    assert list(after["routes"]) == [str(first)]
    assert after["routes"][str(first)] == before["routes"][str(first)]
    del before["routes"][str(second)]
    before["concurrency"] = 4
    assert after == before
    assert after["timings"] == {"guard_delay": "2s", "still_running": "5s", "reconcile_after": "3s"}
    assert after["worker_command"] == ["my-worker", "--prompt", "{prompt}"]


def test_each_validation_error_is_one_line_and_nothing_is_written(
    standin: StandIn, state_home: Path, token_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = setup_args(
        standin, token_file, "--route", f"1={tmp_path / 'absent'}", "--route", "nonsense",
        "--deadline", "soon", "--concurrency", "0", "--operator", "-3", "--class", "77=x",
    )
    code, out, err = run(argv, capsys)
    assert code == EXIT_CONFIG
    assert out == ""
    lines = err.splitlines()
    assert all(line.startswith("error: setup: ") for line in lines), lines
    for fragment in ("--route 'nonsense'", "--class 77=x", "trust.operator_id", "concurrency", "task_deadline",
                     "routes.1.directory"):
        assert sum(fragment in line for line in lines) == 1, (fragment, lines)
    assert len(lines) == 6
    assert not config_path(standin).exists()


def test_json_output_shape(
    standin: StandIn, state_home: Path, token_file: Path, work_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    project = standin.world.projects[0].id
    code, out, _ = run(setup_args(standin, token_file, "--route", f"{project}={work_dir}", "--json"), capsys)
    assert code == EXIT_OK
    summary: dict[str, Any] = json.loads(out)
    assert set(summary) == {"written", "state_dir", "config_path", "ledger_path", "checked", "agent", "config",
                            "missing", "connector_running"}
    assert summary["written"] is True
    assert summary["checked"] is True
    assert summary["agent"] == {"id": standin.world.agent.id, "name": standin.world.agent.name}
    assert summary["ledger_path"].endswith("/ledger.sqlite3")
    assert summary["config"] == json.loads(Path(summary["config_path"]).read_text())
    assert set(summary["config"]) == {"version", "account_id", "base_url", "agent_id", "token_file", "trust",
                                      "routes", "worker_command", "concurrency", "task_deadline", "timings",
                                      "unsafe_test_timings", "worker_env", "worker_allow"}
    assert summary["config"]["routes"] == {
        str(project): {"directory": str(work_dir), "class": "", "watch_completions": False}
    }
    assert summary["missing"] == [line for line in summary["missing"] if "\n" not in line]
    code, out, _ = run(["setup", "--show", "--json"], capsys)
    shown = json.loads(out)
    assert (shown["written"], shown["checked"], shown["config"]) == (False, False, summary["config"])


def test_show_prints_the_config_and_what_is_missing(
    standin: StandIn, state_home: Path, token_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    route = tmp_path / "work"
    route.mkdir()
    project = standin.world.projects[0].id
    assert run(setup_args(standin, token_file, "--route", f"{project}={route}"), capsys)[0] == EXIT_OK
    route.rmdir()
    code, out, _ = run(["setup", "--show", "--account", str(standin.world.account_id), "--agent",
                        str(standin.world.agent.id)], capsys)
    assert code == EXIT_OK
    assert out.startswith(f"configuration at {config_path(standin)}")
    assert f"route {project} -> {route}" in out
    gone = RouteFacts(project, str(route), exists=False, is_directory=False, writable=False)
    assert f"missing: {route_problem(gone)}" in out  # core.configuration's words


@pytest.mark.usefixtures("state_home")
def test_relative_paths_are_written_absolute(
    standin: StandIn, token_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "repo").mkdir()
    project = standin.world.projects[0].id
    code, _, err = run(setup_args(standin, Path(token_file.name), "--route", f"{project}=repo"), capsys)
    assert (code, err) == (EXIT_OK, "")
    configuration = load_config(config_path(standin))
    assert configuration.token_file == str(token_file)
    assert configuration.routes[0].directory == str(tmp_path / "repo")


def test_the_token_is_never_in_any_output_or_the_config_file(
    standin: StandIn, state_home: Path, token_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    token = standin.world.token
    outputs = []
    for argv in (
        setup_args(standin, token_file),
        setup_args(standin, token_file, "--json"),
        ["setup", "--show"],
        ["setup", "--show", "--json"],
        setup_args(standin, token_file, "--deadline", "never"),
        setup_args(standin, token_file, "--agent", str(standin.world.people[0].id)),
    ):
        outputs.extend(run(argv, capsys)[1:])
    assert all(token not in text for text in outputs)
    assert token not in config_path(standin).read_text()
    for path in config_path(standin).parent.iterdir():
        assert token.encode() not in path.read_bytes()


def test_a_different_agent_in_an_existing_state_directory_is_refused(
    standin: StandIn, state_home: Path, token_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = tmp_path / "mine"
    assert run(setup_args(standin, token_file, "--state-dir", str(state)), capsys)[0] == EXIT_OK
    code, _, err = run(setup_args(standin, token_file, "--state-dir", str(state), "--agent", "77", "--no-check"),
                       capsys)
    assert code == EXIT_CONFIG
    assert "needs a state directory of its own" in err


def test_setup_says_when_the_worker_program_is_not_there(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    token = tmp_path / "token"
    token.write_text("t\n")
    token.chmod(0o600)
    assert main([
        "setup", "--state-dir", str(tmp_path / "state"), "--base-url", "https://3.basecampapi.com",
        "--account", "999", "--agent", "42", "--token-file", str(token), "--operator", "7", "--no-check",
        "--worker-command", "no-such-worker-program {prompt}",
    ]) == 0
    assert "missing: worker: the program 'no-such-worker-program' is not found on PATH" in capsys.readouterr().out


def test_setup_beside_a_running_connector_says_the_routes_are_served_without_a_restart(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from shell.state.lock import lock_path

    state = tmp_path / "state"
    state.mkdir(mode=0o700)
    metadata = {"pid": os.getpid(), "started_at": "2026-01-01T00:00:00.000000000Z", "account_id": 999, "agent_id": 42}
    Path(f"{lock_path(state, 999, 42)}.json").write_text(json.dumps(metadata))  # a connector since January
    token = tmp_path / "token"
    token.write_text("t\n")
    token.chmod(0o600)
    arguments = [
        "setup", "--state-dir", str(state), "--base-url", "https://3.basecampapi.com", "--account", "999",
        "--agent", "42", "--token-file", str(token), "--operator", "7", "--no-check", "--worker-command", "true",
    ]
    assert main(arguments) == 0
    said = capsys.readouterr().out
    assert "note: a connector is running (lock file, diagnostic): it serves these routes within 2 s" in said
    assert "restart it" not in said
    assert main([*arguments, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["connector_running"] is True


def test_setup_records_a_worker_env_name_never_its_value(
    standin: StandIn, state_home: Path, token_file: Path, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-secret-value")
    code, out, _ = run(setup_args(standin, token_file, "--worker-env", "ANTHROPIC_API_KEY"), capsys)
    assert code == EXIT_OK
    assert "worker environment adds ANTHROPIC_API_KEY (by name)" in out
    text = config_path(standin).read_text()
    assert json.loads(text)["worker_env"] == ["ANTHROPIC_API_KEY"]
    assert "sk-secret-value" not in text + out


def test_setup_refuses_timings_below_the_floors_unless_told_they_are_unsafe(
    standin: StandIn, state_home: Path, token_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run(setup_args(standin, token_file, "--reconcile-after", "1s"), capsys)
    assert code == EXIT_CONFIG
    assert "timings.reconcile_after: at least 1m" in err
    assert not config_path(standin).exists()
    code, out, _ = run(setup_args(standin, token_file, "--reconcile-after", "1s", "--unsafe-test-timings"), capsys)
    assert code == EXIT_OK
    assert "UNSAFE TEST TIMINGS" in out


def test_setup_refuses_the_connectors_own_variables_and_the_loaders_one_line_each_and_changes_nothing(
    standin: StandIn, state_home: Path, token_file: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    assert run(setup_args(standin, token_file, "--worker-env", "ANTHROPIC_API_KEY"), capsys)[0] == EXIT_OK
    before = config_path(standin).read_bytes()
    refused = ("BASECAMP_CLIENT_SECRET", "BASECAMP_CONNECT_TASK_TOKEN", "BASECAMP_CONNECTOR_RUNTIME_DIR",
               "LD_PRELOAD", "LD_LIBRARY_PATH", "LD_AUDIT")
    argv = setup_args(standin, token_file, *(part for name in refused for part in ("--worker-env", name)))
    code, out, err = run(argv, capsys)
    assert (code, out) == (EXIT_CONFIG, "")
    lines = err.splitlines()
    for name in refused:
        assert sum(f"worker_env: {name} " in line for line in lines) == 1, (name, lines)
    assert sum("is the connector's own and is never handed to a worker" in line for line in lines) == 3
    assert sum("steers the dynamic loader" in line for line in lines) == 3
    assert len(lines) == len(refused)
    assert config_path(standin).read_bytes() == before
