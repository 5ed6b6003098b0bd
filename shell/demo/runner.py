"""The whole demo, start to end: the stand-in, the stage, the connector, five scenes, the ending.

Rules:
1. Without a stand-in handed to it (``standin_file``) the demo starts its own, in this process,
   and stops it at the end; a handed one is left running, and only the requests it records
   after the demo began are judged.
2. The connector is ``bin/connect run`` as a child process (``shell.demo.connector_child``),
   started once the configuration is written and stopped with SIGTERM after the last scene.
   Whatever happens -- a failure, Ctrl-C -- it is stopped before the demo returns, and any
   worker group it left is ended by its recorded identity.
3. The demo's directory is removed at the end when the demo passed, unless ``keep``; when it
   failed it is kept, and said where, for its log and ledger.
4. ``say`` gets every line meant for a person, as it happens; the returned ``DemoOutcome`` holds
   the same facts for ``--json``.
"""

from __future__ import annotations

import contextlib
import shutil
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.file_kinds import LEDGER_NAME
from core.json_input import Decoded, decode_json
from core.timestamps import format_duration
from shell.basecamp.standin.server import StandIn
from shell.cli.standin import describe
from shell.demo.connector_child import ConnectorChild
from shell.demo.ending import Ending, ending
from shell.demo.ledger_view import LedgerView
from shell.demo.scenes import Played, Player
from shell.demo.script import SCENES
from shell.demo.stage import GUARD_DELAY, RECONCILE_AFTER, DemoWorld, Stage, world_from
from shell.demo.standin_link import StandInLink
from shell.errors import EXIT_CONFIG, UserError

POLL_SECONDS = 0.3


@dataclass
class DemoOutcome:
    standin: str = ""
    directory: str = ""
    kept: bool = False
    played: list[Played] = field(default_factory=list)
    ending: Ending | None = None
    wall_seconds: float = 0.0

    @property
    def passed(self) -> bool:
        return self.ending is not None and self.ending.passed

    def to_json(self) -> dict[str, Any]:
        return {
            "standin": self.standin,
            "directory": self.directory,
            "kept": self.kept,
            "scenes": [
                {
                    "number": played.scene.number,
                    "title": played.scene.title,
                    "place": played.place_name,
                    "request_id": played.request_id,
                    "event_id": played.event_id,
                    "narration": played.narration,
                    "problems": played.problems,
                }
                for played in self.played
            ],
            **(self.ending.to_json() if self.ending is not None else {"passed": False}),
            "wall_seconds": round(self.wall_seconds, 1),
        }


def run_demo(standin_file: Path | None, keep: bool, say: Callable[[str], None]) -> DemoOutcome:
    began = time.monotonic()
    outcome = DemoOutcome()
    with _standin(standin_file) as summary:
        world = world_from(summary)
        link = StandInLink(world.base_url, world.account_id, world.agent_token, world.control_secret)
        mark = len(link.requests())
        stage = Stage.create()
        outcome.standin, outcome.directory = world.base_url, str(stage.directory)
        try:
            _introduce(world, stage, standin_file is None, say)
            stage.configure(world)
            connector = ConnectorChild(stage.state, stage.log, POLL_SECONDS)
            _play(world=world, link=link, stage=stage, connector=connector, outcome=outcome, say=say)
            outcome.ending = ending(link, mark, outcome.played)
        finally:
            outcome.wall_seconds = time.monotonic() - began
            outcome.kept = keep or not outcome.passed
            if outcome.kept:
                say(f"\n(the demo's directory is kept: {stage.directory}; the connector's log: {stage.log})")
            else:
                shutil.rmtree(stage.directory, ignore_errors=True)
    for line in outcome.ending.lines(outcome.wall_seconds) if outcome.ending is not None else ():
        say(line)
    return outcome


def _play(
    *,
    world: DemoWorld,
    link: StandInLink,
    stage: Stage,
    connector: ConnectorChild,
    outcome: DemoOutcome,
    say: Callable[[str], None],
) -> None:
    """Rule 2: the connector runs for the scenes, and is stopped whatever happens."""
    ledger: LedgerView | None = None
    try:
        running = connector.start()
        say(f"  connector  {running} (pid {connector.pid})")
        ledger = LedgerView(stage.state / LEDGER_NAME)
        player = Player(world=world, link=link, stage=stage, connector=connector, ledger=ledger, say=say)
        for scene in SCENES:
            say("")
            outcome.played.append(player.play(scene))
        say("")
        code = connector.stop()
        say(f"The connector stopped on SIGTERM (exit {code}).")
    finally:
        with contextlib.suppress(Exception):
            connector.stop()
        if ledger is not None:
            for left in connector.end_left_workers(ledger):
                say(f"  ended a worker the connector left: {left}")
            ledger.close()


def _introduce(world: DemoWorld, stage: Stage, own: bool, say: Callable[[str], None]) -> None:
    routed = ", ".join(project.name for project in world.projects[:2])
    say("bin/connect demo: the connector's main job against a local Basecamp stand-in, in five scenes.")
    say(f"  stand-in   {world.base_url} ({'started for the demo' if own else 'handed to the demo'}), "
        f"account {world.account_id}; agent {world.agent_name}, operator {world.operator_name}")  # fmt: skip
    say(f"  state      {stage.directory} (configuration, ledger, log; removed after a pass)")
    say(f"  routes     {routed}; {world.projects[2].name} has none")
    say("  worker     the bundled demo worker (python -m shell.demo.worker), standing in for Claude Code")
    say(f"  timings    guard delay {format_duration(GUARD_DELAY)}, reconcile after "
        f"{format_duration(RECONCILE_AFTER)} (shortened for the demo)")  # fmt: skip


@contextlib.contextmanager
def _standin(standin_file: Path | None) -> Iterator[Any]:
    """Rule 1: a handed stand-in's description, or a stand-in of the demo's own."""
    if standin_file is not None:
        yield _description(standin_file)
        return
    with StandIn(world="demo") as standin:
        yield describe(standin)


def _description(path: Path) -> Any:
    try:
        raw = path.read_bytes()
    except OSError as error:
        raise UserError(
            f"cannot read the stand-in's description {path}: {error.strerror}", EXIT_CONFIG
        ) from None
    line = next((found for found in raw.splitlines() if found.strip()), b"")
    decoded = decode_json(line)  # the one bounded decoder: a binary file is refused, not a traceback
    if not isinstance(decoded, Decoded):
        raise UserError(
            f"{path} does not hold the JSON line `bin/connect standin --json` prints ({decoded.reason})",
            EXIT_CONFIG,
        )
    return decoded.value
