"""The demo's stage: the stand-in's world as the demo needs it, and a temporary state directory
with the demo's configuration in it.

Rules:
1. The world comes from the stand-in's own description (``bin/connect standin --json``,
   ``shell.cli.standin.describe``). It must be a demo world: at least three projects, the first
   two with a card each, the third with a card and a Campfire; anything else is a ``UserError``.
2. Everything the demo writes lives in one fresh 0700 directory (``mkdtemp``): the state
   directory, the token file, a work directory per routed project, the scene file, the log, and
   the pair locks' runtime directory (``BASECAMP_CONNECTOR_RUNTIME_DIR``): the stand-in's ids are
   fixed, so the demo never meets, nor leaves, a pair record of this machine's own.
3. The configuration is written by ``bin/connect setup`` itself (checking the token against the
   stand-in): routes for the first two projects only, the demo worker as the worker command
   (naming the token file, never the token), the timings shortened.
4. The scene file is rewritten whole (a new file, then a rename) each time a part is added.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import shlex
import sys
import tempfile
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

from core.timestamps import format_duration
from shell import private_files
from shell.cli.main import main as connect
from shell.demo.connector_child import REPOSITORY
from shell.errors import EXIT_CONFIG, UserError
from shell.state.pair_lock import RUNTIME_ENV

GUARD_DELAY = timedelta(seconds=8)
STILL_RUNNING = timedelta(minutes=10)  # longer than the demo: no still-running notice is called for
RECONCILE_AFTER = timedelta(seconds=2)
ROUTED_PROJECTS = 2


@dataclass(frozen=True, slots=True)
class DemoProject:
    id: int
    name: str
    cards: tuple[int, ...]
    campfire: int


@dataclass(frozen=True, slots=True)
class DemoWorld:
    base_url: str
    account_id: int
    agent_id: int
    agent_name: str
    agent_token: str
    control_secret: str
    operator_id: int
    operator_name: str
    projects: tuple[DemoProject, ...]


def world_from(summary: Any) -> DemoWorld:
    """The demo's world from a stand-in's description (rule 1)."""
    try:
        projects = tuple(
            DemoProject(int(found["id"]), str(found["name"]), tuple(int(card) for card in found["cards"]),
                        int(found["campfire"]))
            for found in summary["projects"]
        )  # fmt: skip
        operator = summary["people"][0]
        world = DemoWorld(
            base_url=str(summary["base_url"]),
            account_id=int(summary["account_id"]),
            agent_id=int(summary["agent_id"]),
            agent_name=str(summary["agent_name"]),
            agent_token=str(summary["token"]),
            control_secret=str(summary["control_secret"]),
            operator_id=int(operator["id"]),
            operator_name=str(operator["name"]),
            projects=projects,
        )
    except (KeyError, IndexError, TypeError, ValueError) as error:
        raise UserError(
            f"the stand-in's description is not what `bin/connect standin --json` prints ({error})",
            EXIT_CONFIG,
        ) from None
    if len(projects) < 3 or not all(project.cards for project in projects[:3]):
        raise UserError(
            "the demo needs the stand-in's demo world (three projects with cards): "
            "bin/connect standin --world demo --json",
            EXIT_CONFIG,
        )
    return world


@dataclass(frozen=True, slots=True)
class Stage:
    directory: Path
    state: Path
    token_file: Path
    scene_file: Path
    log: Path
    work: tuple[Path, ...]

    @classmethod
    def create(cls) -> Stage:
        """Rule 2."""
        directory = Path(tempfile.mkdtemp(prefix="connect-demo-"))
        os.environ[RUNTIME_ENV] = str(directory / "runtime")  # rule 2: the demo's own pair locks
        token_file = directory / "agent.token"
        work = tuple(directory / "work" / f"project-{number + 1}" for number in range(ROUTED_PROJECTS))
        for path in work:
            path.mkdir(parents=True)
        stage = cls(directory, directory / "state", token_file, directory / "scenes.json",
                    directory / "connector.log", work)  # fmt: skip
        stage.write_parts({})
        return stage

    def write_token(self, token: str) -> None:
        private_files.write_new_file(self.token_file, (token + "\n").encode())

    def write_parts(self, parts: dict[int, str]) -> None:
        """Rule 4."""
        temporary = self.scene_file.with_name(f".{self.scene_file.name}.tmp")
        temporary.write_text(json.dumps({str(event): part for event, part in parts.items()}))
        temporary.replace(self.scene_file)

    def worker_command(self, world: DemoWorld) -> list[str]:
        """The bundled demo worker, with its own credentials from the token file (rule 3)."""
        return [
            "env", f"PYTHONPATH={REPOSITORY}", sys.executable, "-P", "-m", "shell.demo.worker",
            "--base-url", world.base_url, "--account", str(world.account_id),
            "--token-file", str(self.token_file), "--scenes", str(self.scene_file),
            "--prompt", "{prompt}", "--mcp-config", "{mcp_config}",
        ]  # fmt: skip

    def configure(self, world: DemoWorld) -> None:
        """Rule 3: ``bin/connect setup`` writes and checks the configuration."""
        self.write_token(world.agent_token)
        arguments = [
            "setup", "--state-dir", str(self.state), "--base-url", world.base_url,
            "--account", str(world.account_id), "--agent", str(world.agent_id),
            "--token-file", str(self.token_file), "--operator", str(world.operator_id),
            "--worker-command", shlex.join(self.worker_command(world)),
            "--guard-delay", format_duration(GUARD_DELAY), "--still-running", format_duration(STILL_RUNNING),
            "--reconcile-after", format_duration(RECONCILE_AFTER),
            "--unsafe-test-timings",  # the demo's timings are below the floors, in plain sight
        ]  # fmt: skip
        for project, directory in zip(world.projects, self.work, strict=False):
            arguments += ["--route", f"{project.id}={directory}"]
        said = io.StringIO()
        with contextlib.redirect_stdout(said), contextlib.redirect_stderr(said):
            code = connect(arguments)
        if code != 0:
            raise UserError(f"the demo's setup failed:\n{said.getvalue().strip()}", code)
