"""``bin/connect demo``: the connector's main job, end to end, against a Basecamp stand-in.

It starts a stand-in with the demo world, or uses the one ``--standin`` describes (left running,
and only the requests it records after the demo began are judged), then plays the five scenes
on its stage (``shell.demo.stage``) and ends with what each place holds and the verdict line.
The connector is stopped whatever happens, and any worker group it left is ended. The demo's
directory is removed after a pass unless ``--keep``, and kept (and said where) after a failure.
A stand-in, setup or connector that fails is one line on stderr and a non-zero exit.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import shutil
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.destinations import MessageKind
from core.durations import format_duration
from core.file_kinds import LEDGER_NAME
from core.json_input import Decoded, decode_json
from core.text import message_text
from shell.basecamp.standin.server import StandIn
from shell.cli.commands import SUMMARIES
from shell.cli.standin import describe
from shell.demo.script import SCENES, DemoTally, abbreviate, judge, posted_messages, verdict_line
from shell.demo.stage import (
    GUARD_DELAY,
    RECONCILE_AFTER,
    ConnectorChild,
    ConnectorFailed,
    DemoWorld,
    Played,
    Player,
    Said,
    Stage,
    StandInLink,
    StandInUnreachable,
    end_left_workers,
    world_from,
)
from shell.errors import EXIT_CONFIG, EXIT_FAILURE, EXIT_OK, EXIT_UNAVAILABLE, UserError
from shell.ledger.connection import Ledger, open_ledger_read_only

POLL_SECONDS = 0.3
NOTHING_POSTED = judge((), ())
DESCRIPTION = f"""\
Watch the connector do its main job, from nothing but this checkout, in about half a minute.

It starts a local Basecamp stand-in with a demo world (three projects; the agent; Ada, the
operator), writes a demo configuration in a temporary state directory (routes for two
projects, none for the third; timings shortened: guard delay {format_duration(GUARD_DELAY)}, reconcile after \
{format_duration(RECONCILE_AFTER)}), and
runs the connector (`bin/connect run`) with a bundled demo worker that speaks MCP to the
connector's dispatch tools, standing in for Claude Code (not needed). Then five scenes, each
one request by Ada mentioning the agent, narrated as they happen from the connector's ledger:

  1. a mention answered by the worker (its own boost and reply; the guard stands down)
  2. a slow worker, so the connector's guard boost goes out first
  3. a mention in a project with no route, so the holding reply goes out
  4. a worker that fails, so the completion notice names the event and the redispatch command
  5. the connector killed with SIGKILL while a notice's POST is in flight (the stand-in made
     the message and held back its answer), and restarted: reconciliation lists the
     destination and adopts the message; it is not posted again

It ends with what each place holds and one verdict line, judged from the stand-in's own record
of every POST (not from the ledger): messages posted, doubled (the same words twice at one
place, or two messages where a scene calls for one), missing (a message a scene calls for
that never came) and unexpected. Exit 0 only when doubled, missing and unexpected are all 0
and every scene happened as scripted; 1 otherwise (the demo's directory is then kept).

Against a stand-in of your own (to watch its record or script faults while the demo runs):
  bin/connect standin --json > standin.json &
  bin/connect demo --standin standin.json"""


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "demo", help=SUMMARIES["demo"], description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--standin",
        metavar="FILE",
        type=Path,
        help="use a running stand-in: FILE holds the JSON line `bin/connect standin --json` printed "
        "(default: start one with the demo world)",
    )
    parser.add_argument(
        "--keep", action="store_true", help="keep the demo's directory (configuration, ledger, log)"
    )
    parser.add_argument("--json", action="store_true", help="no narration; one JSON object at the end")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    def say(line: str) -> None:
        if not args.json:
            print(line, flush=True)

    try:
        outcome = run_demo(args.standin, args.keep, say)
    except StandInUnreachable as error:
        raise UserError(str(error), EXIT_UNAVAILABLE) from None
    except ConnectorFailed as error:
        raise UserError(f"the demo's connector failed: {error}", EXIT_FAILURE) from None
    if args.json:
        json.dump(outcome.to_json(), sys.stdout, indent=2, ensure_ascii=False)
        print()
    return EXIT_OK if outcome.passed else EXIT_FAILURE


@dataclass
class DemoOutcome:
    """The run as it happened, and the verdict on the POSTs the stand-in recorded since it began."""

    standin: str = ""
    directory: str = ""
    kept: bool = False
    played: list[Played] = field(default_factory=list)
    posts: int = 0
    verdict: DemoTally = NOTHING_POSTED
    judged: bool = False
    holdings: list[tuple[int, str, list[Said]]] = field(default_factory=list)
    wall_seconds: float = 0.0

    @property
    def problems(self) -> list[str]:
        return [problem for scene in self.played for problem in scene.problems]

    @property
    def passed(self) -> bool:
        return self.judged and self.verdict.passed and not self.problems

    def line(self) -> str:
        return verdict_line(self.verdict, len(self.problems))

    def lines(self) -> list[str]:
        said = ["", "What each place holds (read back from the stand-in):"]
        for number, name, messages in self.holdings:
            said.append(f"  scene {number}, {name}:")
            said += [f"    {message.author:<14} {abbreviate(message_text(message.content), 64)}"
                     for message in messages] or ["    (nothing)"]  # fmt: skip
        verdict = self.verdict
        said += ["", f"The stand-in's record: {self.posts} POSTs by the agent's side (connector and worker) "
                     f"since the demo began; {len(verdict.posted)} created a message."]  # fmt: skip
        said += [f"  doubled: {p.place.describe()}: '{abbreviate(p.words)}'" for p in verdict.doubled]
        said += [f"  missing: scene {e.scene}, {e.label} ({e.place.describe()})" for e in verdict.missing]
        said += [f"  unexpected: {p.place.describe()}: '{abbreviate(p.words)}'" for p in verdict.unexpected]
        said += [f"  problem: {problem}" for problem in self.problems]
        return [*said, f"demo wall time: {self.wall_seconds:.1f} s", self.line()]

    def to_json(self) -> dict[str, Any]:
        verdict = self.verdict
        return {
            "standin": self.standin, "directory": self.directory, "kept": self.kept,
            "scenes": [{"number": p.scene.number, "title": p.scene.title, "place": p.place_name,
                        "request_id": p.request_id, "event_id": p.event_id, "narration": p.narration,
                        "problems": p.problems} for p in self.played],
            "record": {"posts": self.posts, "created": len(verdict.posted)},
            "places": [{"scene": number, "place": name, "messages": [
                           {"id": said.id, "author": said.author, "words": message_text(said.content)}
                           for said in held]} for number, name, held in self.holdings],
            "verdict": {
                "posted": len(verdict.posted), "by_kind": verdict.by_kind(),
                "doubled": [{"place": p.place.describe(), "words": p.words} for p in verdict.doubled],
                "missing": [{"scene": e.scene, "label": e.label, "place": e.place.describe()}
                            for e in verdict.missing],
                "unexpected": [{"place": p.place.describe(), "words": p.words} for p in verdict.unexpected],
                "passed": verdict.passed,
            },
            "problems": self.problems, "passed": self.passed, "line": self.line(),
            "wall_seconds": round(self.wall_seconds, 1),
        }  # fmt: skip


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
            _play(world, link, stage, outcome, say)
            _judge(link, mark, outcome)
        finally:
            outcome.wall_seconds = time.monotonic() - began
            outcome.kept = keep or not outcome.passed
            if outcome.kept:
                say(f"\n(the demo's directory is kept: {stage.directory}; the connector's log: {stage.log})")
            else:
                shutil.rmtree(stage.directory, ignore_errors=True)
    for line in outcome.lines():
        say(line)
    return outcome


def _play(
    world: DemoWorld, link: StandInLink, stage: Stage, outcome: DemoOutcome, say: Callable[[str], None]
) -> None:
    """The connector runs for the scenes, and is stopped whatever happens."""
    connector = ConnectorChild(stage.state, stage.log, POLL_SECONDS)
    ledger: Ledger | None = None
    try:
        running = connector.start()
        say(f"  connector  {running} (pid {connector.pid})")
        ledger = open_ledger_read_only(stage.state / LEDGER_NAME)
        player = Player(world, link, stage, connector, ledger, say)
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
            for left in end_left_workers(ledger):
                say(f"  ended a worker the connector left: {left}")
            ledger.close()


def _judge(link: StandInLink, mark: int, outcome: DemoOutcome) -> None:
    """What each place holds, as the agent lists it, and the verdict on the stand-in's own record."""
    posts = link.posts(mark)
    expected = [wanted for scene in outcome.played for wanted in scene.expected]
    outcome.posts, outcome.verdict = len(posts), judge(posted_messages(posts, link.account_id), expected)
    for played in outcome.played:
        for place in played.places():
            name = played.place_name if place.kind is not MessageKind.boost else "boosts on the request"
            outcome.holdings.append((played.scene.number, name, link.messages(place)))
    outcome.judged = True


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
    """A handed stand-in's description, or a stand-in of the demo's own, stopped at the end."""
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
