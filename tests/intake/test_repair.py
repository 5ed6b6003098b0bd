"""Losses and gaps against the real stand-in: what the live lane did not hear is recorded as a loss
and walked for under its own cursor; a 410 is recorded as a gap."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta

import pytest

from core.feed import FeedFilters
from core.intake_status import LaneState, Loss, LossCounts, LossState, losses_line, settle_state, walk_done
from shell.basecamp.client import BasecampClient
from shell.basecamp.standin.faults import LiveAction, LiveFault
from shell.basecamp.standin.server import StandIn
from shell.clock import SystemClock
from shell.intake.live_lane import LiveLane
from shell.intake.poll_lane import Intake, Repair
from shell.ledger.connection import Ledger
from shell.ledger.intake import read_loss_counts
from tests.support.child import wait_until

LossRow = tuple[str, int, int | None, str, int]


@pytest.fixture
def standin() -> Iterator[StandIn]:
    with StandIn(world="demo", ping_interval=0.2) as running:
        yield running


def person_mentions(standin: StandIn, text: str) -> int:
    person = next(found for found in standin.world.people if found.id != standin.world.agent.id)
    return standin.mention(person, standin.world.projects[0].recording_ids[0], text)


def losses(ledger: Ledger) -> list[LossRow]:
    with ledger.read() as connection:
        return [
            (str(row[0]), int(row[1]), row[2], str(row[3]), int(row[4]))
            for row in connection.execute(
                "SELECT cause, after_id, through_id, state, recovered FROM losses ORDER BY id"
            )
        ]


def lanes(ledger: Ledger) -> dict[int, str]:
    with ledger.read() as connection:
        return {int(row[0]): str(row[1]) for row in connection.execute("SELECT id, lane FROM events")}


@pytest.fixture
def heard() -> list[int]:
    return []


@pytest.fixture
def repair(ledger: Ledger, client: BasecampClient, filters: FeedFilters, heard: list[int]) -> Repair:
    return Repair(ledger, client, filters, SystemClock(), heard.append, interval=timedelta(0))


@pytest.fixture
def lane(
    ledger: Ledger, client: BasecampClient, filters: FeedFilters, repair: Repair, heard: list[int]
) -> Iterator[LiveLane]:
    live = LiveLane(
        ledger,
        client,
        filters,
        SystemClock(),
        heard.append,
        stale_after=2.0,
        backoff_base=0.05,
        losses=repair,
    )
    stop = threading.Event()
    thread = threading.Thread(target=live.run, args=(stop,), daemon=True)
    thread.start()
    wait_until(lambda: live.state is LaneState.connected, timeout=10)
    yield live
    stop.set()
    thread.join(timeout=5)


def soon() -> float:
    return time.monotonic() + 10


def test_an_overflow_is_a_loss_the_repair_walk_recovers(
    standin: StandIn, lane: LiveLane, repair: Repair, ledger: Ledger, heard: list[int]
) -> None:
    standin.live.faults.add(LiveFault(LiveAction.skip))
    skipped = person_mentions(standin, "skipped")
    after = person_mentions(standin, "after")
    wait_until(lambda: heard == [after], timeout=3)
    assert losses(ledger) == [("overflow", skipped - 1, skipped, "open", 0)], (
        "bounded by the event heard next"
    )
    repair.run_due(soon())
    assert losses(ledger) == [("overflow", skipped - 1, skipped, "repaired", 1)]
    assert heard == [after, skipped], "the walk hands on what it recorded first"
    assert lanes(ledger) == {skipped: "repair", after: "live"}
    with ledger.read() as connection:
        assert connection.execute("SELECT COUNT(*) FROM checkpoints").fetchone()[0] == 0


def test_a_dropped_connection_is_a_loss_from_the_newest_record(
    standin: StandIn, lane: LiveLane, repair: Repair, ledger: Ledger, heard: list[int]
) -> None:
    first = person_mentions(standin, "first")
    wait_until(lambda: heard == [first], timeout=3)
    standin.live.faults.add(LiveFault(LiveAction.drop))
    dropped = person_mentions(standin, "dropped")
    wait_until(lambda: standin.live.tickets.minted == 2 and lane.state is LaneState.connected, timeout=10)
    later = person_mentions(standin, "later")
    wait_until(lambda: later in heard, timeout=3)
    assert losses(ledger) == [("dropped", first, later - 1, "open", 0)]
    repair.run_due(soon())
    assert losses(ledger)[0][3:] == ("repaired", 1)
    assert lanes(ledger)[dropped] == "repair"


def test_a_loss_the_feed_does_not_serve_within_its_window_is_unrecovered(
    ledger: Ledger, client: BasecampClient, filters: FeedFilters, standin: StandIn
) -> None:
    standin.feed.delay = 3600.0  # the poll lane serves nothing in time
    repair = Repair(ledger, client, filters, SystemClock(), lambda event_id: None,
                    interval=timedelta(0), window=timedelta(0))  # fmt: skip
    lost = person_mentions(standin, "lost")
    repair.lost("overflow", lost - 1)
    repair.heard(lost + 1)
    repair.run_due(soon())
    assert losses(ledger) == [("overflow", lost - 1, lost, "unrecovered", 0)]
    assert read_loss_counts(ledger) == LossCounts(unrecovered=1)


def test_a_loss_stays_open_while_its_window_lasts(
    ledger: Ledger, client: BasecampClient, filters: FeedFilters, standin: StandIn
) -> None:
    standin.feed.delay = 3600.0
    repair = Repair(ledger, client, filters, SystemClock(), lambda event_id: None, interval=timedelta(0))
    lost = person_mentions(standin, "lost")
    repair.lost("overflow", lost - 1)
    repair.heard(lost + 1)
    repair.run_due(soon())
    assert losses(ledger)[0][3] == "open"
    standin.feed.delay = 0.0
    person_mentions(standin, "now served")
    repair.run_due(soon())
    assert losses(ledger)[0][3:] == ("repaired", 1)


def test_one_stretch_is_one_loss_and_the_next_event_right_after_leaves_nothing_lost(
    ledger: Ledger, repair: Repair
) -> None:
    repair.lost("overflow", 10)
    repair.lost("dropped", 12)  # still inside the unbounded stretch after 10
    assert losses(ledger) == [("overflow", 10, None, "open", 0)]
    repair.heard(11)
    assert losses(ledger) == [("overflow", 10, None, "repaired", 0)], "nothing between 10 and 11"


def test_a_410_is_recorded_as_a_gap(
    standin: StandIn, ledger: Ledger, client: BasecampClient, make_intake: Callable[..., Intake]
) -> None:
    intake = make_intake(start=0)
    served = person_mentions(standin, "served")
    intake.poll_once(soon())
    person_mentions(standin, "never served")
    epoch_after = standin.feed.begin_epoch()
    intake.poll_once(soon())
    with ledger.read() as connection:
        assert connection.execute("SELECT after_id, resumed_after_id FROM gaps").fetchall() == [
            (served, epoch_after)
        ]
    assert read_loss_counts(ledger) == LossCounts(gaps=1)


NOW = datetime(2026, 12, 1, 12, tzinfo=UTC)


def test_a_walk_is_done_past_its_bound_or_at_the_feeds_end_when_unbounded() -> None:
    bounded = Loss(1, "overflow", 10, 12, 10, NOW)
    assert not walk_done(bounded, 12, more=False)
    assert walk_done(bounded, 13, more=False)
    unbounded = Loss(1, "dropped", 10, None, 10, NOW)
    assert not walk_done(unbounded, 50, more=True)
    assert walk_done(unbounded, 10, more=False)
    assert settle_state(False, NOW - timedelta(seconds=1), bounded) is LossState.open
    assert settle_state(False, NOW, bounded) is LossState.unrecovered
    assert settle_state(True, NOW + timedelta(days=1), bounded) is LossState.repaired


def test_the_losses_line_counts_and_warns() -> None:
    assert losses_line(LossCounts()) == "losses: 0 open, 0 repaired, 0 unrecovered; gaps: 0"
    assert losses_line(LossCounts(1, 2, 3, 4)) == (
        "losses: 1 open, 2 repaired, 3 unrecovered; gaps: 4 (events there may never have been heard: see the feed)"
    )
