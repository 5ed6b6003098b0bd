"""``bin/outbox-resolve sent ID --receipt N`` reads message N at the real stand-in (127.0.0.1)
before recording it: the agent's message with the intent's words is recorded as checked; someone
else's, a worker's own, other words, an older one, a missing one are refused (5); a stopped Basecamp is 6; and
``--unchecked`` records without asking anything."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import pytest

from core import notes
from shell.basecamp.standin.server import StandIn
from shell.cli.resolve import main
from shell.clock import FakeClock
from shell.errors import EXIT_OK, EXIT_REFUSED, EXIT_UNAVAILABLE
from shell.ledger import outbox as rows
from shell.ledger.connection import Ledger, open_ledger
from tests.resolve.resolve_world import Ran
from tests.support.configured import configure_connector
from tests.support.ledger_world import LedgerWorld

BY = "local:jorge"


@pytest.fixture
def standin() -> Iterator[StandIn]:
    with StandIn(world="demo") as server:
        yield server


@pytest.fixture
def state(standin: StandIn, tmp_path: Path) -> Path:
    return configure_connector(standin, tmp_path)


@dataclass
class Place:
    """The stand-in, a state directory setup wrote for it, its ledger, and a card of its world."""

    standin: StandIn
    state: Path
    ledger: Ledger
    clock: FakeClock
    capsys: pytest.CaptureFixture[str]

    @property
    def card(self) -> int:
        return self.standin.world.projects[0].recordings[0].id

    def run(self, *argv: str) -> Ran:
        """``bin/outbox-resolve --state-dir STATE --by BY ARGV`` in-process."""
        self.capsys.readouterr()
        code = main(["--state-dir", str(self.state), "--by", BY, *argv], clock=self.clock)
        captured = self.capsys.readouterr()
        return Ran(code, captured.out, captured.err)

    def indeterminate(self, event_id: int, *, kind: str = "holding_reply") -> rows.IntentRow:
        return indeterminate(self.ledger, event_id, self.card, kind=kind)

    def now(self, intent_id: int) -> rows.IntentRow:
        with self.ledger.read() as connection:
            found = rows.intent(connection, intent_id)
        assert found is not None
        return found


@pytest.fixture
def place(
    standin: StandIn, state: Path, clock: FakeClock, capsys: pytest.CaptureFixture[str]
) -> Iterator[Place]:
    with open_ledger(state / "ledger.sqlite3", clock=clock) as ledger:
        yield Place(standin, state, ledger, clock, capsys)


def indeterminate(ledger: Ledger, event_id: int, card: int, *, kind: str) -> rows.IntentRow:
    """An intent of ``kind`` at ``card`` (a guard's boost, or a no-route holding reply's
    comment) the connector asked Basecamp for and could not settle."""
    world = LedgerWorld(ledger)
    world.seen(event_id, recording_id=card)
    world.verdict(event_id, "admitted" if kind == "guard_ack" else "blocked", "" if kind == "guard_ack" else "no_route")
    now = ledger.clock.now()
    with ledger.write() as connection:
        (intent_id,) = connection.execute(
            "SELECT id FROM outbox WHERE event_id = ? AND kind = ?", (event_id, kind)
        ).fetchone()
        rows.claim(connection, intent_id, now)
        rows.make_indeterminate(connection, intent_id, notes.matching_messages(0), now)
        found = rows.intent(connection, intent_id)
    assert found is not None
    return found


def test_the_agents_message_with_the_intents_words_is_recorded_as_checked(place: Place) -> None:
    intent = place.indeterminate(101, kind="holding_reply")
    wrapped = f'<div dir="auto">{intent.body}</div>'  # Basecamp may wrap what it stores; the words stay
    message = place.standin.seed_message("comment", place.card, place.standin.world.agent.id, wrapped)
    ran = place.run("--json", "sent", str(intent.id), "--receipt", str(message))
    assert ran.code == EXIT_OK, ran.err
    answer = json.loads(ran.out)
    assert (answer["to"], answer["receipt_id"], answer["receipt_checked"]) == ("sent", message, True)
    after = place.now(intent.id)
    assert (after.state, after.receipt_id, after.note) == ("sent", message, notes.RESOLVED_SENT_CHECKED)


def test_a_guards_boost_is_read_alone_and_recorded_as_checked(place: Place) -> None:
    intent = place.indeterminate(102, kind="guard_ack")
    message = place.standin.seed_message("boost", place.card, place.standin.world.agent.id, intent.body)
    ran = place.run("sent", str(intent.id), "--receipt", str(message))
    assert ran.code == EXIT_OK, ran.err
    assert ran.out.rstrip().endswith(f"with receipt {message} (read and checked)")
    assert place.now(intent.id).note == notes.RESOLVED_SENT_CHECKED


@pytest.mark.parametrize(
    ("case", "expected"),
    [
        ("someone else's", "was written by person {person}, not by the agent ({agent})"),
        ("other words", "does not carry the intent's words"),
        ("missing", "was not found at comment on recording {card}"),
        ("another recording", "is on {other}, not at the intent's destination (comment on recording {card})"),
        ("older than the request", "before the intent's request"),
    ],
)
def test_a_message_that_is_not_the_intents_is_refused_naming_what_differed(case: str, expected: str, place: Place) -> None:
    intent = place.indeterminate(103, kind="holding_reply")
    world, card = place.standin.world, place.card
    other = world.projects[0].recordings[1].id
    agent, person = world.agent.id, world.people[0].id
    match case:
        case "someone else's":
            receipt = place.standin.seed_message("comment", card, person, intent.body)
        case "other words":
            receipt = place.standin.seed_message("comment", card, agent, "<div>Something else entirely</div>")
        case "missing":
            receipt = 987_654_321
        case "another recording":
            receipt = place.standin.seed_message("comment", other, agent, intent.body)
        case _:
            receipt = place.standin.seed_message(
                "comment", card, agent, intent.body, created_at=datetime(2026, 1, 6, tzinfo=UTC)
            )
    ran = place.run("sent", str(intent.id), "--receipt", str(receipt))
    assert ran.code == EXIT_REFUSED, ran.err
    (line,) = ran.error_lines
    assert line.startswith(f"error: intent {intent.id}: message {receipt} "), line
    assert expected.format(person=person, agent=agent, card=card, other=other) in line
    assert line.endswith("; nothing was changed")
    assert intent.body not in ran.err
    assert place.now(intent.id) == intent


@pytest.mark.parametrize("reported_as", ["reply", "acknowledgement"])
def test_a_workers_own_message_with_the_intents_words_is_refused_as_reconciliation_refuses_it(
    reported_as: str, place: Place
) -> None:
    """Reconciliation (``core.adoption``): a message a worker reported as its own is
    never an intent's receipt, however alike the words; refused (5), in --json as the check's
    other refusals are, and nothing is written."""
    intent = place.indeterminate(107, kind="holding_reply")
    agent = place.standin.world.agent.id
    message = place.standin.seed_message("comment", place.card, agent, intent.body)  # the worker's post
    world = LedgerWorld(place.ledger)
    world.request(207, recording_id=place.card)
    task_id = world.task(207)
    world.attempt(task_id)
    world.get_dispatch(task_id, 207)
    if reported_as == "reply":
        world.report(task_id, 207, "succeeded", reply_id=message, ack_id=5_000_207)
    else:
        world.ack(task_id, 207, ack_id=message)
    ran = place.run("--json", "sent", str(intent.id), "--receipt", str(message))
    assert ran.code == EXIT_REFUSED, ran.err
    (line,) = ran.error_lines
    assert line == (
        f"error: intent {intent.id}: message {message} is a worker's own (a task's acknowledgement or"
        " reply), not the connector's; nothing was changed"
    )
    answer = json.loads(ran.out)
    assert answer["exit_code"] == EXIT_REFUSED
    assert "is a worker's own" in answer["error"]
    assert place.now(intent.id) == intent


def test_a_basecamp_that_does_not_answer_is_unavailable_and_nothing_changes(place: Place) -> None:
    intent = place.indeterminate(104, kind="holding_reply")
    message = place.standin.seed_message("comment", place.card, place.standin.world.agent.id, intent.body)
    place.standin.stop()
    ran = place.run("--json", "sent", str(intent.id), "--receipt", str(message))
    assert ran.code == EXIT_UNAVAILABLE, ran.err
    assert len(ran.error_lines) == 1
    assert "could not read message" in ran.err
    assert "--unchecked" in ran.err
    assert json.loads(ran.out)["exit_code"] == EXIT_UNAVAILABLE
    assert place.now(intent.id) == intent


def test_unchecked_records_without_asking_basecamp_and_says_so(place: Place) -> None:
    intent = place.indeterminate(105, kind="holding_reply")
    place.standin.stop()
    ran = place.run("--json", "sent", str(intent.id), "--receipt", "4242", "--unchecked")
    assert ran.code == EXIT_OK, ran.err
    assert json.loads(ran.out)["receipt_checked"] is False
    assert place.now(intent.id).note == notes.RESOLVED_SENT_UNCHECKED


def test_an_intent_the_decision_refuses_anyway_is_not_asked_about(place: Place) -> None:
    intent = place.indeterminate(106, kind="holding_reply")
    message = place.standin.seed_message("comment", place.card, place.standin.world.agent.id, intent.body)
    assert place.run("sent", str(intent.id), "--receipt", str(message)).code == EXIT_OK
    before = len(place.standin.requests())
    again = place.run("sent", str(intent.id), "--receipt", str(message))
    assert again.code == EXIT_REFUSED
    assert "only an indeterminate intent can be marked sent" in again.err
    assert len(place.standin.requests()) == before
