"""A route's directory that is, holds or lies inside one of the connector's own paths is refused,
in one wording, by setup, run and doctor alike (``core.route_reach`` on the paths the shell
resolved), and a file edited so while the connector runs authorizes nothing: the worker reads and
edits everything under its directory."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.configuration import (
    Configuration,
    Route,
    RouteFacts,
    authorize,
    parse_configuration,
    route_advice,
    route_problem,
    to_mapping,
    unreaching,
)
from core.route_reach import OwnPath, reached
from shell.basecamp.standin.server import StandIn
from shell.cli.main import main as connect
from shell.errors import EXIT_CONFIG
from shell.state.config import read_authorization
from shell.state.pair_lock import RUNTIME_ENV
from tests.support.configured import REPOSITORY, configure_connector

TOKEN = OwnPath("the token file", "/srv/keys/agent.token")


def test_a_route_that_is_holds_or_lies_inside_a_path_of_the_connector_reaches_it() -> None:
    assert reached("/srv/keys/agent.token", [TOKEN]) == "is the token file /srv/keys/agent.token"
    assert reached("/srv", [TOKEN]) == "holds the token file /srv/keys/agent.token"
    assert reached("/", [TOKEN]) == "holds the token file /srv/keys/agent.token"
    state = OwnPath("the state directory", "/home/a/state")
    assert reached("/home/a/state/shadow", [TOKEN, state]) == "lies inside the state directory /home/a/state"
    for apart in ("/srv/keys2", "/srv/key", "/srv/other", "/home/a/stat"):
        assert reached(apart, [TOKEN, state]) is None, apart


@given(st.lists(st.sampled_from("abc"), min_size=1, max_size=4), st.lists(st.sampled_from("abc"), max_size=4))
def test_reach_is_ancestry_either_way_and_nothing_else(route: list[str], own: list[str]) -> None:
    route_path, own_path = "/" + "/".join(route), "/" + "/".join(own)
    related = (route_path == own_path or own_path.startswith(route_path.rstrip("/") + "/")
               or route_path.startswith(own_path.rstrip("/") + "/") or own_path == "/")
    assert (reached(route_path, [OwnPath("it", own_path)]) is not None) == related


def test_the_problem_is_said_before_writability_with_its_own_advice() -> None:
    facts = RouteFacts(7, "/srv", exists=True, is_directory=True, writable=False, real="/srv", own=(TOKEN,))
    assert route_problem(facts) == (
        "routes.7.directory: /srv holds the token file /srv/keys/agent.token: a worker there could read and "
        "change it"
    )
    assert route_advice(facts).startswith("give the project a directory apart from the connector's files")


# -- setup, run and doctor ---------------------------------------------------------------------
@pytest.fixture(scope="module")
def standin() -> Iterator[StandIn]:
    with StandIn(world="demo") as server:
        yield server


def _setup(state: Path, token: Path, route: Path, *more: str) -> list[str]:
    return ["setup", "--state-dir", str(state), "--base-url", "http://127.0.0.1:9", "--account", "5",
            "--agent", "6", "--token-file", str(token), "--route", f"7={route}", "--no-check", *more]


def _error(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return err.strip().splitlines()[-1]


def _apart(tmp_path: Path, name: str) -> Path:
    directory = tmp_path / name
    directory.mkdir(mode=0o700)
    return directory


@pytest.mark.parametrize("what", ["state", "token", "runtime", "mcp", "checkout", "venv"])
def test_setup_refuses_a_route_over_each_path_of_the_connector(
    what: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    state = _apart(tmp_path, "s") / "state"
    token = _apart(tmp_path, "t") / "agent.token"
    token.write_text("a-token\n")
    token.chmod(0o600)
    more: list[str] = []
    if what == "state":
        route, said = state.parent, f"holds the state directory {state}"
    elif what == "token":
        route, said = token.parent, f"holds the token file {token}"
    elif what == "runtime":
        runtime = _apart(tmp_path, "r") / "runtime"
        monkeypatch.setenv(RUNTIME_ENV, str(runtime))
        route, said = runtime.parent, f"holds the runtime directory {runtime}"
    elif what == "mcp":
        extra = _apart(tmp_path, "m") / "extra.json"
        extra.write_text(json.dumps({"mcpServers": {"search": {"command": "search-server"}}}))
        extra.chmod(0o600)
        more = ["--worker-mcp", str(extra)]
        route, said = extra.parent, f"holds the MCP config file {extra}"
    elif what == "checkout":
        route, said = REPOSITORY / "tests" / "routes", f"lies inside the connector's checkout {REPOSITORY}"
    else:
        venv = _apart(tmp_path, "v")
        monkeypatch.setattr(sys, "prefix", str(venv))
        route, said = _apart(venv, "project"), f"lies inside the connector's venv {venv}"
    assert connect(_setup(state, token, route, *more)) == EXIT_CONFIG
    assert f"routes.7.directory: {route} {said}: a worker there could read and change it" in _error(capsys)
    assert not (state / "config.json").exists()


def test_a_symlinked_route_or_path_hides_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    real = _apart(tmp_path, "real")
    token = real / "agent.token"
    token.write_text("a-token\n")
    token.chmod(0o600)
    (tmp_path / "route").symlink_to(real)
    (tmp_path / "keys").symlink_to(real)
    state = _apart(tmp_path, "s") / "state"
    assert connect(_setup(state, tmp_path / "keys" / "agent.token", tmp_path / "route")) == EXIT_CONFIG
    assert f"{tmp_path / 'route'} holds the token file {token}" in _error(capsys)


def _route_over_the_state(standin: StandIn, tmp_path: Path) -> tuple[Path, Any]:
    """A configuration setup wrote, its route then changed by hand to the directory holding it all."""
    tmp_path.chmod(0o700)
    state = configure_connector(standin, tmp_path, worker=("true",), base_url=standin.base_url)
    config = state / "config.json"
    data = json.loads(config.read_text())
    [project] = data["routes"]
    data["routes"][project]["directory"] = str(tmp_path)
    config.write_text(json.dumps(data))
    return state, project


def test_run_refuses_to_start_with_a_route_over_the_connector(
    standin: StandIn, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state, project = _route_over_the_state(standin, tmp_path)
    ran = subprocess.run([str(REPOSITORY / "bin" / "connect"), "run", "--state-dir", str(state)],
                         capture_output=True, text=True, timeout=60, check=False)
    assert ran.returncode == EXIT_CONFIG, ran.stderr
    line = ran.stderr.strip().splitlines()[-1]
    assert line.startswith(f"error: routes.{project}.directory: {tmp_path} holds the state directory {state}")
    assert ": not started; give the project a directory apart from the connector's files" in line
    assert not (state / "ledger.sqlite3").exists()


def test_doctor_reports_a_route_over_the_connector(
    standin: StandIn, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state, project = _route_over_the_state(standin, tmp_path)
    capsys.readouterr()
    assert connect(["doctor", "--state-dir", str(state), "--json"]) == 1
    checks = {check["name"]: check for check in json.loads(capsys.readouterr().out)["checks"]}
    route = checks[f"route {project}"]
    assert route["status"] == "failing"
    assert route["detail"].startswith(f"routes.{project}.directory: {tmp_path} holds the state directory {state}")
    assert os.path.isdir(tmp_path)


def test_a_reread_file_whose_route_reaches_the_connector_authorizes_nothing() -> None:
    running = Configuration(account_id=5, base_url="https://3.basecampapi.com", agent_id=6, token_file="/t",
                            routes=(Route(7, "/srv/seven"),))
    read = authorize(running, {**to_mapping(running), "routes": {"7": {"directory": "/srv"}}})
    over = RouteFacts(7, "/srv", exists=True, is_directory=True, writable=True, real="/srv", own=(TOKEN,))
    apart = RouteFacts(7, "/srv/seven", exists=True, is_directory=True, writable=True, real="/srv/seven",
                       own=(TOKEN,))
    assert unreaching(read, [apart]) == read
    refused = unreaching(read, [over])
    assert (refused.usable, refused.routes) == (False, ())
    assert refused.problem == f"the configuration file is refused: {route_problem(over)}"


def test_the_running_connectors_reread_refuses_a_route_edited_over_the_connector(
    standin: StandIn, tmp_path: Path
) -> None:
    state, project = _route_over_the_state(standin, tmp_path)
    data = json.loads((state / "config.json").read_text())
    running = parse_configuration({**data, "routes": {}})
    assert isinstance(running, Configuration)
    authorization = read_authorization(state / "config.json", running)
    assert not authorization.usable
    assert authorization.problem.startswith(
        f"the configuration file is refused: routes.{project}.directory: {tmp_path} holds the state directory")
