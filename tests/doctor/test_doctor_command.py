"""``bin/connect doctor`` on a real state directory written by ``bin/connect setup``, against the
stand-in over 127.0.0.1: healthy, then each way a check fails, exit 1; and beside a connector
that runs (a real process), exit 0 naming it."""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import sqlite3
import subprocess
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from core.configuration import RouteFacts, route_problem
from core.oauth import Credentials, to_text
from shell.basecamp.standin.server import StandIn
from shell.cli.doctor import examine
from shell.cli.main import main as connect
from shell.clock import SystemClock
from shell.ledger.connection import SCHEMA_VERSION, open_ledger, open_ledger_read_only
from shell.state.config import load_config, save_config
from tests.support.configured import configure_connector, start_run

REPOSITORY = Path(__file__).resolve().parents[2]
CONNECT = str(REPOSITORY / "bin" / "connect")


@pytest.fixture(scope="module")
def standin() -> Iterator[StandIn]:
    with StandIn(world="demo") as running:
        yield running


@pytest.fixture
def state(standin: StandIn, tmp_path: Path) -> Path:
    tmp_path.chmod(0o700)
    return configure_connector(standin, tmp_path)


def doctor(state: Path, capsys: pytest.CaptureFixture[str], *more: str) -> tuple[int, dict[str, Any]]:
    capsys.readouterr()
    code = connect(["doctor", "--state-dir", str(state), "--json", *more])
    return code, json.loads(capsys.readouterr().out)


def by_name(found: dict[str, Any]) -> dict[str, dict[str, str]]:
    return {check["name"]: check for check in found["checks"]}


def failing(found: dict[str, Any]) -> dict[str, str]:
    return {check["name"]: check["detail"] for check in found["checks"] if check["status"] == "failing"}


def test_a_state_directory_fresh_from_setup_passes_with_one_warning_for_its_bare_token(
    state: Path, standin: StandIn, capsys: pytest.CaptureFixture[str]
) -> None:
    code, found = doctor(state, capsys)
    assert (code, found["ok"]) == (0, True)
    checks = by_name(found)
    project = standin.world.projects[0].id
    assert list(checks) == [
        "state directory", "configuration", "token", "basecamp", "inbox", f"route {project}", "worker", "ledger",
        "disk", "lock", "pair",
    ]  # fmt: skip
    assert {name for name, check in checks.items() if check["status"] != "ok"} == {"token"}
    assert checks["token"]["detail"].startswith(f"acts as the agent {standin.world.agent.id} (Claude Agent)")
    assert "answered (HTTP 200)" in checks["basecamp"]["detail"]
    assert checks["ledger"]["detail"].endswith("is not created yet: bin/connect run creates it")


def test_the_text_is_one_line_a_check_and_a_last_line(state: Path, capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    assert connect(["doctor", "--state-dir", str(state)]) == 0
    shown = capsys.readouterr().out.splitlines()
    assert shown[0].split() == ["ok", "state", "directory", str(state) + ":", "owner-only", "and", "writable"]
    assert shown[-1] == "doctor: nothing failing (11 checks, 1 warning)"


def test_a_ledger_the_connector_made_is_current_and_checked(state: Path, capsys: pytest.CaptureFixture[str]) -> None:
    open_ledger(state / "ledger.sqlite3").close()
    _, found = doctor(state, capsys, "--deep-seconds", "5")
    assert by_name(found)["ledger"]["detail"].endswith(f"schema {SCHEMA_VERSION} (current), quick_check ok")


def test_a_ledger_a_migration_behind_is_a_warning_and_doctor_never_migrates_it(
    state: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ledger = state / "ledger.sqlite3"
    open_ledger(ledger).close()
    connection = sqlite3.connect(ledger, isolation_level=None)
    connection.execute("DELETE FROM schema_migrations WHERE version = ?", (SCHEMA_VERSION,))
    connection.close()
    code, found = doctor(state, capsys)
    assert (code, by_name(found)["ledger"]["status"]) == (0, "warning")
    assert "start the connector once" in by_name(found)["ledger"]["advice"]
    connection = sqlite3.connect(f"file:{ledger}?mode=ro", uri=True)
    assert connection.execute("SELECT max(version) FROM schema_migrations").fetchone() == (SCHEMA_VERSION - 1,)
    connection.close()


def test_a_damaged_ledger_fails(state: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ledger = state / "ledger.sqlite3"
    ledger.write_bytes(b"not a database at all, but long enough to be read as a header" * 100)
    ledger.chmod(0o600)
    code, found = doctor(state, capsys)
    assert code == 1
    assert "ledger" in failing(found)


def test_a_missing_route_directory_fails(state: Path, standin: StandIn, capsys: pytest.CaptureFixture[str]) -> None:
    project = standin.world.projects[0].id
    work = state.parent / f"work-{project}"
    work.rmdir()
    code, found = doctor(state, capsys)
    assert (code, found["ok"]) == (1, False)
    gone = RouteFacts(project, str(work), exists=False, is_directory=False, writable=False)
    assert failing(found) == {f"route {project}": route_problem(gone)}  # core.configuration's words
    assert by_name(found)[f"route {project}"]["advice"].startswith("create it, or change the route")


def test_a_configuration_open_to_others_fails(state: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (state / "config.json").chmod(0o644)
    code, found = doctor(state, capsys)
    assert code == 1
    assert list(failing(found)) == ["configuration"]
    assert "open to others" in failing(found)["configuration"]


def test_a_configuration_naming_another_pair_than_asked_fails(
    state: Path, standin: StandIn, capsys: pytest.CaptureFixture[str]
) -> None:
    world = standin.world
    code, found = doctor(state, capsys, "--account", str(world.account_id), "--agent", str(world.people[0].id))
    assert code == 1
    assert list(failing(found)) == ["configuration"]


def test_a_token_that_acts_as_someone_else_fails(
    state: Path, standin: StandIn, capsys: pytest.CaptureFixture[str]
) -> None:
    person = standin.world.people[0]
    (state.parent / "token").write_text(person.token + "\n")
    code, found = doctor(state, capsys)
    assert code == 1
    assert failing(found) == {
        "token": f"the token in {state.parent / 'token'} acts as person {person.id} ({person.name}), "
        f"not the agent {standin.world.agent.id}"
    }


def test_a_token_basecamp_refuses_fails(state: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (state.parent / "token").write_text("no-such-token\n")
    code, found = doctor(state, capsys)
    assert code == 1
    assert failing(found) == {"token": f"Basecamp refused the token in {state.parent / 'token'} (401)"}
    assert by_name(found)["basecamp"]["status"] == "ok"  # it answered: 401 is an answer


def test_a_login_token_is_ok_with_its_days_left(
    state: Path, standin: StandIn, capsys: pytest.CaptureFixture[str]
) -> None:
    now = datetime.now(UTC)
    credentials = Credentials(
        standin.world.token, "refresh", now + timedelta(days=10, minutes=1), now - timedelta(days=4),
        "http://127.0.0.1:1/authorization/token", "client", "secret",
    )  # fmt: skip
    (state.parent / "token").write_text(to_text(credentials))
    code, found = doctor(state, capsys)
    assert (code, found["ok"], by_name(found)["token"]["status"]) == (0, True, "ok")
    assert "; expires in 10.0 days (" in by_name(found)["token"]["detail"]


def test_a_worker_program_that_is_not_there_fails(state: Path, capsys: pytest.CaptureFixture[str]) -> None:
    configuration = load_config(state / "config.json")
    save_config(state / "config.json", replace(configuration, worker_command=("no-such-worker-program-d1",)))
    code, found = doctor(state, capsys, "--deep")
    assert code == 1
    assert failing(found) == {"worker": "the program 'no-such-worker-program-d1' is not found on PATH"}
    assert "worker handshake" not in by_name(found)  # nothing to spawn


def test_doctor_says_when_the_worker_program_is_not_there(state: Path, capsys: pytest.CaptureFixture[str]) -> None:
    configuration = load_config(state / "config.json")
    save_config(state / "config.json", replace(configuration, worker_command=(str(state / "nothing-here"),)))
    code, found = doctor(state, capsys)
    assert (code, list(failing(found))) == (1, ["worker"])


def test_basecamp_down_fails_and_the_token_is_not_asked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tmp_path.chmod(0o700)
    with StandIn(world="demo") as standin:
        state = configure_connector(standin, tmp_path)
    code, found = doctor(state, capsys)
    assert code == 1
    assert list(failing(found)) == ["basecamp"]
    assert failing(found)["basecamp"].startswith(f"{standin.base_url} did not answer: ")
    assert by_name(found)["token"]["status"] == "warning"


class Ahead(SystemClock):
    """This machine's clock, two minutes ahead of the world's."""

    def now(self) -> datetime:
        return super().now() + timedelta(minutes=2)


def test_a_clock_two_minutes_off_basecamps_date_is_a_warning(state: Path) -> None:
    arguments = argparse.Namespace(
        state_dir=str(state), account=None, agent=None, deep=False, deep_seconds=5.0, json=True
    )
    checks = {check.name: check for check in examine(arguments, Ahead())}
    assert checks["basecamp"].status == "warning"
    assert re.search(r"this machine's clock is 12[01] s ahead of Basecamp's$", checks["basecamp"].detail)


def test_no_state_directory_is_one_failing_check(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, found = doctor(tmp_path / "nothing", capsys)
    assert code == 1
    assert [check["name"] for check in found["checks"]] == ["state directory", "configuration"]
    assert found["checks"][0]["advice"] == "bin/connect setup creates it"


@pytest.mark.slow
def test_beside_a_running_connector_doctor_names_it_and_disturbs_nothing(state: Path) -> None:
    connector = start_run(state)
    try:
        done = subprocess.run(
            [CONNECT, "doctor", "--state-dir", str(state), "--json"],
            capture_output=True, text=True, timeout=60, check=False,
        )  # fmt: skip
        assert connector.poll() is None, "the connector ran throughout"
    finally:
        connector.send_signal(signal.SIGTERM)
        _, errors = connector.communicate(timeout=90)
    assert connector.returncode == 0, errors[-3000:]
    assert (done.returncode, done.stderr) == (0, ""), done.stdout
    checks = by_name(json.loads(done.stdout))
    assert checks["lock"]["status"] == "ok"
    assert checks["lock"]["detail"].startswith(f"held by pid {connector.pid} since ")
    assert checks["ledger"]["detail"].endswith(f"schema {SCHEMA_VERSION} (current), quick_check ok")
    with open_ledger_read_only(state / "ledger.sqlite3") as ledger:
        assert ledger.schema_version() == SCHEMA_VERSION
    assert not any(name.startswith("doctor-probe-") for name in os.listdir(state))


def test_the_help_has_examples_and_exit_codes(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        connect(["doctor", "--help"])
    assert done.value.code == 0
    text = capsys.readouterr().out
    assert "  bin/connect doctor --account 999 --agent 42 --deep" in text
    assert "exit codes: 0 nothing failing (warnings allowed); 1 at least one check failing; 2 usage." in text
