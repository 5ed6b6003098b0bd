"""shell.demo.script's verdict: the demo's verdict from the stand-in's record of POSTs, with plain values."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.destinations import MessageKind
from shell.demo.script import (
    Expected,
    Place,
    Posted,
    RecordedPost,
    created,
    judge,
    place_of,
    posted_messages,
    verdict_line,
    words_of,
)

ACCOUNT = 5550001
CARD = Place(MessageKind.comment, 1069479000)
REQUEST = Place(MessageKind.boost, 1069479007)
CAMPFIRE = Place(MessageKind.chat_line, 1069479006)


def post(path: str, content: str, status: int | None = 201, fault: str | None = None) -> RecordedPost:
    return RecordedPost(path, json.dumps({"content": content}), status, fault)


# -- which POSTs posted a message ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "fault", "made"),
    [
        (201, None, True),
        (200, None, True),
        (None, "create_then_drop", True),
        (None, "create_then_delay", True),
        (201, "create_then_delay", True),
        (None, None, True),  # created, then the answer could not be written
        (403, None, False),
        (422, None, False),
        (500, "server_error", False),
        (403, "refuse", False),
        (429, "rate_limit", False),
        (None, "drop_without_create", False),
    ],
)
def test_a_post_posted_a_message_only_when_it_created_one(status: int | None, fault: str | None,
                                                           made: bool) -> None:  # fmt: skip
    assert created(RecordedPost("/5550001/recordings/1/comments.json", "{}", status, fault)) is made


def test_a_refused_post_is_not_a_posted_message() -> None:
    posts = [post(f"/{ACCOUNT}/recordings/1069479000/comments.json", "<div>notice</div>", status=403)]
    assert posted_messages(posts, ACCOUNT) == ()


def test_a_post_created_and_held_unanswered_is_a_posted_message() -> None:
    posts = [
        post(f"/{ACCOUNT}/chats/1069479006/lines.json", "notice", status=None, fault="create_then_delay")
    ]
    assert posted_messages(posts, ACCOUNT) == (Posted(CAMPFIRE, "notice"),)


# -- the place and the words --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "place"),
    [
        ("/5550001/recordings/1069479000/comments.json", CARD),
        ("/5550001/buckets/2085958501/recordings/1069479000/comments.json", CARD),
        ("/5550001/recordings/1069479007/boosts.json", REQUEST),
        ("/5550001/recordings/1069479007/boosts", REQUEST),
        ("/5550001/chats/1069479006/lines.json", CAMPFIRE),
        ("/5550001/buckets/2085958503/chats/1069479006/lines.json", CAMPFIRE),
        ("/5550002/recordings/1069479000/comments.json", None),  # another account
        ("/5550001/my/profile.json", None),
        ("/5550001/recordings/1069479000/comments.json/extra", None),
    ],
)
def test_a_posts_place_is_read_from_its_path_in_the_demos_account(path: str, place: Place | None) -> None:
    assert place_of(path, ACCOUNT) == place


def test_words_are_the_contents_text_and_nothing_when_the_body_has_none() -> None:
    assert words_of(json.dumps({"content": "<div>Done with <b>event</b> 7.</div>"})) == "Done with event 7."
    assert words_of("not json") == ""
    assert words_of(json.dumps(["content"])) == ""
    assert words_of(json.dumps({"content": 7})) == ""


# -- doubled, missing, unexpected ---------------------------------------------------------------


def test_the_same_words_posted_twice_at_one_place_are_doubled() -> None:
    notice = Posted(CARD, "holding reply for event 5")
    verdict = judge([notice, notice], [Expected(3, "the holding reply", CARD, ("holding reply",))])
    assert verdict.doubled == (notice,)
    assert verdict.missing == ()
    assert verdict.unexpected == ()
    assert not verdict.passed
    nobody_called_for = judge([notice, notice], [])
    assert nobody_called_for.doubled == (notice,), "doubled even where no scene calls for it"
    assert nobody_called_for.unexpected == (notice,)


def test_the_same_words_at_two_places_are_two_messages() -> None:
    elsewhere = Place(MessageKind.comment, 1069479001)
    verdict = judge(
        [Posted(CARD, "on it"), Posted(elsewhere, "on it")],
        [Expected(1, "reply", CARD), Expected(2, "reply", elsewhere)],
    )
    assert verdict.passed


def test_two_acknowledgements_of_one_request_in_different_words_are_doubled() -> None:
    guard, worker = Posted(REQUEST, "👀 received"), Posted(REQUEST, "on it")
    verdict = judge([guard, worker], [Expected(1, "an acknowledgement", REQUEST)])
    assert verdict.doubled == (worker,)
    assert verdict.unexpected == ()


def test_an_expectation_nothing_meets_is_missing() -> None:
    wanted = Expected(4, "the completion notice", CARD, ("Event 7: failed.",))
    verdict = judge([Posted(CARD, "Event 8: failed.")], [wanted])
    assert verdict.missing == (wanted,)
    assert verdict.unexpected == (Posted(CARD, "Event 8: failed."),)
    assert not verdict.passed


def test_a_message_nobody_called_for_is_unexpected() -> None:
    still_running = Posted(CARD, "Working on this as of 12:00 UTC")
    verdict = judge([still_running], [])
    assert verdict.unexpected == (still_running,)
    assert not verdict.passed


def test_a_message_is_counted_extra_once_whichever_makes_it_so() -> None:
    ack = Posted(REQUEST, "on it")
    verdict = judge([ack, ack, ack], [Expected(1, "an acknowledgement", REQUEST)])
    assert verdict.doubled == (ack, ack)
    assert len(verdict.posted) == 3


@given(
    st.lists(st.sampled_from(["a", "b", "c"]), max_size=12), st.sets(st.sampled_from(["a", "b", "c", "d"]))
)
def test_every_posted_message_is_met_doubled_or_unexpected_exactly_once(words: list[str],
                                                                        wanted: set[str]) -> None:  # fmt: skip
    expected = [Expected(1, word, CARD, (word,)) for word in sorted(wanted)]
    verdict = judge([Posted(CARD, word) for word in words], expected)
    met = len(expected) - len(verdict.missing)
    assert met + len(verdict.doubled) + len(verdict.unexpected) == len(words)
    assert verdict.passed == (sorted(words) == sorted(wanted))


# -- the line ----------------------------------------------------------------------------------


def test_the_line_counts_by_kind_and_passes_only_with_nothing_doubled_missing_or_unexpected() -> None:
    wanted = [Expected(1, "ack", REQUEST), Expected(1, "reply", CARD)]
    passed = judge([Posted(REQUEST, "on it"), Posted(CARD, "Done with event 1.")], wanted)
    assert verdict_line(passed) == (
        "verdict: 2 messages posted (1 boost, 1 comment), messages doubled: 0, missing: 0, "
        "unexpected: 0 -- PASS"
    )
    failed = judge([Posted(REQUEST, "on it")], wanted)
    assert verdict_line(failed).endswith("missing: 1, unexpected: 0 -- FAIL")


def test_a_scene_that_did_not_happen_fails_the_line_even_when_the_messages_pass() -> None:
    verdict = judge([], [])
    assert verdict_line(verdict).endswith("-- PASS")
    assert verdict_line(verdict, problems=1).endswith("unexpected: 0, scene problems: 1 -- FAIL")
