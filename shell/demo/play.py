"""The demo played against the stand-in and the connector: its stage (the stand-in, a directory
with the demo's configuration, the connector as a child process), its scenes played on it and
told from the ledger, and the verdict.

Everything goes to the stand-in over HTTP, whether the demo started it or was handed one (left
running, and judged only on the requests recorded after the demo began). What people say is
seeded through its control API, so the record of POSTs holds only the agent side's; Basecamp
reads go as the agent, paced below the limit the address shares with the connector and its
workers. The demo writes only in one fresh owner-only directory, its pair locks too, since the
stand-in's ids are fixed. Only the pid the demo started is ever signaled; the ledger is only
read, one snapshot a look, while the connector that owns it runs, is killed and restarted.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import urllib3

from core.destinations import MessageKind
from core.file_kinds import LEDGER_NAME
from core.json_input import Decoded, decode_json
from core.message_kinds import label
from core.text import message_lines
from core.timestamps import format_duration
from shell import code_root, private_files
from shell.basecamp.client import BasecampClient
from shell.basecamp.errors import BasecampError
from shell.basecamp.standin.api import mention_markup
from shell.basecamp.standin.control import SECRET_HEADER
from shell.basecamp.standin.server import StandIn
from shell.basecamp.standin.world import person_sgid
from shell.cli.main import main as connect
from shell.cli.standin import describe
from shell.demo import script
from shell.demo.script import GUARD_DELAY, DemoOutcome, EventView, Place, Played, RecordedPost, Said
from shell.errors import EXIT_CONFIG, UserError
from shell.ledger import status as narration
from shell.ledger.connection import Ledger, open_ledger_read_only
from shell.processes import signal_child, stop_child, terminate_group
from shell.state.pair_lock import RUNTIME_ENV

USER_AGENT = "basecamp-connector demo (https://github.com/basecamp/basecamp-connector)"
ROUTED_PROJECTS = 2
TIMEOUT_SECONDS = 10.0
READS_PER_WINDOW = 10
READ_DEADLINE_SECONDS = 60.0
THROTTLED = (429, 503)
CONNECTOR_POLL_SECONDS = 0.3
START_SECONDS = 60.0
STOP_SECONDS = 60.0
LOOK_SECONDS = 0.1
SCENE_SECONDS = 60.0
EVENT_SECONDS = 30.0
IN_FLIGHT_HOLD_SECONDS = 300.0
LISTINGS = {MessageKind.boost: "recordings/{}/boosts.json",
            MessageKind.comment: "recordings/{}/comments.json", MessageKind.chat_line: "chats/{}/lines.json"}


class StandInUnreachable(Exception):
    """The stand-in did not answer as it should."""


class ConnectorFailed(Exception):
    """The connector did not start, or did not stop when asked."""


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
    """The demo world from a stand-in's description (``bin/connect standin --json``): three
    projects at least, each with a card; anything else is a ``UserError``."""
    try:
        projects = tuple(DemoProject(int(found["id"]), str(found["name"]), tuple(map(int, found["cards"])),
                                     int(found["campfire"])) for found in summary["projects"])
        operator = summary["people"][0]
        world = DemoWorld(str(summary["base_url"]), int(summary["account_id"]), int(summary["agent_id"]),
                          str(summary["agent_name"]), str(summary["token"]), str(summary["control_secret"]),
                          int(operator["id"]), str(operator["name"]), projects)
    except (KeyError, IndexError, TypeError, ValueError) as error:
        told = f"the stand-in's description is not what `bin/connect standin --json` prints ({error})"
        raise UserError(told, EXIT_CONFIG) from None
    if len(projects) < 3 or not all(project.cards for project in projects[:3]):
        told = "the demo needs the stand-in's demo world (three projects with cards): "
        raise UserError(told + "bin/connect standin --world demo --json", EXIT_CONFIG)
    return world


class StandInLink:
    def __init__(self, base_url: str, account_id: int, agent_token: str, control_secret: str) -> None:
        self.base_url = base_url.rstrip("/")
        self.account_id = account_id
        self._secret = control_secret
        self._pool = urllib3.PoolManager(retries=False, timeout=TIMEOUT_SECONDS)
        self._client = BasecampClient(self.base_url, account_id, agent_token, USER_AGENT,
                                      read_timeout=TIMEOUT_SECONDS, requests_per_window=READS_PER_WINDOW)

    def seed(self, kind: MessageKind, recording_id: int, creator_id: int, content: str) -> int:
        """A person says ``content`` at ``recording_id``; the id of their comment or line."""
        said = {"kind": kind.value, "recording_id": recording_id, "creator_id": creator_id}
        return int(self._control("POST", "messages", {**said, "content": content})["id"])

    def add_fault(self, fault: dict[str, Any]) -> None:
        self._control("POST", "faults", fault)

    def requests(self) -> list[dict[str, Any]]:
        found = self._control("GET", "requests")
        if not isinstance(found, list):
            raise StandInUnreachable("the stand-in's record of requests is not a list")
        return found

    def posts(self, after: int = 0) -> list[RecordedPost]:
        """The POSTs among the recorded requests from number ``after`` on."""
        return [RecordedPost(str(item["path"]), str(item["body"]), item.get("status"), item.get("fault"))
                for item in self.requests()[after:] if item.get("method") == "POST"]

    def card_title(self, card_id: int) -> str:
        found = self._basecamp(f"card_tables/cards/{card_id}.json")
        return str(found.get("title", "")) if isinstance(found, dict) else ""

    def messages(self, place: Place) -> list[Said]:
        """What ``place`` holds, oldest first (one page is all a demo place ever holds)."""
        found = self._basecamp(LISTINGS[place.kind].format(place.recording_id))
        who = "booster" if place.kind is MessageKind.boost else "creator"
        if not isinstance(found, list):
            raise StandInUnreachable(f"listing {place.describe()} answered no list")
        return [Said(int(item["id"]), str(item.get(who, {}).get("name", "?")), str(item.get("content", "")))
                for item in found]

    def _control(self, method: str, name: str, body: dict[str, Any] | None = None) -> Any:
        headers = {"User-Agent": USER_AGENT, "Content-Type": "application/json", SECRET_HEADER: self._secret}
        payload = None if body is None else json.dumps(body).encode()
        url = f"{self.base_url}/__standin/{name}"
        try:
            response = self._pool.request(method, url, body=payload, headers=headers, redirect=False)
        except (urllib3.exceptions.HTTPError, OSError) as error:
            raise StandInUnreachable(f"the stand-in at {self.base_url} did not answer: {error}") from None
        if not 200 <= response.status < 300:
            told = f"the stand-in answered {method} /__standin/{name} with HTTP {response.status}"
            raise StandInUnreachable(told)
        try:
            return json.loads(response.data) if response.data else None
        except ValueError:
            raise StandInUnreachable("the stand-in answered with something other than JSON") from None

    def _basecamp(self, path: str) -> Any:
        client = self._client
        deadline = client.deadline_in(READ_DEADLINE_SECONDS)
        try:
            answer = client.read(f"{client.account_url}/{path}", deadline)
            while answer.status in THROTTLED:
                answer = client.read(f"{client.account_url}/{path}", deadline)
        except BasecampError as error:
            raise StandInUnreachable(f"the stand-in did not answer GET /{path}: {error}") from None
        if not 200 <= answer.status < 300:
            told = f"the stand-in answered GET /{self.account_id}/{path} with HTTP {answer.status}"
            raise StandInUnreachable(told)
        return answer.body


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
        directory = Path(tempfile.mkdtemp(prefix="connect-demo-"))
        os.environ[RUNTIME_ENV] = str(directory / "runtime")  # the demo's own pair locks
        work = tuple(directory / "work" / f"project-{number + 1}" for number in range(ROUTED_PROJECTS))
        for path in work:
            path.mkdir(parents=True)
        stage = cls(directory, directory / "state", directory / "agent.token", directory / "scenes.json",
                    directory / "connector.log", work)  # fmt: skip
        stage.write_parts({})
        return stage

    def write_token(self, token: str) -> None:
        private_files.write_new_file(self.token_file, (token + "\n").encode())

    def write_parts(self, parts: dict[int, str]) -> None:
        """The demo worker's part for each event, the file written whole: a new one, then a rename."""
        temporary = self.scene_file.with_name(f".{self.scene_file.name}.tmp")
        temporary.write_text(json.dumps({str(event): part for event, part in parts.items()}))
        temporary.replace(self.scene_file)

    def configure(self, world: DemoWorld) -> None:
        """``bin/connect setup`` writes the configuration, checking the token against the stand-in."""
        self.write_token(world.agent_token)
        worker = ["env", f"PYTHONPATH={code_root.python_path()}", sys.executable, "-P", "-m",
                  "shell.demo.worker", "--base-url", world.base_url, "--account", str(world.account_id),
                  "--token-file", str(self.token_file), "--scenes", str(self.scene_file),
                  "--prompt", "{prompt}", "--mcp-config", "{mcp_config}"]  # fmt: skip
        arguments = [
            "setup", "--state-dir", str(self.state), "--base-url", world.base_url,
            "--account", str(world.account_id), "--agent", str(world.agent_id),
            "--token-file", str(self.token_file), "--operator", str(world.operator_id),
            "--worker-command", shlex.join(worker), "--guard-delay", format_duration(GUARD_DELAY),
            "--still-running", format_duration(script.STILL_RUNNING),
            "--reconcile-after", format_duration(script.RECONCILE_AFTER),
            "--unsafe-test-timings",  # the demo's timings are below the floors, in plain sight
        ]  # fmt: skip
        for project, directory in zip(world.projects, self.work, strict=False):
            arguments += ["--route", f"{project.id}={directory}"]
        said = io.StringIO()
        with contextlib.redirect_stdout(said), contextlib.redirect_stderr(said):
            code = connect(arguments)
        if code != 0:
            raise UserError(f"the demo's setup failed:\n{said.getvalue().strip()}", code)


class ConnectorChild:
    """``python -m shell.cli.main run`` as ``bin/connect`` runs it, its output in the demo's log."""

    def __init__(self, state_dir: Path, log_path: Path) -> None:
        self.state_dir, self.log_path = state_dir, log_path
        self._process: subprocess.Popen[bytes] | None = None
        self._log: IO[bytes] | None = None

    @property
    def pid(self) -> int:
        return self._process.pid if self._process is not None else 0

    def start(self) -> str:
        """Its ``running`` line, once it is up; the demo is never a crash test's pause."""
        environment = {key: value for key, value in os.environ.items() if key != "CONNECTOR_PAUSE_AT"}
        environment["PYTHONPATH"] = code_root.python_path(environment.get("PYTHONPATH", ""))
        already = len(self._running_lines())
        self._log = self.log_path.open("ab")
        command = [sys.executable, "-P", "-m", "shell.cli.main", "run", "--state-dir", str(self.state_dir),
                   "--poll-seconds", f"{CONNECTOR_POLL_SECONDS:g}", "--shutdown-seconds", "30"]
        self._process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=self._log,
                                         stderr=self._log, env=environment)
        deadline = time.monotonic() + START_SECONDS
        while time.monotonic() < deadline:
            if len(lines := self._running_lines()) > already:
                return lines[-1]
            if self._process.poll() is not None:
                self._forget()
                raise ConnectorFailed(f"the connector exited at its start:\n{self.tail()}")
            time.sleep(0.05)
        self.crash()
        raise ConnectorFailed(f"the connector did not start within {START_SECONDS:g} s:\n{self.tail()}")

    def crash(self) -> None:
        if self._process is not None:
            signal_child(self._process, signal.SIGKILL)
            self._process.wait()
            self._forget()

    def stop(self) -> int:
        """SIGTERM, ``STOP_SECONDS`` for it, then SIGUSR1 (its threads' stacks to the log) and SIGKILL."""
        if self._process is None:
            return 0
        code = stop_child(self._process, STOP_SECONDS, last_words=signal.SIGUSR1)
        self._forget()
        if code is None:
            stacks = f"its threads' stacks: {self.log_path}"
            raise ConnectorFailed(f"the connector did not stop within {STOP_SECONDS:g} s ({stacks})")
        return code

    def tail(self) -> str:
        return "\n".join(self._log_lines()[-20:])

    def _running_lines(self) -> list[str]:
        return [line for line in self._log_lines() if line.startswith("running account=")]

    def _log_lines(self) -> list[str]:
        try:
            return self.log_path.read_text(errors="replace").splitlines()
        except OSError:
            return []

    def _forget(self) -> None:
        self._process = None
        if self._log is not None:
            self._log.close()
            self._log = None


def end_left_workers(ledger: Ledger) -> list[str]:
    """End each worker group a dead connector left, once its leader is checked to be the recorded process."""
    with ledger.read() as connection:
        left = narration.live_processes(connection)
    ended = [(attempt_id, terminate_group(pgid, pid, started, grace_seconds=2.0))
             for attempt_id, pid, pgid, started in left]
    return [f"{attempt_id}: {result.outcome} ({result.reason})" for attempt_id, result in ended]


def look(ledger: Ledger, event_id: int) -> EventView:
    """One event as the ledger holds it now: its record, latest task and attempt, and notices."""
    with ledger.read() as connection:
        rows = narration.event_rows(connection, event_id)
    if rows is None:
        return EventView()
    task_id, pulled, ack_id, outcome, reply_id = rows.joined or (None, 0, None, "", None)
    attempt_state, stop_reason = rows.attempt or ("", "")
    intents = tuple(script.IntentView(id, kind, state, receipt_id, note, "\n".join(message_lines(body)))
                    for id, kind, state, receipt_id, note, body in rows.intents)
    state, reason, trigger = rows.record
    return EventView(state, reason, trigger, task_id, bool(pulled), ack_id, outcome or "", reply_id,
                     attempt_state, stop_reason, intents)  # fmt: skip


@dataclass
class Player:
    """Plays a scene against the running connector and tells each change as it happens, stamped
    with seconds since its request, until it settles or ``SCENE_SECONDS`` pass (a problem)."""

    world: DemoWorld
    link: StandInLink
    stage: Stage
    connector: ConnectorChild
    ledger: Ledger
    say: Callable[[str], None]
    parts: dict[int, str] = field(default_factory=dict)

    def play(self, scene: script.Scene) -> Played:
        project = self.world.projects[scene.project]
        reply = script.reply_place(scene, project.cards[scene.card], project.campfire)
        recording = reply.recording_id
        place_name = (f"{project.name}'s Campfire" if reply.kind is MessageKind.chat_line
                      else f'card "{self.link.card_title(recording) or recording}" in {project.name}')
        self.say(f"Scene {scene.number}: {scene.title}")
        if scene.in_flight:
            held = {"action": "create_then_delay", "method": "POST", "delay": IN_FLIGHT_HOLD_SECONDS}
            self.link.add_fault({**held, "path_contains": f"/chats/{recording}/lines"})
            self.say(f"  the stand-in is set to create the next line in {place_name} "
                     "and hold back its answer")  # fmt: skip
        first_name = self.world.agent_name.split()[0]
        mark = len(self.link.requests())
        mention = mention_markup(person_sgid(self.world.agent_id), first_name, scene.words)
        request_id = self.link.seed(reply.kind, recording, self.world.operator_id, mention)
        played = Played(scene, place_name, request_id, reply, time.monotonic())
        self._tell(played, f"{self.world.operator_name} on {place_name}: '@{first_name} {scene.words}'")
        played.event_id = self._event_of(request_id)
        if played.event_id is None:
            played.problems.append(f"scene {scene.number}: the connector never read the request")
            return played
        self.parts[played.event_id] = script.worker_part(scene, GUARD_DELAY)
        self.stage.write_parts(self.parts)
        played.expected = script.expectations(scene, played.event_id, request_id, reply)
        self._follow(played, played.event_id, mark)
        return played

    def _follow(self, played: Played, event_id: int, mark: int) -> None:
        """Tell each change until the scene settles; ``mark``: the record's length before it began.
        An in-flight scene's connector is killed once its notice is sending and the POST unanswered."""
        before, crashed, number = EventView(), False, played.scene.number
        in_flight, lines_path = played.scene.in_flight, f"/chats/{played.reply.recording_id}/lines"
        while time.monotonic() - played.started < SCENE_SECONDS:
            now = look(self.ledger, event_id)
            for line in script.narrate(before, now, format_duration(GUARD_DELAY)):
                self._tell(played, line)
            before = now
            if in_flight and not crashed and self._in_flight(now, lines_path, mark):
                self._crash(played, now)
                crashed = True
            elif script.settled(now):
                if in_flight and not crashed:
                    played.problems.append(f"scene {number}: the notice was never caught in flight")
                if in_flight:
                    posts = sum(lines_path in post.path for post in self.link.posts(mark))
                    told = f"the stand-in's record: {posts} POST{'s' * (posts != 1)} to {played.place_name}"
                    self._tell(played, f"{told} in this scene, the one in flight included")
                return
            else:
                time.sleep(LOOK_SECONDS)
        played.problems.append(f"scene {number}: not settled within {SCENE_SECONDS:g} s")
        self._tell(played, f"not settled within {SCENE_SECONDS:g} s; going on")

    def _in_flight(self, view: EventView, path: str, mark: int) -> bool:
        sending = any(intent.state == "sending" for intent in view.intents)
        return sending and any(path in post.path and post.status is None and post.fault == "create_then_delay"
                               for post in self.link.posts(mark))

    def _crash(self, played: Played, view: EventView) -> None:
        notice = next((intent for intent in view.intents if intent.state == "sending"), None)
        name = "notice" if notice is None else label(notice.kind)
        self._tell(played, f"the {name}'s POST reached Basecamp, which created it; no answer came back")
        pid = self.connector.pid
        self.connector.crash()
        self._tell(played, f"SIGKILL to the connector (pid {pid}) with the {name} in flight")
        running = self.connector.start()
        self._tell(played, f"connector restarted (pid {self.connector.pid}): {running}")

    def _tell(self, played: Played, line: str) -> None:
        """Stamp ``line`` with the scene's seconds; its further lines (a quote) are indented."""
        first, *rest = line.split("\n")
        stamped = [f"{time.monotonic() - played.started:5.1f}s  {first}", *(f"{'':8}{more}" for more in rest)]
        played.narration.extend(stamped)
        for text in stamped:
            self.say(f"  {text}")

    def _event_of(self, request_id: int) -> int | None:
        """The event the request made, once the connector has read it (by its recording's id)."""
        deadline = time.monotonic() + EVENT_SECONDS
        while time.monotonic() < deadline:
            with self.ledger.read() as connection:
                found = narration.event_of_recording(connection, request_id)
            if found is not None:
                return found
            time.sleep(LOOK_SECONDS / 2)
        return None


def run_demo(standin_file: Path | None, keep: bool, say: Callable[[str], None]) -> DemoOutcome:
    """The whole demo, every line meant for a person given to ``say`` as it happens."""
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


def _play(world: DemoWorld, link: StandInLink, stage: Stage, outcome: DemoOutcome,
          say: Callable[[str], None]) -> None:
    connector = ConnectorChild(stage.state, stage.log)
    ledger: Ledger | None = None
    try:
        running = connector.start()
        say(f"  connector  {running} (pid {connector.pid})")
        ledger = open_ledger_read_only(stage.state / LEDGER_NAME)
        player = Player(world, link, stage, connector, ledger, say)
        for scene in script.SCENES:
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
    outcome.posts = len(posts)
    outcome.verdict = script.judge(script.posted_messages(posts, link.account_id), expected)
    outcome.holdings = [(played.scene.number, name, link.messages(place))
                        for played in outcome.played for name, place in played.places()]  # fmt: skip
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
        f"{format_duration(script.RECONCILE_AFTER)} (shortened for the demo)")  # fmt: skip


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
        told = f"cannot read the stand-in's description {path}: {error.strerror}"
        raise UserError(told, EXIT_CONFIG) from None
    line = next((found for found in raw.splitlines() if found.strip()), b"")
    decoded = decode_json(line)  # the one bounded decoder: a binary file is refused, not a traceback
    if not isinstance(decoded, Decoded):
        told = f"{path} does not hold the JSON line `bin/connect standin --json` prints ({decoded.reason})"
        raise UserError(told, EXIT_CONFIG)
    return decoded.value
