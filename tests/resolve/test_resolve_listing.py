"""What a person sees: `list` (what waits for them), `show` (one intent, and what they may do with
it), in words and as JSON, and `--help` that teaches the rule."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core import notes
from core.timestamps import format_timestamp
from shell.cli.resolve import human_age, main
from shell.clock import FakeClock
from shell.errors import EXIT_OK
from tests.resolve.resolve_world import Intents, Run

SUMMARY_FIELDS = {
    "id", "kind", "state", "refused", "waits_for_person", "event_id", "attempt_id", "destination", "note",
    "age_seconds",
}
DETAIL_FIELDS = {
    "id", "intent_key", "kind", "state", "refused", "waits_for_person", "event_id", "task_id", "attempt_id",
    "occurrence", "destination", "body", "created_at", "not_before", "sending_at", "finished_at", "receipt_id",
    "note", "resolved_by", "reconcile_failures", "reconcile_at", "age_seconds", "decisions",
}


def table_rows(out: str) -> list[str]:
    """The lines of a text listing that show an intent."""
    return [line for line in out.splitlines() if line.split()[1:2] == ["guard_ack"]]


def test_nothing_waiting_is_said_in_a_friendly_line(intents: Intents, run: Run) -> None:
    intents.sent(1)
    intents.pending()
    ran = run("list")
    assert (ran.code, ran.out, ran.err) == (EXIT_OK, "nothing waits for a person\n", "")


def test_nothing_waiting_is_an_empty_json_array(intents: Intents, run: Run) -> None:
    intents.canceled_by_get_dispatch()
    ran = run("--json", "list")
    assert ran.code == EXIT_OK
    assert json.loads(ran.out) == []


def test_the_list_holds_indeterminate_and_refused_intents_only(
    intents: Intents, run: Run, clock: FakeClock
) -> None:
    intents.sent(1)
    indeterminate = intents.indeterminate()
    intents.pending()
    intents.canceled_by_get_dispatch()
    intents.abandoned()
    refused = intents.refused()
    clock.advance(180)
    ran = run("list")
    assert ran.code == EXIT_OK
    lines = ran.out.splitlines()
    assert lines[0].split() == ["ID", "KIND", "STATE", "EVENT", "ATTEMPT", "DESTINATION", "AGE", "NOTE"]
    assert lines[1].split()[:3] == [str(indeterminate), "guard_ack", "indeterminate"]
    assert "3 min" in lines[1]
    assert notes.matching_messages(2) in lines[1]
    assert "boost on recording" in lines[1]
    assert lines[2].split()[:3] == [str(refused), "guard_ack", "refused"]
    assert notes.REFUSED_NOTE in lines[2]
    assert len(table_rows(ran.out)) == 2
    assert "show ID" in ran.out


def test_the_json_list_names_each_field(intents: Intents, run: Run, clock: FakeClock) -> None:
    indeterminate = intents.indeterminate()
    refused = intents.refused()
    clock.advance(7200)
    listed = json.loads(run("list", "--json").out)
    assert [set(entry) for entry in listed] == [SUMMARY_FIELDS, SUMMARY_FIELDS]
    first, second = listed
    row = intents.whole(indeterminate)
    assert first == {
        "id": indeterminate,
        "kind": "guard_ack",
        "state": "indeterminate",
        "refused": False,
        "waits_for_person": True,
        "event_id": row.event_id,
        "attempt_id": None,
        "destination": {
            "message_kind": "boost",
            "bucket_id": row.destination.bucket_id,
            "recording_id": row.destination.recording_id,
        },
        "note": notes.matching_messages(2),
        "age_seconds": 7200,
    }
    assert (second["id"], second["state"], second["refused"], second["note"]) == (
        refused, "canceled", True, notes.REFUSED_NOTE
    )


def test_all_lists_every_state(intents: Intents, run: Run) -> None:
    made = {
        intents.sent(1): "sent",
        intents.pending(): "pending",
        intents.sending(): "sending",
        intents.indeterminate(): "indeterminate",
        intents.canceled_by_get_dispatch(): "canceled",
        intents.abandoned(): "abandoned",
        intents.refused(): "canceled",
    }
    listed = json.loads(run("list", "--all", "--json").out)
    assert {entry["id"]: entry["state"] for entry in listed} == made
    waiting = {entry["id"] for entry in listed if entry["waits_for_person"]}
    assert len(waiting) == 2
    text = run("list", "--all")
    assert len(table_rows(text.out)) == len(made)


def test_age_counts_from_the_last_change(intents: Intents, run: Run, clock: FakeClock) -> None:
    intent_id = intents.pending()
    clock.advance(50)
    with intents.ledger.write() as connection:
        connection.execute("UPDATE outbox SET state = 'sending', sending_at = ? WHERE id = ?",
                           (format_timestamp(clock.now()), intent_id))
    clock.advance(3 * 3600)
    (entry,) = json.loads(run("list", "--all", "--json").out)
    assert entry["age_seconds"] == 3 * 3600


@pytest.mark.parametrize(
    ("seconds", "words"),
    [(0, "0 s"), (59, "59 s"), (60, "1 min"), (180, "3 min"), (3599, "59 min"), (7200, "2 h"),
     (47 * 3600, "47 h"), (3 * 86400, "3 d")],
)
def test_an_age_reads_as_a_person_says_it(seconds: int, words: str) -> None:
    assert human_age(seconds) == words


# -- show ------------------------------------------------------------------------------------


def test_show_prints_every_column_the_body_and_the_exact_commands(
    intents: Intents, run: Run, ledger_path: Path
) -> None:
    intent_id = intents.indeterminate(failures=3)
    row = intents.whole(intent_id)
    ran = run("show", str(intent_id))
    assert ran.code == EXIT_OK
    out = ran.out
    assert out.startswith(f"intent {intent_id}: guard_ack, indeterminate\n")
    for shown in (row.key, notes.matching_messages(2), "👀 received", "reconcile failures: 3",
                  format_timestamp(row.created_at), format_timestamp(row.not_before)):
        assert shown in out
    prefix = f"bin/outbox-resolve --ledger {ledger_path}"
    assert f"{prefix} sent {intent_id} --receipt MESSAGE_ID" in out
    assert f"{prefix} abandon {intent_id}" in out
    assert f"{prefix} resend {intent_id}" in out
    assert "a resend of a message that exists doubles it" in out


def test_show_of_a_refused_intent_offers_a_resend_only(intents: Intents, run: Run) -> None:
    intent_id = intents.refused()
    details = json.loads(run("show", str(intent_id), "--json").out)
    assert [offer["decision"] for offer in details["decisions"]] == ["resend"]


def test_show_of_a_settled_intent_offers_nothing(intents: Intents, run: Run) -> None:
    intent_id = intents.sent(31337)
    ran = run("show", str(intent_id))
    assert "Nothing for a person to decide: it is sent." in ran.out
    details = json.loads(run("--json", "show", str(intent_id)).out)
    assert details["decisions"] == []
    assert details["receipt_id"] == 31337


def test_show_json_holds_every_column(intents: Intents, run: Run, ledger_path: Path) -> None:
    intent_id = intents.indeterminate(failures=10, reconcile_in=60)
    row = intents.whole(intent_id)
    details = json.loads(run("--json", "show", str(intent_id)).out)
    assert set(details) == DETAIL_FIELDS
    assert details["body"] == row.body
    assert details["intent_key"] == row.key
    assert details["reconcile_failures"] == 10
    assert row.reconcile_at is not None
    assert row.sending_at is not None
    assert details["reconcile_at"] == format_timestamp(row.reconcile_at)
    assert details["sending_at"] == format_timestamp(row.sending_at)
    assert details["resolved_by"] == ""
    assert [offer["decision"] for offer in details["decisions"]] == ["sent", "abandon", "resend"]
    assert details["decisions"][2]["command"] == f"bin/outbox-resolve --ledger {ledger_path} resend {intent_id}"


def test_show_after_a_decision_names_who_made_it(intents: Intents, run: Run) -> None:
    intent_id = intents.indeterminate()
    run("abandon", str(intent_id), "--by", "person:26909558")
    ran = run("show", str(intent_id))
    assert "resolved by:        person:26909558" in ran.out
    assert "note:               resolved: abandon" in ran.out


# -- help ------------------------------------------------------------------------------------


def test_help_teaches_the_states_the_decisions_and_the_rule(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--help"]) == EXIT_OK
    words = " ".join(capsys.readouterr().out.split())
    for taught in (
        "indeterminate", "refused", "sent ID --receipt N", "abandon ID", "resend ID",
        "Mark sent only after you have seen the message in Basecamp; resend only after you have seen it "
        "is absent -- a resend of a message that exists doubles it.",
        "CONNECTOR_LEDGER", "exit codes",
    ):
        assert taught in words


@pytest.mark.parametrize("command", ["list", "show", "sent", "abandon", "resend"])
def test_each_command_has_its_help(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([command, "--help"]) == EXIT_OK
    assert "--ledger" in capsys.readouterr().out


HOSTILE = "<div>ok\x1b[2J\x1b]0;pwned\x07 \x9b31m\u202egnp.exe\u2066</div>\r<br>next\u2028line"


def test_show_prints_a_body_with_every_control_and_bidi_override_escaped(intents: Intents, run: Run) -> None:
    intent_id = intents.indeterminate()
    with intents.ledger.write() as connection:
        connection.execute("UPDATE outbox SET body = ?, note = note || ? WHERE id = ?",
                           (HOSTILE, " \u202e\x1b[2J", intent_id))
    ran = run("show", str(intent_id))
    assert ran.code == EXIT_OK
    assert all(character.isprintable() for line in ran.out.split("\n") for character in line)
    for escaped in ("\\x1b[2J", "\\x1b]0;pwned\\x07", "\\x9b31m", "\\u202egnp.exe\\u2066"):
        assert escaped in ran.out
    assert "\n    <br>next\n    line\n" in ran.out  # a line break of the body's is a line of its own
    assert run("--json", "list").out.isascii()
    assert all(character.isprintable() for line in run("list").out.split("\n") for character in line)
    shown = run("--json", "show", str(intent_id)).out
    assert shown.isascii()
    assert json.loads(shown)["body"] == HOSTILE  # the body itself, to a program
