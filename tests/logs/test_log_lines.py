"""``core.log_lines`` with plain values: no secret survives ``redacted``, a JSON line is one object
on one ASCII line with the head first and the fields after, and a transition's words and fields."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from core.log_lines import HEAD, MIN_SECRET, REDACTED, json_line, redacted, transition

TOKEN_CHARACTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.~+/="
secrets_ = st.lists(st.text(TOKEN_CHARACTERS, min_size=MIN_SECRET, max_size=48), min_size=1, max_size=4)
prose = st.text(max_size=40)


@given(secrets_, st.lists(prose, min_size=1, max_size=5), st.data())
def test_no_secret_survives_redaction_wherever_and_however_often_it_occurs(
    secrets: list[str], around: list[str], data: st.DataObject
) -> None:
    pieces = [piece for text in around for piece in (text, data.draw(st.sampled_from(secrets)))]
    said = redacted("".join(pieces), secrets)
    assert not [secret for secret in secrets if secret in said]


def test_a_secret_that_holds_another_is_redacted_whole() -> None:
    assert redacted("x abcdefgh12345678 y", ["abcdefgh", "abcdefgh12345678"]) == f"x {REDACTED} y"


def test_a_string_too_short_to_be_a_secret_is_left_alone() -> None:
    assert redacted("a mention, again", ["a", "again"]) == "a mention, again"


@given(secrets_, prose, st.dictionaries(st.sampled_from(["event_id", "task", "kind", "state", "time"]),
                                        st.one_of(st.integers(), prose), max_size=4), st.data())
def test_a_json_line_is_one_object_on_one_line_with_no_secret(
    secrets: list[str], words: str, fields: dict[str, object], data: st.DataObject
) -> None:
    secret = data.draw(st.sampled_from(secrets))
    line = json_line(created=0.0, level="WARNING", logger="connector.run", message=f"{words}{secret}\n{words}",
                     fields={**fields, "attempt": f"att {secret}"}, secrets=secrets, exception=f"Trace\n{secret}")
    assert "\n" not in line
    assert line.isascii()
    said = json.loads(line)
    assert list(said)[:4] == list(HEAD)
    assert said["time"] == "1970-01-01T00:00:00.000Z"
    assert said["level"] == "warning"
    assert said["attempt"] == f"att {REDACTED}"
    assert not [found for found in secrets if found in line]


def test_a_field_never_takes_the_place_of_the_head() -> None:
    said = json.loads(json_line(created=0.0, level="INFO", logger="connector.run", message="seen",
                                fields={"message": "other", "time": 5, "event_id": 7}, secrets=()))
    assert said["message"] == "seen"
    assert said["time"] == "1970-01-01T00:00:00.000Z"
    assert said["event_id"] == 7


def test_a_transition_is_its_line_as_run_prints_it_and_its_ids_as_fields() -> None:
    seen = transition("dispatch", task=3, events=(5, 6))
    assert seen.line == "dispatch task=3 events=5,6"
    assert seen.fields == {"task": 3, "events": (5, 6)}
    heard = transition("seen", event=5, lane="live")
    assert heard.line == "seen event=5 lane=live"
    assert heard.fields == {"event_id": 5, "lane": "live"}
