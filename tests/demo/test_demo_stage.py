"""shell.demo.play's stage: the demo world from a stand-in's description, and the demo's directory and
configuration, written by setup itself against a real stand-in."""

from __future__ import annotations

import json
import shutil
import stat
from collections.abc import Iterator
from typing import Any

import pytest

from shell.basecamp.standin.server import StandIn
from shell.cli.standin import describe
from shell.demo.play import Stage, world_from
from shell.demo.script import GUARD_DELAY
from shell.errors import UserError
from shell.state.config import load_config


@pytest.fixture
def stage() -> Iterator[Stage]:
    made = Stage.create()
    try:
        yield made
    finally:
        shutil.rmtree(made.directory, ignore_errors=True)


def mode(path: Any) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_the_demo_world_is_read_from_the_standins_own_description() -> None:
    with StandIn(world="demo") as standin:
        world = world_from(describe(standin))
    assert world.base_url == standin.base_url
    assert world.agent_token == standin.world.token
    assert world.operator_id == standin.world.people[0].id
    assert [project.id for project in world.projects] == [project.id for project in standin.world.projects]
    assert world.projects[2].campfire == standin.world.projects[2].campfire_id


def test_a_world_that_is_not_the_demo_world_is_refused_in_one_line() -> None:
    with StandIn(world="empty") as standin:
        summary = describe(standin)
    with pytest.raises(UserError, match="demo world"):
        world_from(summary)
    with pytest.raises(UserError, match="standin --json"):
        world_from({"base_url": "http://127.0.0.1:1"})


def test_the_stage_is_owner_only_and_the_token_file_too(stage: Stage) -> None:
    assert mode(stage.directory) == 0o700
    stage.write_token("secret-token")
    assert mode(stage.token_file) == 0o600
    assert [path.is_dir() for path in stage.work] == [True, True]
    stage.write_parts({7000000003: "slow:7"})
    assert json.loads(stage.scene_file.read_text()) == {"7000000003": "slow:7"}
    assert not list(stage.directory.glob(".*.tmp")), "written whole: a new file, then a rename"


def test_setup_writes_routes_for_two_projects_and_a_worker_command_with_no_token(stage: Stage) -> None:
    with StandIn(world="demo") as standin:
        world = world_from(describe(standin))
        stage.configure(world)
    text = (stage.state / "config.json").read_text()
    assert standin.world.token not in text, "the worker command names the token file, never the token"
    configuration = load_config(stage.state / "config.json")
    assert [route.project_id for route in configuration.routes] == [p.id for p in standin.world.projects[:2]]
    command = configuration.worker_command or ()
    assert command[command.index("--token-file") + 1] == str(stage.token_file)
    assert "shell.demo.worker" in command
    assert configuration.timings.guard_delay == GUARD_DELAY


def test_the_demo_keeps_its_own_pair_locks_whatever_this_machine_serves(
    tmp_path: Any, runtime_directory: Any
) -> None:
    """The stand-in's ids are fixed: a pair record this machine already keeps for them (a real
    setup, a test's) must not stop the demo's setup, and the demo must leave none behind."""
    with StandIn(world="demo") as standin:
        world = world_from(describe(standin))
        elsewhere = Stage.create()  # a first "machine's own" setup of the same ids, in its runtime
        try:
            elsewhere.configure(world)
        finally:
            shutil.rmtree(elsewhere.directory, ignore_errors=True)
        kept = sorted(path.name for path in (elsewhere.directory / "runtime").parent.glob("*"))
        assert kept == [], "the first stage's records went with its directory"
        import os

        os.environ["BASECAMP_CONNECTOR_RUNTIME_DIR"] = str(runtime_directory)
        from shell.cli.main import main as connect

        assert connect(["setup", "--state-dir", str(tmp_path / "mine"), "--base-url", standin.base_url,
                        "--account", str(world.account_id), "--agent", str(world.agent_id),
                        "--token-file", str(_token_file(tmp_path, standin)), "--no-check"]) == 0  # fmt: skip
        assert list(runtime_directory.iterdir()), "this machine now keeps a record for the demo's ids"
        demo = Stage.create()
        try:
            demo.configure(world)  # refused before the demo kept its pair locks its own
        finally:
            shutil.rmtree(demo.directory, ignore_errors=True)


def _token_file(tmp_path: Any, standin: StandIn) -> Any:
    path = tmp_path / "token"
    path.write_text(standin.world.token)
    path.chmod(0o600)
    return path
