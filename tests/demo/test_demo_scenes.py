"""shell.demo.script: the five scenes and what each calls for, with plain values."""

from __future__ import annotations

from datetime import timedelta

from core import templates
from core.destinations import MessageKind
from core.text import message_text
from shell.demo.script import (
    SCENES,
    Part,
    Place,
    Posted,
    ScenePlace,
    expectations,
    judge,
    reply_place,
    worker_part,
)

EVENT, REQUEST, CARD, CAMPFIRE = 7000000003, 1069479010, 1069479001, 1069479006


def test_five_scenes_in_the_issues_order_each_on_a_place_of_its_own() -> None:
    assert [scene.number for scene in SCENES] == [1, 2, 3, 4, 5]
    assert [scene.part for scene in SCENES] == [Part.answer, Part.slow, Part.none, Part.give_up, Part.none]
    places = [(scene.project, scene.where, scene.card) for scene in SCENES]
    assert len(set(places)) == len(places), "no two scenes share a conversation or a destination"
    assert [scene.in_flight for scene in SCENES] == [False, False, False, False, True]


def test_workers_run_only_in_the_routed_projects_and_requests_there_get_none() -> None:
    for scene in SCENES:
        assert (scene.project < 2) == (scene.part is not Part.none), scene.title


def test_the_slow_worker_waits_past_the_guard_delay() -> None:
    slow = next(scene for scene in SCENES if scene.part is Part.slow)
    for delay in (timedelta(seconds=1), timedelta(seconds=4), timedelta(seconds=30)):
        part = worker_part(slow, delay)
        assert part.startswith("slow:")
        assert float(part.removeprefix("slow:")) > delay.total_seconds() + 1, "past the guard and its tick"
    assert worker_part(SCENES[0], timedelta(seconds=4)) == "answer"
    assert worker_part(SCENES[3], timedelta(seconds=4)) == "give_up"


def test_replies_go_to_the_card_or_the_campfire() -> None:
    assert reply_place(SCENES[0], CARD, CAMPFIRE) == Place(MessageKind.comment, CARD)
    assert reply_place(SCENES[4], CARD, CAMPFIRE) == Place(MessageKind.chat_line, CAMPFIRE)
    assert SCENES[4].where is ScenePlace.campfire


def test_an_answered_request_calls_for_one_acknowledgement_in_any_words_and_the_workers_reply() -> None:
    reply = Place(MessageKind.comment, CARD)
    wanted = expectations(SCENES[0], EVENT, REQUEST, reply)
    for ack in ("on it", templates.GUARD_ACKNOWLEDGEMENT):
        assert judge([Posted(Place(MessageKind.boost, REQUEST), ack),
                      Posted(reply, f"Done with event {EVENT}.")], wanted).passed  # fmt: skip


def test_a_slow_worker_calls_for_the_guards_acknowledgement_and_no_other() -> None:
    reply = Place(MessageKind.comment, CARD)
    wanted = expectations(SCENES[1], EVENT, REQUEST, reply)
    done = Posted(reply, f"Done with event {EVENT}.")
    boost = Place(MessageKind.boost, REQUEST)
    assert judge([Posted(boost, templates.GUARD_ACKNOWLEDGEMENT), done], wanted).passed
    workers_own = judge([Posted(boost, "on it"), done], wanted)
    assert [wanted.label for wanted in workers_own.missing] == ["the guard's acknowledgement"]


def test_a_holding_reply_is_called_for_in_exactly_the_connectors_words() -> None:
    for scene, reply in ((SCENES[2], Place(MessageKind.comment, CARD)),
                         (SCENES[4], Place(MessageKind.chat_line, CAMPFIRE))):  # fmt: skip
        (wanted,) = expectations(scene, EVENT, REQUEST, reply)
        words = message_text(templates.render(templates.holding_reply(EVENT), reply.kind))
        assert wanted.met_by(Posted(reply, words))
        assert not wanted.met_by(Posted(reply, words.replace(str(EVENT), "7000000009")))


def test_a_failed_worker_calls_for_a_completion_notice_naming_the_event_and_the_redispatch_command() -> None:
    reply = Place(MessageKind.comment, CARD)
    notice = next(wanted for wanted in expectations(SCENES[3], EVENT, REQUEST, reply)
                  if wanted.label == "the completion notice")  # fmt: skip
    words = (f"Task 3 ended: the worker failed. Event {EVENT}: failed. Needs a person: "
             f"bin/connect redispatch {EVENT} Attempt att_0123 · automatic notice from the Basecamp connector")  # fmt: skip
    assert notice.met_by(Posted(reply, words))
    assert not notice.met_by(Posted(reply, words.replace(f"redispatch {EVENT}", "redispatch")))
    assert not notice.met_by(Posted(reply, words.replace("failed.", "succeeded.")))
