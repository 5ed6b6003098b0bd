"""Intake's inbox lane (``shell.intake.inbox_lane``) against the real stand-in's inbox, on a real
ledger file, with the real client: where it enters, one record per event whichever lane heard it
first, the 403 recorded once, its own position and its recoveries."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from core.feed import ASKED_REASONS, FeedFilters
from core.intake_status import InboxVerdict
from shell.basecamp.client import BasecampClient
from shell.basecamp.standin.faults import Fault, FaultAction
from shell.basecamp.standin.server import StandIn
from shell.clock import FakeClock, SystemClock
from shell.intake.inbox_lane import DEFAULT_EVERY_POLLS, InboxLane
from shell.intake.poll_lane import Intake
from shell.ledger import intake
from shell.ledger.connection import Ledger, open_ledger


def lane(ledger: Ledger, client: BasecampClient, floor: int = 0) -> InboxLane:
    return InboxLane(ledger, client, SystemClock(), lambda: floor)


def deadline(client: BasecampClient) -> float:
    return client.deadline_in(10)


def card(standin: StandIn, project: int = 0) -> int:
    return standin.world.projects[project].recording_ids[0]


def rows(ledger: Ledger) -> list[tuple[Any, ...]]:
    with ledger.read() as connection:
        return connection.execute("SELECT id, lane, state FROM events ORDER BY id").fetchall()


def state(ledger: Ledger) -> intake.InboxLaneState:
    with ledger.read() as connection:
        found = intake.read_inbox_state(connection)
    assert found is not None
    return found


def inbox_requests(standin: StandIn) -> list[str]:
    return [request.path for request in standin.requests() if "inbox.json" in request.path]


def test_a_first_read_with_nothing_served_enters_now_and_then_records_what_is_addressed(
    standin: StandIn, ledger: Ledger, client: BasecampClient
) -> None:
    ada = standin.world.people[0]
    standin.mention(ada, card(standin), "before the lane ever read")
    inbox = lane(ledger, client)
    assert inbox.poll_once(deadline(client)) == ()
    standin.subscribe(standin.world.agent, card(standin))
    mentioned = standin.mention(ada, card(standin), "mentioned and subscribed: two items")
    assigned = standin.assign(ada, card(standin, 1), standin.world.agent.id)
    assert inbox.poll_once(deadline(client)) == (mentioned, assigned)
    assert rows(ledger) == [(mentioned, "inbox", "seen"), (assigned, "inbox", "seen")]
    assert inbox.poll_once(deadline(client)) == ()
    assert state(ledger).verdict is InboxVerdict.available


def test_an_event_another_lane_heard_first_is_not_recorded_again(
    standin: StandIn, ledger: Ledger, client: BasecampClient
) -> None:
    inbox = lane(ledger, client)
    inbox.poll_once(deadline(client))
    feed = Intake(ledger, client, FeedFilters.of(exclude_performers=["self"]), SystemClock())
    feed.poll_once(deadline(client))
    heard = standin.mention(standin.world.people[0], card(standin), "the feed hears it first")
    assert feed.poll_once(deadline(client)).new_ids == (heard,)
    assert inbox.poll_once(deadline(client)) == ()
    assert rows(ledger) == [(heard, "poll", "seen")]


def test_the_first_read_after_the_feed_served_replays_from_0_above_the_feeds_last_event(
    standin: StandIn, ledger: Ledger, client: BasecampClient
) -> None:
    ada = standin.world.people[0]
    served = standin.mention(ada, card(standin), "the feed served this one")
    standin.feed.brake_next()
    braked = standin.mention(ada, card(standin), "braked: the feed never serves it")
    assert lane(ledger, client, floor=served).poll_once(deadline(client)) == (braked,)
    assert state(ledger).floor_id == served
    assert rows(ledger) == [(braked, "inbox", "seen")], "what the feed served is not replayed"


def test_it_asks_only_for_the_reasons_that_map_onto_a_trigger(
    standin: StandIn, ledger: Ledger, client: BasecampClient
) -> None:
    asked: list[dict[str, list[str]]] = []
    real = client.read

    def read(url: str, deadline: float, *, yielding: bool = False) -> Any:
        asked.append(parse_qs(urlsplit(url).query))
        return real(url, deadline, yielding=yielding)

    client.read = read  # type: ignore[method-assign]
    lane(ledger, client).poll_once(deadline(client))
    assert asked == [{"reasons": [",".join(ASKED_REASONS)], "since": ["now"]}]
    assert set(ASKED_REASONS) == {"assigned", "mentioned", "pinged", "subscribed", "watched"}


def test_a_principal_without_an_inbox_is_recorded_once_and_not_asked_again(
    standin: StandIn, ledger: Ledger, client: BasecampClient
) -> None:
    standin.inbox.agents.clear()
    inbox = lane(ledger, client)
    assert inbox.due()
    assert inbox.poll_once(deadline(client)) == ()
    assert state(ledger).verdict is InboxVerdict.not_for_principal
    assert not any(inbox.due() for _ in range(3 * DEFAULT_EVERY_POLLS))
    inbox.ask_now()
    assert not inbox.due(), "not even after the feed's 410: there is no inbox to ask"
    assert len(inbox_requests(standin)) == 1


def test_due_every_sixth_turn_and_at_once_when_asked(ledger: Ledger, client: BasecampClient) -> None:
    inbox = lane(ledger, client)
    assert inbox.due(), "the first turn reads it"
    turns = [inbox.due() for _ in range(2 * DEFAULT_EVERY_POLLS)]
    assert turns.count(True) == 2
    inbox.ask_now()
    assert inbox.due()


def test_a_failing_inbox_saves_nothing_and_the_next_read_carries_on(
    standin: StandIn, ledger: Ledger, client: BasecampClient
) -> None:
    inbox = lane(ledger, client)
    inbox.poll_once(deadline(client))
    mentioned = standin.mention(standin.world.people[0], card(standin), "while it fails")
    standin.add_fault(Fault(FaultAction.server_error, path_contains="inbox.json", status=500))
    assert inbox.poll_once(deadline(client)) == ()
    assert state(ledger).verdict is InboxVerdict.failing
    assert rows(ledger) == []
    assert inbox.poll_once(deadline(client)) == (mentioned,)
    assert state(ledger).verdict is InboxVerdict.available


def test_a_refused_position_resumes_after_the_last_item(
    standin: StandIn, ledger: Ledger, client: BasecampClient
) -> None:
    inbox = lane(ledger, client)
    inbox.poll_once(deadline(client))
    first = standin.mention(standin.world.people[0], card(standin), "one")
    assert inbox.poll_once(deadline(client)) == (first,)
    with ledger.write() as connection:
        connection.execute("UPDATE inbox_lane SET position = 'not-a-position'")
    second = standin.mention(standin.world.people[0], card(standin), "two")
    assert inbox.poll_once(deadline(client)) == (second,)
    assert state(ledger).position not in ("", "not-a-position")


@pytest.mark.parametrize("status", [414, 431])
def test_a_position_too_long_to_send_back_resumes_after_the_last_item(
    standin: StandIn, ledger: Ledger, client: BasecampClient, status: int
) -> None:
    inbox = lane(ledger, client)
    inbox.poll_once(deadline(client))
    first = standin.mention(standin.world.people[0], card(standin), "one")
    assert inbox.poll_once(deadline(client)) == (first,)
    standin.add_fault(Fault(FaultAction.refuse, status=status, path_contains="inbox.json"))
    second = standin.mention(standin.world.people[0], card(standin), "two")
    assert inbox.poll_once(deadline(client)) == (second,)
    assert state(ledger).position != ""


def test_an_inbox_page_with_a_1_mib_position_is_unreadable_and_keeps_nothing(
    standin: StandIn, ledger: Ledger, client: BasecampClient
) -> None:
    inbox = lane(ledger, client)
    inbox.poll_once(deadline(client))
    kept = state(ledger).position
    standin.mention(standin.world.people[0], card(standin), "one")
    standin.add_fault(Fault(FaultAction.long_position, path_contains="inbox.json"))
    assert inbox.poll_once(deadline(client)) == ()
    assert rows(ledger) == []
    assert state(ledger).position == kept
    assert "position is over" in state(ledger).why


@pytest.fixture
def aging() -> Iterator[tuple[StandIn, FakeClock]]:
    clock = FakeClock(datetime(2026, 12, 1, 9, 0, tzinfo=UTC))
    with StandIn(world="demo", clock=clock.now) as running:
        yield running, clock


def test_the_inboxs_own_410_starts_again_at_since_0_and_the_records_dedupe(
    aging: tuple[StandIn, FakeClock], tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    standin, clock = aging
    client = BasecampClient(standin.base_url, standin.world.account_id, standin.world.token,
                            "basecamp-connector tests (tests@example.com)", requests_per_window=10_000)  # fmt: skip
    with open_ledger(tmp_path / "connector.db") as ledger:
        inbox = lane(ledger, client)
        feed = Intake(ledger, client, FeedFilters.of(exclude_performers=["self"]), SystemClock(), start=0)
        inbox.poll_once(deadline(client))
        ada = standin.world.people[0]
        expired = standin.mention(ada, card(standin), "expires while the inbox lane is away")
        clock.advance(31 * 86_400)  # the lane's position is now behind the retention window
        heard = standin.mention(ada, card(standin), "the feed hears this one first")
        kept = standin.mention(ada, card(standin), "only the inbox brings this one")
        feed.poll_once(deadline(client))
        with ledger.write() as connection:  # as if the feed had served only the first of the two
            connection.execute("DELETE FROM events WHERE id != ?", (heard,))
        assert inbox.poll_once(deadline(client)) == (kept,)
        assert "starting again at since=0" in caplog.text
        assert rows(ledger) == [(heard, "poll", "seen"), (kept, "inbox", "seen")]
        assert expired not in [row[0] for row in rows(ledger)]


def test_a_first_read_that_fails_keeps_its_floor_so_what_was_braked_meanwhile_is_heard(
    standin: StandIn, ledger: Ledger, client: BasecampClient
) -> None:
    ada = standin.world.people[0]
    served = standin.mention(ada, card(standin), "the feed served this one")
    floors = iter([served])
    inbox = InboxLane(ledger, client, SystemClock(), lambda: next(floors, 10**12))  # the feed moves on
    standin.add_fault(Fault(FaultAction.server_error, path_contains="inbox.json", status=500))
    assert inbox.poll_once(deadline(client)) == ()
    assert state(ledger).floor_id == served
    standin.feed.brake_next()
    braked = standin.mention(ada, card(standin), "braked while the inbox failed")
    assert inbox.poll_once(deadline(client)) == (braked,)
