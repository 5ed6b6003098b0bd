"""``core.worker_words`` with plain values: where a worker's words go, their body, key and bounds."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.destinations import MessageKind
from core.dispatch_tools import BOOST_LIMIT, MAX_ACK_CHARACTERS
from core.dispatch_tools.instruction import InstructionRecord
from core.edges import RecordState
from core.intent_kinds import IntentKind
from core.worker_words import (
    DROPPED,
    acknowledgement,
    note,
    note_key,
    reply,
)

CARD = InstructionRecord(
    event_id=5, state=RecordState.dispatched, event_type="comment.created", trigger="mentioned", bucket_id=10,
    recording_id=20, recording_type="Comment", recording_url="", reply_kind="comment", reply_recording_id=30,
    requester_id=7, acknowledge=True, snapshot=None, reply_bucket_id=10,
)  # fmt: skip
CAMPFIRE = replace(CARD, reply_kind="chat_line", reply_recording_id=40)


def test_a_few_words_are_a_boost_on_the_recording_that_asked() -> None:
    message = acknowledgement(CARD, 3, "  👀 on it ").unwrap()
    assert (message.kind, message.message_kind, message.recording_id, message.body) == (
        IntentKind.worker_ack, MessageKind.boost, 20, "👀 on it",
    )
    assert message.key == "worker_ack:task:3:event:5"


def test_a_longer_acknowledgement_goes_to_the_reply_destination_as_a_comment_or_a_plain_line() -> None:
    text = "x" * (BOOST_LIMIT + 1)
    at_card = acknowledgement(CARD, 3, text).unwrap()
    assert (at_card.message_kind, at_card.recording_id, at_card.body) == (MessageKind.comment, 30, f"<div>{text}</div>")
    in_campfire = acknowledgement(CAMPFIRE, 3, "**on** it, looking now").unwrap()
    assert (in_campfire.message_kind, in_campfire.recording_id, in_campfire.body) == (
        MessageKind.chat_line, 40, "**on** it, looking now",
    )
    assert acknowledgement(CARD, 3, "x" * (MAX_ACK_CHARACTERS + 1)).failure().kind == "invalid_message"


def test_words_with_nowhere_to_go_are_refused() -> None:
    nowhere = replace(CARD, reply_kind="", reply_recording_id=0)
    assert reply(nowhere, 3, "Done").failure().message == "this event has no reply destination"
    assert note(nowhere, 3, "A question").failure().kind == "invalid_message"


def test_the_reply_is_one_per_task_row_and_a_note_one_per_text() -> None:
    assert reply(CARD, 3, "Done").unwrap().key == "worker_reply:task:3:event:5"
    first, again, other = (note(CARD, 3, text).unwrap() for text in ("Which one?", " Which one? ", "And this?"))
    assert first.key == again.key != other.key


@given(st.text(min_size=1, max_size=200))
def test_a_notes_key_is_its_bodys(text: str) -> None:
    message = note(CARD, 3, text).value_or(None)
    if "".join(character for character in text if ord(character) not in DROPPED).strip():
        assert message is not None
        assert message.key == note_key(3, 5, message.body)
    else:
        assert message is None, "no words, no note"


CONTROLS = {"ESC": "\x1b[2J\x1b]0;owned\x07", "NUL": "\x00", "CR": "\r", "BS": "\x08", "DEL": "\x7f",
            "C1 CSI": "\x9b31m", "NEL": "\x85", "RLO": "\u202e", "LRE": "\u202a", "PDF": "\u202c",
            "RLI": "\u2067", "PDI": "\u2069", "RLM": "\u200f", "LRM": "\u200e", "ALM": "\u061c"}


@pytest.mark.parametrize("control", list(CONTROLS.values()), ids=list(CONTROLS))
def test_controls_and_bidi_overrides_are_dropped_from_every_kind_of_message(control: str) -> None:
    words = f"ok{control}done"
    kept = "".join(character for character in words if character.isprintable())  # what a terminal shows
    dropped = set(words) - set(kept)
    assert acknowledgement(CARD, 3, f"ok{control}").unwrap().body == kept.removesuffix("done")  # a boost
    long = f"{words} {'x' * BOOST_LIMIT}"
    assert acknowledgement(CAMPFIRE, 3, long).unwrap().body == f"{kept} {'x' * BOOST_LIMIT}"
    assert reply(CAMPFIRE, 3, words).unwrap().body == kept
    assert note(CAMPFIRE, 3, words).unwrap().body == kept
    for spoken in (reply(CARD, 3, words), note(CARD, 3, words), acknowledgement(CARD, 3, long)):
        body = spoken.unwrap().body
        assert body.startswith("<div>")
        assert not dropped & set(body), repr(body)


def test_newline_and_tab_are_kept_and_words_of_controls_alone_are_no_words() -> None:
    assert reply(CAMPFIRE, 3, "a\tb\r\nc").unwrap().body == "a\tb\nc"
    assert note(CARD, 3, "\x1b\u202e\x07 ").failure().message == "the text has no words"
    assert acknowledgement(CARD, 3, "\u2066\x9b").failure().message == "text has no words"


@given(st.text(max_size=300), st.sampled_from([CARD, CAMPFIRE]))
def test_no_body_holds_a_dropped_character(text: str, record: InstructionRecord) -> None:
    for spoken in (acknowledgement(record, 3, text), reply(record, 3, text), note(record, 3, text)):
        message = spoken.value_or(None)
        assert message is None or not any(ord(character) in DROPPED for character in message.body)
