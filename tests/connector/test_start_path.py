"""The one start path against the stand-in: the production ``Connector.start`` settles what a
previous process left (``shell.connector.settle_previous``), and a listing the stand-in stalls
ends within its own bound, however long the start's deadline."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from shell.basecamp.client import BasecampClient
from shell.basecamp.standin.faults import Fault, FaultAction
from shell.basecamp.standin.server import StandIn
from shell.cli.run import USER_AGENT
from shell.clock import FakeClock, SystemClock
from shell.connector import Connector, StartParts, settle_previous
from shell.ledger import outbox as rows
from shell.ledger.connection import open_ledger
from shell.outbox import Outbox, OutboxOptions
from shell.state.config import StatePaths, load_config
from shell.worker.driver import WorkerCommand
from tests.support.configured import configure_connector
from tests.support.fake_basecamp import AGENT_ID, FakeBasecamp, Post
from tests.support.ledger_world import LedgerWorld


def _left_sending(ledger_path: Path, recording_id: int) -> int:
    """A previous process, two hours ago, claimed a holding reply and died not knowing whether it
    landed: the intent is sending, long past its wait."""
    clock = FakeClock(datetime.now(UTC) - timedelta(hours=2))
    with open_ledger(ledger_path, clock=clock) as ledger:
        world = LedgerWorld(ledger)
        world.seen(101, recording_id=recording_id)
        world.verdict(101, "blocked", "no_route")  # a holding reply, due at once
        basecamp = FakeBasecamp(clock)
        basecamp.posts = [Post.lost_before_landing]
        Outbox(ledger, basecamp, AGENT_ID).flush()
        ((intent_id, _, state, _),) = world.outbox()
        assert state == "sending"
        return intent_id


def test_the_production_start_reconciles_and_sweeps_what_a_previous_process_left(tmp_path: Path) -> None:
    with StandIn(world="demo") as standin:
        state = configure_connector(standin, tmp_path)
        paths = StatePaths.at(state)
        intent_id = _left_sending(paths.ledger, standin.world.projects[2].recording_ids[0])
        sessions = state / "sessions"
        (sessions / "att_previous").mkdir(parents=True)
        configuration = load_config(paths.config)
        clock = SystemClock()
        world = standin.world
        client = BasecampClient(standin.base_url, world.account_id, world.token, USER_AGENT, clock=clock)
        with open_ledger(paths.ledger, clock=clock) as ledger:
            connector = Connector(
                configuration,
                ledger,
                client,
                clock,
                WorkerCommand.configured(configuration.worker_command),
                sessions,
            )
            assert connector.start(timedelta(seconds=30)) == []
            with ledger.read() as connection:
                found = rows.intent(connection, intent_id)
        assert found is not None
        assert found.state == "indeterminate", "listed, and nothing of it was there"
        assert not (sessions / "att_previous").exists(), "the previous process's session files"


def test_a_stalled_listing_ends_within_its_own_bound_not_the_starts(tmp_path: Path) -> None:
    with StandIn(world="demo") as standin:
        world = standin.world
        ledger_path = tmp_path / "ledger.sqlite3"
        intent_id = _left_sending(ledger_path, world.projects[2].recording_ids[0])
        standin.add_fault(Fault(FaultAction.hang, "GET", "comments", delay=60, times=None))
        clock = SystemClock()
        client = BasecampClient(standin.base_url, world.account_id, world.token, USER_AGENT, clock=clock)
        with open_ledger(ledger_path, clock=clock) as ledger:
            outbox = Outbox(
                ledger, client, world.agent.id, OutboxOptions(listing_timeout=timedelta(seconds=1))
            )
            began = time.monotonic()
            settle_previous(StartParts(outbox), clock.monotonic() + 20)
            took = time.monotonic() - began
            with ledger.read() as connection:
                found = rows.intent(connection, intent_id)
        assert took < 6, f"the listing took {took:.1f} s: its bound is 1 s"
        assert found is not None
        assert found.state == "sending"
        assert found.reconcile_failures == 1, "a listing its own bound ended is a failed listing, backed off"
