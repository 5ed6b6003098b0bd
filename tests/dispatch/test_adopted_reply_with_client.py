"""The adopted-reply rule with the real client against the stand-in (spec 3.6): after a settlement,
the one reply the worker wrote but never reported is adopted; the connector's own lifecycle
message there, alike or not, never is."""

from __future__ import annotations

import time
from pathlib import Path

from core import notes
from core.destinations import Destination, MessageKind
from core.edges import IntentState
from core.posting import Receipt
from shell.adopted_replies import ReplyAdopter
from shell.basecamp.client import BasecampClient
from shell.basecamp.standin.server import StandIn
from shell.cli.run import USER_AGENT
from shell.clock import SystemClock
from shell.ledger import outbox as intents
from shell.ledger.connection import open_ledger
from tests.support.ledger_world import PROJECT, LedgerWorld


def _post(client: BasecampClient, destination: Destination, body: str) -> int:
    outcome = client.post(destination, body, client.deadline_in(10))
    assert isinstance(outcome, Receipt), outcome
    return outcome.id


def _adoption(
    tmp_path: Path, replies: list[str], *, notice_canceled: bool = False
) -> tuple[list[tuple[int, int]], list[int], int | None]:
    """A worker that acknowledged, posted ``replies`` and never reported; the attempt lost.
    A still-running notice was sent there, or (``notice_canceled``) canceled before its claim
    and the worker replied in its very words. Answers what was adopted, the replies' ids, and the
    adopted_reply_id the row holds."""
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
            else:
                _post(client, destination, notice)
            ids = [_post(client, destination, body) for body in replies]
            ledger_world.end_attempt(attempt_id, "lost")
            adopted = ReplyAdopter(ledger, client, world.agent.id).adopt(task_id)
            with ledger.read() as connection:
                (held,) = connection.execute(
                    "SELECT adopted_reply_id FROM task_events WHERE event_id = 101"
                ).fetchone()
            return adopted, ids, held


def test_the_one_reply_a_worker_never_reported_is_adopted_not_the_lifecycle_notice(tmp_path: Path) -> None:
    adopted, (reply_id,), held = _adoption(tmp_path, ["Fixed: the login page works again."])
    assert adopted == [(101, reply_id)]
    assert held == reply_id


def test_two_replies_at_the_destination_adopt_neither(tmp_path: Path) -> None:
    adopted, _, held = _adoption(tmp_path, ["Fixed the page.", "And its tests."])
    assert (adopted, held) == ([], None)


def test_a_canceled_notice_s_words_never_hide_the_worker_s_reply(tmp_path: Path) -> None:
    """The PR's review point: a canceled intent proves its message absent, so a worker's reply in
    the same words is the worker's."""
    adopted, (reply_id,), held = _adoption(tmp_path, [], notice_canceled=True)
    assert adopted == [(101, reply_id)]
    assert held == reply_id
