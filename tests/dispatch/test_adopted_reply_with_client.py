"""The adopted-reply rule with the real client against the stand-in: listed before the
settlement and adopted inside it, the one reply the worker wrote but never reported is adopted;
the connector's own lifecycle message there, alike or not, never is; and the completion notice
written in that transaction asks a person only about what adoption left."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from pathlib import Path

from core import notes
from core.destinations import Destination, MessageKind
from core.edges import IntentState
from core.posting import Created
from core.snapshots import StopReason
from core.text import message_text
from shell.basecamp.client import BasecampClient
from shell.basecamp.standin.server import StandIn
from shell.cli.run import USER_AGENT
from shell.clock import SystemClock
from shell.dispatcher import ReplyAdopter
from shell.ledger import outbox as intents
from shell.ledger import tasks
from shell.ledger.connection import open_ledger
from tests.support.ledger_world import PROJECT, LedgerWorld


def _post(client: BasecampClient, destination: Destination, body: str) -> int:
    outcome = client.post(destination, body, client.deadline_in(10))
    assert isinstance(outcome, Created), outcome
    return outcome.id


@dataclass(frozen=True)
class Adoption:
    ids: list[int]  # the worker's replies
    held: int | None  # the row's adopted_reply_id
    notice: str  # the completion notice's words


def _adoption(
    tmp_path: Path, replies: list[str], *, notice_canceled: bool = False, notice_indeterminate: bool = False
) -> Adoption:
    """A worker that acknowledged, posted ``replies`` and never reported; the attempt lost.
    A still-running notice was sent there; or (``notice_canceled``) canceled before its claim
    and the worker replied in its very words; or (``notice_indeterminate``) its request landed,
    its answer was lost and reconciliation left it indeterminate, with no receipt. Answers the
    replies' ids, the adopted_reply_id the row holds, and the completion notice's words."""
    with StandIn(world="demo") as standin:
        world = standin.world
        client = BasecampClient(standin.base_url, world.account_id, world.token, USER_AGENT)
        recording_id = world.projects[2].recording_ids[0]
        destination = Destination(MessageKind.comment, PROJECT, recording_id)
        state = tmp_path / "state"
        state.mkdir(mode=0o700)
        with open_ledger(state / "ledger.sqlite3", clock=SystemClock()) as ledger:
            ledger_world = LedgerWorld(ledger)
            ledger_world.request(101, recording_id=recording_id)
            task_id = ledger_world.task(101)
            attempt_id = ledger_world.attempt(task_id)
            ledger_world.get_dispatch(task_id, 101)
            ledger_world.ack(task_id, 101, ack_id=5_000_001)
            time.sleep(0.01)
            ledger_world.tick(attempt_id)  # a still-running notice written, and (say) sent
            with ledger.read() as connection:
                (notice,) = connection.execute("SELECT body FROM outbox WHERE kind = 'still_running'").fetchone()
            if notice_canceled:
                with ledger.write() as connection:
                    (intent_id,) = connection.execute("SELECT id FROM outbox WHERE kind = 'still_running'").fetchone()
                    intents.cancel(connection, intent_id, IntentState.pending, notes.ALL_REPORTED, ledger.clock.now())
                replies = [notice]
            elif notice_indeterminate:
                with ledger.write() as connection:
                    (intent_id,) = connection.execute("SELECT id FROM outbox WHERE kind = 'still_running'").fetchone()
                    intents.claim(connection, intent_id, ledger.clock.now())
                _post(client, destination, notice)  # it landed; its answer never reached the connector
                with ledger.write() as connection:
                    intents.make_indeterminate(
                        connection, intent_id, notes.matching_messages(0), ledger.clock.now()
                    )  # fmt: skip
            else:
                _post(client, destination, notice)
            ids = [_post(client, destination, body) for body in replies]
            listed = ReplyAdopter(ledger, client, world.agent.id).list_replies(task_id, threading.Event())
            with ledger.write() as connection:
                tasks.end_attempt(
                    connection, attempt_id, StopReason.lost, spawn_failed=False, now=ledger.clock.now(),
                    replies=listed,
                )  # fmt: skip
            with ledger.read() as connection:
                (held,) = connection.execute(
                    "SELECT adopted_reply_id FROM task_events WHERE event_id = 101"
                ).fetchone()
                (notice,) = connection.execute("SELECT body FROM outbox WHERE kind = 'completion'").fetchone()
            return Adoption(ids, held, message_text(notice))


def test_the_one_reply_a_worker_never_reported_is_adopted_not_the_lifecycle_notice(tmp_path: Path) -> None:
    adoption = _adoption(tmp_path, ["Fixed: the login page works again."])
    assert adoption.held == adoption.ids[0]


def test_the_completion_notice_asks_no_person_about_an_event_whose_reply_was_adopted(tmp_path: Path) -> None:
    adoption = _adoption(tmp_path, ["Fixed: the login page works again."])
    assert "Event 101: the worker replied but did not report on it." in adoption.notice
    assert "Needs a person" not in adoption.notice
    assert "unknown" not in adoption.notice


def test_two_replies_at_the_destination_adopt_neither_and_the_notice_asks_a_person(tmp_path: Path) -> None:
    adoption = _adoption(tmp_path, ["Fixed the page.", "And its tests."])
    assert adoption.held is None
    assert "Event 101: unknown, the worker did not report on it. Needs a person" in adoption.notice


def test_a_canceled_notice_s_words_never_hide_the_worker_s_reply(tmp_path: Path) -> None:
    """A canceled intent proves its message absent, so a worker's reply in
    the same words is the worker's."""
    adoption = _adoption(tmp_path, [], notice_canceled=True)
    assert adoption.held == adoption.ids[0]


def test_an_indeterminate_notice_s_message_is_never_adopted_as_the_worker_s_reply(tmp_path: Path) -> None:
    """The other half of the adopted-reply filter: an indeterminate intent may exist at the destination with
    no receipt to exclude it by, so a listed message in its words is never the worker's reply,
    even when it is the only message there."""
    adoption = _adoption(tmp_path, [], notice_indeterminate=True)
    assert adoption.held is None
    assert "Event 101: unknown, the worker did not report on it. Needs a person" in adoption.notice
