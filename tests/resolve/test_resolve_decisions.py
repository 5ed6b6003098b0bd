"""A person's decisions: each allowed move and what it writes; every other move refused
with one line naming the state; a receipt belongs to one intent; who decided is recorded."""

from __future__ import annotations

import getpass
import json
from collections.abc import Callable

import pytest

from core import notes
from core.timestamps import format_timestamp
from shell.clock import FakeClock
from shell.errors import EXIT_NOT_FOUND, EXIT_OK, EXIT_REFUSED, EXIT_USAGE
from shell.ledger import outbox as rows
from tests.resolve.resolve_world import Intents, Run

BY = "person:26909558"


@pytest.fixture(autouse=True)
def _a_known_user(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(getpass, "getuser", lambda: "ana")


# -- the allowed moves -----------------------------------------------------------------------


def test_a_person_who_found_the_message_marks_it_sent_with_its_receipt(
    intents: Intents, run: Run, clock: FakeClock
) -> None:
    intent_id = intents.indeterminate()
    clock.advance(600)
    ran = run("sent", str(intent_id), "--receipt", "9001", "--unchecked", "--by", BY)
    assert ran.code == EXIT_OK, ran.err
    assert ran.out.splitlines() == [
        f"intent {intent_id} (guard_ack, boost on recording 1000101): indeterminate -> sent, by {BY};"
        " with receipt 9001 (unchecked)"
    ]
    assert ran.err == ""
    row = intents.whole(intent_id)
    assert (row.state, row.receipt_id, row.note, row.resolved_by) == (
        "sent", 9001, notes.RESOLVED_SENT_UNCHECKED, BY
    )
    assert row.finished_at == clock.now()


def test_the_abandon_command_abandons_an_indeterminate_intent(intents: Intents, run: Run, clock: FakeClock) -> None:
    intent_id = intents.indeterminate()
    clock.advance(60)
    ran = run("abandon", str(intent_id), "--by", BY)
    assert ran.code == EXIT_OK, ran.err
    assert "indeterminate -> abandoned" in ran.out
    row = intents.whole(intent_id)
    assert (row.state, row.receipt_id, row.note, row.resolved_by) == (
        "abandoned", None, notes.RESOLVED_ABANDON, BY
    )
    assert row.finished_at == clock.now()


def test_a_resend_of_an_indeterminate_intent_starts_it_afresh_and_due_now(
    intents: Intents, run: Run, clock: FakeClock
) -> None:
    intent_id = intents.indeterminate(failures=10, reconcile_in=120)
    before = intents.whole(intent_id)
    assert before.reconcile_failures == 10
    assert before.reconcile_at is not None
    assert before.sending_at is not None
    clock.advance(3600)
    ran = run("resend", str(intent_id), "--by", BY)
    assert ran.code == EXIT_OK, ran.err
    assert "indeterminate -> pending" in ran.out
    row = intents.whole(intent_id)
    assert (row.state, row.note, row.resolved_by) == ("pending", notes.RESOLVED_RESEND, BY)
    assert (row.sending_at, row.finished_at, row.reconcile_at, row.reconcile_failures) == (None, None, None, 0)
    assert row.not_before == clock.now()
    assert row.receipt_id is None
    with intents.ledger.read() as connection:
        due = rows.next_due(connection, clock.now())
    assert due is not None
    assert due.id == intent_id, "the sender's next claim is the resent intent"


def test_a_refused_intent_may_be_resent(intents: Intents, run: Run, clock: FakeClock) -> None:
    intent_id = intents.refused()
    clock.advance(30)
    ran = run("resend", str(intent_id), "--by", BY)
    assert ran.code == EXIT_OK, ran.err
    assert "refused -> pending" in ran.out
    row = intents.whole(intent_id)
    assert (row.state, row.note, row.resolved_by) == ("pending", notes.RESOLVED_RESEND, BY)
    assert (row.sending_at, row.finished_at, row.reconcile_at, row.reconcile_failures) == (None, None, None, 0)
    assert row.not_before == clock.now()


def test_a_decision_prints_json_for_a_machine(intents: Intents, run: Run, clock: FakeClock) -> None:
    intent_id = intents.indeterminate()
    ran = run("--json", "sent", str(intent_id), "--receipt", "77", "--unchecked", "--by", BY)
    assert ran.code == EXIT_OK, ran.err
    assert json.loads(ran.out) == {
        "id": intent_id,
        "decision": "sent",
        "from": "indeterminate",
        "to": "sent",
        "note": notes.RESOLVED_SENT_UNCHECKED,
        "resolved_by": BY,
        "receipt_id": 77,
        "receipt_checked": False,
        "not_before": format_timestamp(intents.whole(intent_id).not_before),
        "finished_at": format_timestamp(clock.now()),
    }


# -- every other move is refused -------------------------------------------------------------

SETTLED: dict[str, tuple[Callable[[Intents], int], str]] = {
    "sent": (lambda intents: intents.sent(4242), "sent"),
    "abandoned": (lambda intents: intents.abandoned(), "abandoned"),
    "canceled by get_dispatch": (lambda intents: intents.canceled_by_get_dispatch(), "canceled (get_dispatch)"),
    "pending": (lambda intents: intents.pending(), "pending (the connector has not asked Basecamp for it yet)"),
    "sending": (
        lambda intents: intents.sending(), "sending (the connector is still finding out whether it landed)"
    ),
}
DECISIONS = {
    "sent": (("--receipt", "5150"), "only an indeterminate intent can be marked sent"),
    "abandon": ((), "only an indeterminate intent can be abandoned"),
    "resend": (
        (), "only an indeterminate intent, or a canceled one whose request Basecamp refused, can be resent"
    ),
}


@pytest.mark.parametrize("decision", sorted(DECISIONS))
@pytest.mark.parametrize("situation", sorted(SETTLED))
def test_a_decision_about_an_intent_that_is_not_a_persons_is_refused_and_changes_nothing(
    intents: Intents, run: Run, situation: str, decision: str
) -> None:
    make, described = SETTLED[situation]
    intent_id = make(intents)
    before = intents.whole(intent_id)
    options, needs = DECISIONS[decision]
    ran = run(decision, str(intent_id), *options, "--by", BY)
    assert ran.code == EXIT_REFUSED
    assert ran.error_lines == [f"error: intent {intent_id} is {described}; {needs}"]
    assert ran.out == ""
    assert intents.whole(intent_id) == before


@pytest.mark.parametrize("decision", ["sent", "abandon"])
def test_a_refused_intent_can_be_resent_only(intents: Intents, run: Run, decision: str) -> None:
    intent_id = intents.refused()
    before = intents.whole(intent_id)
    options, needs = DECISIONS[decision]
    ran = run(decision, str(intent_id), *options, "--by", BY)
    assert ran.code == EXIT_REFUSED
    assert ran.error_lines == [
        f"error: intent {intent_id} is canceled because Basecamp refused its request (no message exists);"
        f" {needs}"
    ]
    assert intents.whole(intent_id) == before


def test_a_decision_already_made_is_not_made_twice(intents: Intents, run: Run) -> None:
    intent_id = intents.indeterminate()
    assert run("resend", str(intent_id), "--by", BY).code == EXIT_OK
    again = run("resend", str(intent_id), "--by", "local:someone-else")
    assert again.code == EXIT_REFUSED
    assert intents.whole(intent_id).resolved_by == BY


def test_an_unknown_intent_is_not_found(intents: Intents, run: Run) -> None:
    intents.indeterminate()
    for decision, options in [("sent", ("--receipt", "1")), ("abandon", ()), ("resend", ()), ("show", ())]:
        ran = run(decision, "999", *options)
        assert ran.code == EXIT_NOT_FOUND, decision
        assert ran.error_lines == ["error: no intent 999 in this ledger; `list --all` shows every intent"]


# -- a receipt belongs to one intent -------------------------------------------------------


def test_a_receipt_another_intent_holds_is_refused_naming_it(intents: Intents, run: Run) -> None:
    owner = intents.sent(555)
    intent_id = intents.indeterminate()
    before = intents.whole(intent_id)
    ran = run("sent", str(intent_id), "--receipt", "555", "--unchecked", "--by", BY)
    assert ran.code == EXIT_REFUSED
    assert len(ran.error_lines) == 1
    assert ran.error_lines[0].startswith(f"error: receipt 555 already belongs to intent {owner}")
    assert intents.whole(intent_id) == before


def test_a_receipt_is_one_intents_within_its_kind_only(intents: Intents, run: Run) -> None:
    intents.sent(555)  # a boost
    comment = intents.holding_reply()
    ran = run("sent", str(comment), "--receipt", "555", "--unchecked", "--by", BY)
    assert ran.code == EXIT_OK, ran.err
    assert intents.whole(comment).receipt_id == 555


# -- who decided -----------------------------------------------------------------------------


def test_who_decided_defaults_to_the_local_user(intents: Intents, run: Run) -> None:
    intent_id = intents.indeterminate()
    assert run("abandon", str(intent_id)).code == EXIT_OK
    assert intents.whole(intent_id).resolved_by == "local:ana"


def test_the_local_user_is_recorded_on_one_line_without_control_characters(
    intents: Intents, run: Run, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(getpass, "getuser", lambda: "ana\n\x1b[31mroot\x00\u2028x")
    intent_id = intents.indeterminate()
    assert run("abandon", str(intent_id)).code == EXIT_OK
    assert intents.whole(intent_id).resolved_by == "local:ana [31mroot x"


def test_who_decided_may_be_named_after_the_command_too(intents: Intents, run: Run) -> None:
    intent_id = intents.indeterminate()
    assert run("resend", str(intent_id), "--by", "local:jorge").code == EXIT_OK
    assert intents.whole(intent_id).resolved_by == "local:jorge"


@pytest.mark.parametrize("given", ["", "   "])
def test_an_empty_name_for_who_decided_is_refused(intents: Intents, run: Run, given: str) -> None:
    intent_id = intents.indeterminate()
    before = intents.whole(intent_id)
    ran = run("abandon", str(intent_id), "--by", given)
    assert ran.code == EXIT_USAGE
    assert ran.error_lines == ["error: --by names who decided; it may not be empty"]
    assert intents.whole(intent_id) == before


@pytest.mark.parametrize("given", ["\n\t\x00", "ana\nbob", "\x1b[2Jana", "ana\x07", "ana\x7f"])
def test_a_name_with_a_control_character_is_refused_never_stored(intents: Intents, run: Run, given: str) -> None:
    intent_id = intents.indeterminate()
    before = intents.whole(intent_id)
    ran = run("abandon", str(intent_id), "--by", given)
    assert ran.code == EXIT_USAGE
    assert len(ran.error_lines) == 1
    assert ran.error_lines[0].startswith("error: --by may not hold control characters")
    assert intents.whole(intent_id) == before


def test_without_a_user_name_the_person_must_name_themself(
    intents: Intents, run: Run, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_user() -> str:
        raise OSError("No username set in the environment")

    monkeypatch.setattr(getpass, "getuser", no_user)
    intent_id = intents.indeterminate()
    ran = run("abandon", str(intent_id))
    assert ran.code == EXIT_USAGE
    assert ran.error_lines == ["error: cannot tell who you are from the system; name yourself with --by WHO"]
    assert intents.whole(intent_id).state == "indeterminate"


# -- bad usage ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "argv",
    [
        ("sent", "1"),  # no receipt
        ("sent", "1", "--receipt", "0"),
        ("sent", "1", "--receipt", "-4"),
        ("sent", "1", "--receipt", "abc"),
        ("abandon", "seven"),
        ("resend",),
        ("resend", "0"),
        ("undo", "1"),
        (),
    ],
)
def test_bad_usage_is_argparses_two_and_changes_nothing(
    intents: Intents, run: Run, argv: tuple[str, ...]
) -> None:
    intent_id = intents.indeterminate()
    ran = run(*argv)
    assert ran.code == EXIT_USAGE
    assert "Traceback" not in ran.err
    assert intents.whole(intent_id).state == "indeterminate"
