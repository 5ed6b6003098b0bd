"""The demo's five scenes as data, and the messages each one calls for.

Rules:
1. The scenes run in order, one at a time, in the stand-in's demo world (the first two projects
   routed, the third not); each is one request by the operator mentioning the agent, on a place
   of its own, so no two share a conversation or a destination.
2. A scene with a worker names the demo worker's part for its event (``shell.demo.worker``
   rule 3); a slow part outlasts the guard delay, so the guard goes out first. A scene in the
   unrouted project has no worker.
3. ``in_flight`` scenes have their notice's POST created and its answer held back, and the
   connector SIGKILLed while it waits; the restart must adopt the message by listing.
4. ``expectations`` names every message a scene calls for, at its place: an acknowledgement (any
   boost on the request; exactly the guard's for a slow worker), the worker's reply, a holding
   reply in the connector's words, a completion notice naming the event and the redispatch
   command. Nothing else is called for."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from enum import StrEnum

from core import templates
from core.destinations import MessageKind
from core.text import message_text
from shell.demo.verdict import Expected, Place

SLOW_WORKER_MARGIN = timedelta(seconds=4)
"""How much longer than the guard delay the slow worker waits before it pulls."""


class ScenePlace(StrEnum):
    card = "card"  # a comment on one of the project's cards
    campfire = "campfire"  # a line in the project's Campfire


class Part(StrEnum):
    """What the demo worker does for a scene's event (rule 2); ``none``: no worker runs."""

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
    card: int  # the card, by position in its project (for ``ScenePlace.card``)
    words: str  # what the operator says after mentioning the agent
    part: Part
    in_flight: bool = False


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
    """The part as the demo worker reads it (rule 2): ``slow:<seconds>`` carries its wait."""
    if scene.part is Part.slow:
        return f"slow:{(guard_delay + SLOW_WORKER_MARGIN).total_seconds():g}"
    return scene.part.value


def reply_place(scene: Scene, card_id: int, campfire_id: int) -> Place:
    """Where the scene's replies and notices go: the card's comments, or the Campfire."""
    if scene.where is ScenePlace.campfire:
        return Place(MessageKind.chat_line, campfire_id)
    return Place(MessageKind.comment, card_id)


def expectations(scene: Scene, event_id: int, request_id: int, reply: Place) -> tuple[Expected, ...]:
    """Every message ``scene`` calls for (rule 4). ``request_id`` is the operator's comment or
    line (boosts go on it); ``reply`` is the scene's ``reply_place``."""
    acknowledgement = Place(MessageKind.boost, request_id)
    worker_reply = Expected(scene.number, "the worker's reply", reply, (f"Done with event {event_id}",))
    match scene.part:
        case Part.answer:
            return (Expected(scene.number, "an acknowledgement", acknowledgement), worker_reply)
        case Part.slow:
            return (
                Expected(scene.number, "the guard's acknowledgement", acknowledgement,
                         (templates.GUARD_ACKNOWLEDGEMENT,)),
                worker_reply,
            )  # fmt: skip
        case Part.give_up:
            return (
                Expected(scene.number, "an acknowledgement", acknowledgement),
                Expected(
                    scene.number, "the completion notice", reply,
                    (f"Event {event_id}: failed.", f"{templates.REDISPATCH_COMMAND} {event_id}",
                     templates.SIGNATURE),
                ),
            )  # fmt: skip
        case Part.none:
            words = message_text(templates.render(templates.holding_reply(event_id), reply.kind))
            return (Expected(scene.number, "the holding reply", reply, (words,)),)
