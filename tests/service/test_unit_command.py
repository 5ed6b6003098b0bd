"""`bin/connect unit` on a real configuration, as a person runs it: the unit it prints passes
``systemd-analyze verify`` with not one warning (system and user, the program checked to exist);
its restart policy is the README's exit-code table's, read from ``shell.errors``; a configuration
that does not exist, or a bad ``--user-name``, is one line and its exit code."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import replace
from datetime import timedelta
from pathlib import Path

import pytest

from core.unit import UnitPlan, unit_text
from shell.errors import EXIT_CONFIG, EXIT_USAGE, NO_RESTART
from tests.support.configured import REPOSITORY

ANALYZE = shutil.which("systemd-analyze")
needs_analyze = pytest.mark.skipif(ANALYZE is None, reason="systemd-analyze is not installed on this machine")


def _configured(tmp_path: Path, *more: str) -> Path:
    token = tmp_path / "agent.token"
    token.write_text("a-token\n")
    token.chmod(0o600)
    (tmp_path / "work").mkdir()
    state = tmp_path / "state"
    _connect("setup", "--state-dir", str(state), "--base-url", "http://127.0.0.1:9", "--account", "5551234",
             "--agent", "1049715901", "--token-file", str(token), "--route", f"2085958501={tmp_path / 'work'}",
             "--no-check", *more, check=True)  # fmt: skip
    return state


def _connect(*arguments: str, check: bool = False, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    ran = subprocess.run([str(REPOSITORY / "bin" / "connect"), *arguments], capture_output=True, text=True,
                         timeout=60, env=env, check=False)  # fmt: skip
    if check:
        assert ran.returncode == 0, ran.stderr
    return ran


def _verify(unit: str, tmp_path: Path, *, user: bool) -> subprocess.CompletedProcess[str]:
    assert ANALYZE is not None
    path = tmp_path / "basecamp-connector-5551234-1049715901.service"
    path.write_text(unit)
    # short: the user manager's own sockets (gpg-agent's, ...) live under it, and a socket's path
    # past 108 bytes (tmp_path under xdist is) makes verify warn of those units, not of ours
    with tempfile.TemporaryDirectory(prefix="xdg-", dir="/tmp") as runtime:
        environment = {**os.environ, "XDG_RUNTIME_DIR": runtime}  # the user manager's, as a login has it
        return subprocess.run([ANALYZE, "verify", *(["--user"] if user else []), str(path)],
                              capture_output=True, text=True, timeout=60, env=environment, check=False)


@needs_analyze
@pytest.mark.parametrize("scope", [["--user"], [], ["--system"], ["--system", "--user-name", "root"]])
def test_the_printed_unit_passes_systemd_analyze_verify_without_a_warning(tmp_path: Path, scope: list[str]) -> None:
    state = _configured(tmp_path, "--worker-env", "ANTHROPIC_API_KEY")
    printed = _connect("unit", "--state-dir", str(state), *scope, check=True)
    assert printed.stderr == ""
    verified = _verify(printed.stdout, tmp_path, user="--system" not in scope)
    assert (verified.returncode, verified.stderr) == (0, "")
    assert f"ExecStart={REPOSITORY / 'bin' / 'connect'} run --state-dir {state}\n" in printed.stdout
    assert "ANTHROPIC_API_KEY" in printed.stdout


@needs_analyze
def test_verify_sees_a_program_whose_path_needs_quoting_and_escaping(tmp_path: Path) -> None:
    odd = tmp_path / "a dir 100% $HOME"
    odd.mkdir()
    (odd / "connect").symlink_to(REPOSITORY / "bin" / "connect")
    plan = UnitPlan(5, 6, (str(odd / "connect"), "run"), str(tmp_path), str(tmp_path / "t"), (str(odd),),
                    "/tmp/x", None, (), False, None, timedelta(seconds=60), NO_RESTART)
    verified = _verify(unit_text(plan), tmp_path, user=False)
    assert (verified.returncode, verified.stderr) == (0, "")
    unquoted = _verify(unit_text(plan).replace('"', ""), tmp_path, user=False)
    assert unquoted.returncode != 0, "verify would not see a word split"
    missing = _verify(unit_text(replace(plan, command=(str(tmp_path / "gone"), "run"))), tmp_path, user=False)
    assert missing.returncode != 0, "verify checks that the program exists"


def test_the_restart_policy_is_the_readme_exit_code_tables(tmp_path: Path) -> None:
    readme = (REPOSITORY / "README.md").read_text()
    rows = re.findall(r"^\| (\d+) \|.*\| \*\*do not restart\*\* \|$", readme, flags=re.MULTILINE)
    assert tuple(int(code) for code in rows) == NO_RESTART
    state = _configured(tmp_path)
    printed = _connect("unit", "--state-dir", str(state), check=True)
    assert f"RestartPreventExitStatus={' '.join(rows)}\n" in printed.stdout


def test_a_unit_for_a_configuration_that_does_not_exist_is_one_line_and_exit_3(tmp_path: Path) -> None:
    ran = _connect("unit", "--state-dir", str(tmp_path / "nothing"))
    assert ran.returncode == EXIT_CONFIG
    assert ran.stdout == ""
    assert ran.stderr == f"error: no configuration at {tmp_path / 'nothing' / 'config.json'}: run bin/connect setup\n"


@pytest.mark.parametrize("arguments", [["--user-name", "root"], ["--system", "--user-name", "a b"],
                                       ["--system", "--user-name", "x\x1b"], ["--system", "--user"]])
def test_a_user_name_that_is_none_or_beside_a_user_unit_is_usage(tmp_path: Path, arguments: list[str]) -> None:
    state = _configured(tmp_path)
    ran = _connect("unit", "--state-dir", str(state), *arguments)
    assert ran.returncode == EXIT_USAGE
    assert ran.stdout == ""
    (line,) = ran.stderr.splitlines()
    assert line.startswith("error: ")
    assert "\x1b" not in line
