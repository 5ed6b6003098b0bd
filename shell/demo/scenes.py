"""The demo's scenes, played one at a time against the running connector and narrated as
they happen.

Rules:
1. A scene is one request, the operator's comment or Campfire line mentioning the agent, seeded
   through the control API. The demo finds its event in the ledger and writes the worker's part
   for it (``shell.demo.script.worker_part``) before the worker can need it.
2. While it runs the ledger is read every ``LOOK_SECONDS`` and each change told
   (``shell.demo.narration.narrate``), stamped with seconds since the request. A scene ends when
   settled, or after ``SCENE_SECONDS`` (a problem).
3. An ``in_flight`` scene scripts the stand-in to create the next line and hold back the answer.
   Once that POST is unanswered and the notice ``sending``, the demo's own connector gets
   SIGKILL and is started again, and the scene waits for the restart to settle the notice; one
   never caught in flight is a problem.
4. Each scene answers what it calls for (``shell.demo.script.expectations``) and where its
   messages are; the verdict is not decided here."""

from __future__ import annotations

import html
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from core.destinations import MessageKind
from core.message_kinds import label
from core.timestamps import format_duration
from shell.basecamp.standin.api import MENTION_TYPE
from shell.basecamp.standin.world import person_sgid
from shell.demo.connector_child import ConnectorChild
from shell.demo.ledger_view import LedgerView
from shell.demo.narration import EventView, narrate, settled
from shell.demo.script import Scene, ScenePlace, expectations, reply_place, worker_part
from shell.demo.stage import GUARD_DELAY, DemoWorld, Stage
from shell.demo.standin_link import StandInLink
from shell.demo.verdict import Expected, Place

LOOK_SECONDS = 0.1
SCENE_SECONDS = 60.0
EVENT_SECONDS = 30.0
IN_FLIGHT_HOLD_SECONDS = 300.0


@dataclass
class Played:
    """A scene as it happened."""

    scene: Scene
    place_name: str
    request_id: int
    reply: Place
    event_id: int | None = None
    narration: list[str] = field(default_factory=list)
    expected: tuple[Expected, ...] = ()
    problems: list[str] = field(default_factory=list)

    def places(self) -> tuple[Place, ...]:
        """Where the scene's messages are: its reply place, and the boosts on its request."""
        return (self.reply, Place(MessageKind.boost, self.request_id))


class Player:
    def __init__(
        self,
        *,
        world: DemoWorld,
        link: StandInLink,
        stage: Stage,
        connector: ConnectorChild,
        ledger: LedgerView,
        say: Callable[[str], None],
    ) -> None:
        self.world, self.link, self.stage = world, link, stage
        self.connector, self.ledger, self._say = connector, ledger, say
        self._parts: dict[int, str] = {}

    def play(self, scene: Scene) -> Played:
        project = self.world.projects[scene.project]
        card = project.cards[scene.card]
        if scene.where is ScenePlace.campfire:
            kind, recording, place_name = (
                MessageKind.chat_line,
                project.campfire,
                f"{project.name}'s Campfire",
            )
        else:
            kind, recording = MessageKind.comment, card
            place_name = f'card "{self.link.card_title(card) or card}" in {project.name}'
        self._say(f"Scene {scene.number}: {scene.title}")
        if scene.in_flight:
            hold = {
                "action": "create_then_delay",
                "method": "POST",
                "path_contains": f"/chats/{recording}/lines",
            }
            self.link.add_fault({**hold, "delay": IN_FLIGHT_HOLD_SECONDS})
            self._say(
                f"  the stand-in is set to create the next line in {place_name} and hold back its answer"
            )
        first_name = self.world.agent_name.split()[0]
        mark = len(self.link.requests())
        request_id = self.link.seed(
            kind, recording, self.world.operator_id, self._mention(first_name, scene.words)
        )
        started = time.monotonic()
        played = Played(scene, place_name, request_id, reply_place(scene, card, project.campfire))
        self._tell(
            played, started, f"{self.world.operator_name} on {place_name}: '@{first_name} {scene.words}'"
        )
        event_id = self._event_of(request_id)
        if event_id is None:
            played.problems.append(f"scene {scene.number}: the connector never read the request")
            return played
        played.event_id = event_id
        self._parts[event_id] = worker_part(scene, GUARD_DELAY)
        self.stage.write_parts(self._parts)
        played.expected = expectations(scene, event_id, request_id, played.reply)
        self._follow(played, event_id, started, mark)
        return played

    # -- a scene as it happens (rules 2 and 3) -------------------------------------------------

    def _follow(self, played: Played, event_id: int, started: float, mark: int) -> None:
        """Tell each change until the scene settles; ``mark``: the record's length before it began."""
        before = EventView()
        crashed = False
        lines_path = f"/chats/{played.reply.recording_id}/lines"
        while time.monotonic() - started < SCENE_SECONDS:
            now = self.ledger.event(event_id)
            for line in narrate(before, now, format_duration(GUARD_DELAY)):
                self._tell(played, started, line)
            before = now
            if played.scene.in_flight and not crashed and self._in_flight(now, lines_path, mark):
                self._crash(played, event_id, started)
                crashed = True
                continue
            if settled(now):
                if played.scene.in_flight and not crashed:
                    played.problems.append(
                        f"scene {played.scene.number}: the notice was never caught in flight"
                    )
                if played.scene.in_flight:
                    posts = sum(lines_path in post.path for post in self.link.posts(mark))
                    told = f"the stand-in's record: {posts} POST{'s' * (posts != 1)} to {played.place_name}"
                    self._tell(played, started, f"{told} in this scene, the one in flight included")
                return
            time.sleep(LOOK_SECONDS)
        played.problems.append(f"scene {played.scene.number}: not settled within {SCENE_SECONDS:g} s")
        self._tell(played, started, f"not settled within {SCENE_SECONDS:g} s; going on")

    def _in_flight(self, view: EventView, path: str, mark: int) -> bool:
        """The notice is sending and its POST reached the stand-in, unanswered (rule 3)."""
        if not any(intent.state == "sending" for intent in view.intents):
            return False
        return any(
            path in post.path and post.status is None and post.fault == "create_then_delay"
            for post in self.link.posts(mark)
        )

    def _crash(self, played: Played, event_id: int, started: float) -> None:
        notice = next(
            (intent for intent in self.ledger.event(event_id).intents if intent.state == "sending"),
            None,
        )
        name = "notice" if notice is None else label(notice.kind)
        self._tell(
            played, started, f"the {name}'s POST reached Basecamp, which created it; no answer came back"
        )
        pid = self.connector.pid
        self.connector.crash()
        self._tell(played, started, f"SIGKILL to the connector (pid {pid}) with the {name} in flight")
        running = self.connector.start()
        self._tell(played, started, f"connector restarted (pid {self.connector.pid}): {running}")

    # -- helpers ---------------------------------------------------------------------------------

    def _tell(self, played: Played, started: float, line: str) -> None:
        """Stamp ``line`` with the scene's seconds; its further lines (a quote) are indented."""
        first, *rest = line.split("\n")
        stamped = [f"{time.monotonic() - started:5.1f}s  {first}", *(f"{'':8}{more}" for more in rest)]
        played.narration.extend(stamped)
        for text in stamped:
            self._say(f"  {text}")

    def _event_of(self, request_id: int) -> int | None:
        deadline = time.monotonic() + EVENT_SECONDS
        while time.monotonic() < deadline:
            found = self.ledger.event_of(request_id)
            if found is not None:
                return found
            time.sleep(LOOK_SECONDS / 2)
        return None

    def _mention(self, first_name: str, words: str) -> str:
        sgid = html.escape(person_sgid(self.world.agent_id))
        return (
            f'<div><bc-attachment sgid="{sgid}" content-type="{MENTION_TYPE}">@{html.escape(first_name)}'
            f"</bc-attachment> {html.escape(words)}</div>"
        )
