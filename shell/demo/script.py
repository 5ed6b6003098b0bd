"""The demo's script, as plain values: its five scenes, what it tells as one happens, the messages each
calls for, and the verdict the stand-in's own record of POSTs gives.

A scene is one request by the operator mentioning the agent, on a place of its own, in the stand-in's demo
world: the first two projects are routed, the third is not, so a scene there has no worker. The narration is
read, never inferred: each line names a change between two looks at one event in the ledger, in the order
things happen to it. The judge is the stand-in's record, never the ledger: a POST posted a message when
answered 2xx, or created and left unanswered (on purpose, or because its answer could not be written). A
message is doubled when its words were already posted at its place or it meets an expectation an earlier one
met, counted once either way; an expectation nothing met is missing; a message neither doubled nor expected
is unexpected. The demo passes only when all three are zero and every scene happened as scripted.
"""

from __future__ import annotations

import json
import re
import textwrap
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import timedelta
from enum import StrEnum
from typing import Any

from core import notes, templates
from core.destinations import MessageKind
from core.message_kinds import label
from core.text import message_text

GUARD_DELAY = timedelta(seconds=8)
STILL_RUNNING = timedelta(minutes=10)  # longer than the demo: no still-running notice is called for
RECONCILE_AFTER = timedelta(seconds=2)
SLOW_WORKER_MARGIN = timedelta(seconds=4)  # how much longer than the guard delay the slow worker waits
MOVING_STATES = frozenset({"", "seen", "admitted", "queued", "dispatched"})
FINAL_INTENT_STATES = frozenset({"sent", "canceled", "indeterminate", "abandoned"})
AFTER_THE_WORKER = frozenset({"dispatched", "completed"})  # told after what the worker did
ATTEMPT_NOTICES = frozenset({"still_running", "completion"})  # told after the attempt's end
CREATING_FAULTS = frozenset({"create_then_drop", "create_then_delay"})
NOTHING_CREATED_FAULTS = frozenset({"refuse", "server_error", "rate_limit", "drop_without_create"})
_PLACE = re.compile(r"/(\d+)/(?:buckets/\d+/)?(?:recordings/(\d+)/(comments|boosts)|chats/(\d+)/lines)"
                    r"(?:\.json)?")
_PATH_KINDS = {"comments": MessageKind.comment, "boosts": MessageKind.boost}
_DESCRIBED = {MessageKind.boost: "boosts on", MessageKind.comment: "comments on",
              MessageKind.chat_line: "lines of Campfire"}  # fmt: skip


@dataclass(frozen=True, slots=True)
class Place:
    """Where a message is: its kind and the recording (for a chat line, the Campfire) it is on."""

    kind: MessageKind
    recording_id: int

    def describe(self) -> str:
        return f"{_DESCRIBED[self.kind]} {self.recording_id}"


class ScenePlace(StrEnum):
    card = "card"  # a comment on one of the project's cards
    campfire = "campfire"  # a line in the project's Campfire


class Part(StrEnum):
    """What the demo worker does for a scene's event; ``none``: no worker runs."""

    answer = "answer"
    slow = "slow"
    give_up = "give_up"
    none = "none"


@dataclass(frozen=True, slots=True)
class Scene:
    number: int
    title: str
    project: int  # the world's project, by position: 0 and 1 have routes, 2 has none
    where: ScenePlace
    card: int  # the card, by position in its project
    words: str  # what the operator says after mentioning the agent
    part: Part
    in_flight: bool = False  # its notice's POST is created, the answer held, the connector killed


SCENES: tuple[Scene, ...] = (
    Scene(1, "a mention answered by the worker", 0, ScenePlace.card, 0,
          "the signup button says Sgin up, please fix it", Part.answer),
    Scene(2, "a slow worker, so the guard boost goes out", 0, ScenePlace.card, 1,
          "please draft the release notes", Part.slow),
    Scene(3, "a mention in a project with no route, so the holding reply goes out", 2, ScenePlace.card, 0,
          "could you look at these old ideas?", Part.none),
    Scene(4, "a worker that fails, so the completion notice names the event and the redispatch command",
          1, ScenePlace.card, 0, "the settings screen crashes on open", Part.give_up),
    Scene(5, "the connector killed with SIGKILL while a notice is in flight, then restarted", 2,
          ScenePlace.campfire, 0, "anyone for a clean-up of the archive?", Part.none, in_flight=True),
)  # fmt: skip


def worker_part(scene: Scene, guard_delay: timedelta) -> str:
    """The part as the demo worker reads it; a slow one outlasts the guard delay."""
    if scene.part is Part.slow:
        return f"slow:{(guard_delay + SLOW_WORKER_MARGIN).total_seconds():g}"
    return scene.part.value


def reply_place(scene: Scene, card_id: int, campfire_id: int) -> Place:
    if scene.where is ScenePlace.campfire:
        return Place(MessageKind.chat_line, campfire_id)
    return Place(MessageKind.comment, card_id)


def expectations(scene: Scene, event_id: int, request_id: int, reply: Place) -> tuple[Expected, ...]:
    """Every message ``scene`` calls for: its boosts go on the request, the rest at ``reply``."""

    def wanted(what: str, place: Place, *fragments: str) -> Expected:
        return Expected(scene.number, what, place, fragments)

    boost = Place(MessageKind.boost, request_id)
    done = wanted("the worker's reply", reply, f"Done with event {event_id}")
    match scene.part:
        case Part.answer:
            return (wanted("an acknowledgement", boost), done)
        case Part.slow:
            return (wanted("the guard's acknowledgement", boost, templates.GUARD_ACKNOWLEDGEMENT), done)
        case Part.give_up:
            named = (f"Event {event_id}: failed.", f"{templates.REDISPATCH_COMMAND} {event_id}")
            notice = wanted("the completion notice", reply, *named, templates.SIGNATURE)
            return (wanted("an acknowledgement", boost), notice)
        case Part.none:
            words = message_text(templates.render(templates.holding_reply(event_id), reply.kind))
            return (wanted("the holding reply", reply, words),)


@dataclass(frozen=True, slots=True)
class IntentView:
    id: int
    kind: str
    state: str
    receipt_id: int | None = None
    note: str = ""
    words: str = ""


@dataclass(frozen=True, slots=True)
class EventView:
    """What the ledger says of one event and the task it joined; empty before it is seen."""

    state: str = ""
    reason: str = ""
    trigger: str = ""
    task_id: int | None = None
    pulled: bool = False
    ack_id: int | None = None
    outcome: str = ""
    reply_id: int | None = None
    attempt_state: str = ""
    stop_reason: str = ""
    intents: tuple[IntentView, ...] = ()


def abbreviate(words: str, width: int = 72) -> str:
    """One line of at most ``width`` characters, an ellipsis marking a cut."""
    line = " ".join(words.split())
    return line if len(line) <= width else line[: width - 1].rstrip() + "…"


def quote(words: str, width: int = 88) -> str:
    """Words told whole, quoted and wrapped, each of their own lines starting a line."""
    lines = f"'{words}'".split("\n")
    return "\n".join(wrapped for line in lines for wrapped in textwrap.wrap(line, width)) or "''"


def settled(view: EventView) -> bool:
    """The record has left the moving states, its attempt has ended, and every notice is final."""
    return (view.state not in MOVING_STATES and view.attempt_state in ("", "ended")
            and all(intent.state in FINAL_INTENT_STATES for intent in view.intents))


def narrate(before: EventView, after: EventView, guard_delay: str) -> tuple[str, ...]:
    """The lines that tell what changed from ``before`` to ``after``; a change undone between the
    two looks is not told."""
    lines: list[str] = []
    moved = after.state != before.state and after.state
    earlier = {intent.id: intent for intent in before.intents}

    def notices(attempts: bool) -> None:
        for intent in after.intents:
            if (intent.kind in ATTEMPT_NOTICES) == attempts:
                lines.extend(_intent(earlier.get(intent.id), intent, guard_delay))

    if moved and after.state not in AFTER_THE_WORKER:
        lines.append(_record(after))
    if after.task_id is not None and before.task_id is None:
        lines.append(f"the dispatcher started a worker (task {after.task_id})")
    if after.pulled and not before.pulled:
        guarded = any(intent.kind == "guard_ack" and intent.state == "sent" for intent in after.intents)
        said = ": guard_acknowledged, so it will not acknowledge again" if guarded else ""
        lines.append(f"the worker pulled its instruction (get_dispatch){said}")
    notices(attempts=False)
    if after.ack_id is not None and before.ack_id is None:
        lines.append(f"the event records the worker's acknowledgement, message {after.ack_id}")
    if after.outcome and not before.outcome:
        given = any(intent.kind == "worker_reply" for intent in after.intents)
        reply = (f"its reply, message {after.reply_id}" if after.reply_id is not None
                 else "its reply, for the connector to post" if given else "no reply")
        lines.append(f"the worker reported '{after.outcome}' with {reply} (complete_dispatch)")
    if moved and after.state in AFTER_THE_WORKER:
        lines.append(_record(after))
    if after.attempt_state == "ended" and before.attempt_state != "ended":
        lines.append(f"the worker's attempt ended: {after.stop_reason or 'stopped'}")
    notices(attempts=True)
    return tuple(lines)


def _record(view: EventView) -> str:
    reason = f" ({view.reason})" if view.reason else ""
    match view.state:
        case "seen":
            return "the connector read the request from the event feed"
        case "admitted" | "queued" | "discarded":
            trigger = f" ({view.trigger})" if view.trigger and not view.reason else reason
            return f"verdict: {view.state}{trigger}"
        case "blocked":
            return f"verdict: blocked{reason}: the project has no route, so no worker runs"
        case "dispatched" | "completed":
            return f"the record is {view.state}"
        case _:
            return f"the record is {view.state}{reason}"


def _intent(before: IntentView | None, after: IntentView, guard_delay: str) -> list[str]:
    """A notice by its kind's label: written, then each state it is seen in."""
    name = label(after.kind)
    lines = []
    if before is None and after.kind == "guard_ack":
        lines.append(f"guard armed: a '{after.words}' boost is due in {guard_delay} unless the worker "
                     "acknowledges first")  # fmt: skip
    elif before is None:
        lines.append(f"{name} written to the outbox")
    if after.state == (before.state if before is not None else "pending"):
        return lines
    match after.state:
        case "sending":
            lines.append(f"{name} claimed; its one POST is on its way")
        case "sent" if after.note == notes.ADOPTED:
            lines.append(f"{name} adopted by reconciliation: listing found it as message {after.receipt_id}, "
                         "so it is not posted again")  # fmt: skip
        case "sent":
            lines.append(f"{name} posted, message {after.receipt_id}:\n" + quote(after.words))
        case "canceled" if after.note == notes.CANCELED_BY_GET_DISPATCH:
            lines.append(f"{name} stood down: the worker pulled its instruction first")
        case "canceled":
            lines.append(f"{name} canceled: {after.note}")
        case "indeterminate":
            lines.append(f"{name} indeterminate: {after.note}; a person decides (bin/outbox-resolve)")
        case _:
            lines.append(f"{name} {after.state}")
    return lines


@dataclass(frozen=True, slots=True)
class RecordedPost:
    """One POST as the stand-in recorded it; ``status`` None: it was never answered."""

    path: str
    body: str
    status: int | None
    fault: str | None = None


@dataclass(frozen=True, slots=True)
class Posted:
    place: Place
    words: str


@dataclass(frozen=True, slots=True)
class Expected:
    """A message a scene calls for: at ``place``, with every one of ``fragments`` in its words."""

    scene: int
    label: str
    place: Place
    fragments: tuple[str, ...] = ()

    def met_by(self, posted: Posted) -> bool:
        return posted.place == self.place and all(fragment in posted.words for fragment in self.fragments)


@dataclass(frozen=True, slots=True)
class DemoTally:
    posted: tuple[Posted, ...]
    doubled: tuple[Posted, ...]
    missing: tuple[Expected, ...]
    unexpected: tuple[Posted, ...]

    @property
    def passed(self) -> bool:
        return not (self.doubled or self.missing or self.unexpected)

    def by_kind(self) -> dict[str, int]:
        counted = Counter(posted.place.kind.value for posted in self.posted)
        return {kind.value: counted[kind.value] for kind in MessageKind if counted[kind.value]}


def created(post: RecordedPost) -> bool:
    if post.fault in NOTHING_CREATED_FAULTS:
        return False
    if post.status is None:
        return post.fault is None or post.fault in CREATING_FAULTS
    return 200 <= post.status < 300


def place_of(path: str, account_id: int) -> Place | None:
    """The place a POST's path names in ``account_id``, or None."""
    found = _PLACE.fullmatch(path)
    if found is None or int(found.group(1)) != account_id:
        return None
    if found.group(4) is not None:
        return Place(MessageKind.chat_line, int(found.group(4)))
    return Place(_PATH_KINDS[found.group(3)], int(found.group(2)))


def words_of(body: str) -> str:
    """The text of a POST body's ``content`` ('' when the body holds none)."""
    try:
        content = json.loads(body).get("content")
    except (ValueError, AttributeError):
        return ""
    return message_text(content) if isinstance(content, str) else ""


def posted_messages(posts: Iterable[RecordedPost], account_id: int) -> tuple[Posted, ...]:
    """The messages the recorded POSTs created, in the order they arrived."""
    found = ((place_of(post.path, account_id), post) for post in posts if created(post))
    return tuple(Posted(place, words_of(post.body)) for place, post in found if place is not None)


def judge(posted: Iterable[Posted], expected: Iterable[Expected]) -> DemoTally:
    expectations, every = tuple(expected), tuple(posted)
    seen: set[Posted] = set()
    met: set[Expected] = set()
    doubled, unexpected = [], []
    for message in every:
        expectation = next((wanted for wanted in expectations if wanted.met_by(message)), None)
        if message in seen or (expectation is not None and expectation in met):
            doubled.append(message)
        elif expectation is None:
            unexpected.append(message)
        else:
            met.add(expectation)
        seen.add(message)
    missing = tuple(wanted for wanted in expectations if wanted not in met)
    return DemoTally(every, tuple(doubled), missing, tuple(unexpected))


def verdict_line(verdict: DemoTally, problems: int = 0) -> str:
    """The demo's last line; ``problems``: the scenes that did not happen as scripted."""
    kinds = ", ".join(f"{count} {kind}" for kind, count in verdict.by_kind().items())
    scenes = f", scene problems: {problems}" if problems else ""
    passed = verdict.passed and not problems
    return (f"verdict: {len(verdict.posted)} messages posted ({kinds or 'none'}), "
            f"messages doubled: {len(verdict.doubled)}, missing: {len(verdict.missing)}, "
            f"unexpected: {len(verdict.unexpected)}{scenes} -- {'PASS' if passed else 'FAIL'}")


@dataclass(frozen=True, slots=True)
class Said:
    id: int
    author: str
    content: str


@dataclass
class Played:
    scene: Scene
    place_name: str
    request_id: int
    reply: Place
    started: float
    event_id: int | None = None
    narration: list[str] = field(default_factory=list)
    expected: tuple[Expected, ...] = ()
    problems: list[str] = field(default_factory=list)

    def places(self) -> tuple[tuple[str, Place], ...]:
        """Where the scene's messages are, by name: its reply place, and the boosts on its request."""
        boosts = Place(MessageKind.boost, self.request_id)
        return ((self.place_name, self.reply), ("boosts on the request", boosts))


@dataclass
class DemoOutcome:
    """The run as it happened, and the verdict on the POSTs the stand-in recorded since it began."""

    standin: str = ""
    directory: str = ""
    kept: bool = False
    played: list[Played] = field(default_factory=list)
    posts: int = 0
    verdict: DemoTally = DemoTally((), (), (), ())
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
