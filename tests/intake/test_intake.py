"""Intake against the real stand-in over HTTP, with a real ledger file (shell.intake.poll_lane rules)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from core.feed import MAX_POSITION_BYTES, FeedFilters, FeedPage
from shell.basecamp.client import BasecampClient
from shell.basecamp.errors import FeedFailed
from shell.basecamp.standin.faults import Fault, FaultAction
from shell.basecamp.standin.server import StandIn
from shell.intake.poll_lane import FeedFiltersRefused, FeedReader, Intake, IntakeFailed
from shell.ledger.connection import Ledger, open_ledger

MakeIntake = Callable[..., Intake]


class SimulatedCrash(Exception):
    """The process dying between two pages."""


class Recording:
    """A reader that passes through to the client, remembers every position it saw, and
    crashes on call ``crash_on`` (1-based) when asked to."""

    def __init__(self, client: BasecampClient, crash_on: int | None = None) -> None:
        self.client = client
        self.crash_on = crash_on
        self.calls = 0
        self.positions: list[str] = []
        self.urls: list[str] = []

    def poll_events(
        self,
        since: int | None,
        position: str | None,
        filters: FeedFilters,
        deadline: float,
        *,
        next_url: str | None = None,
    ) -> FeedPage:
        self.calls += 1
        if self.crash_on == self.calls:
            raise SimulatedCrash
        if next_url:
            self.urls.append(next_url)
        page = self.client.poll_events(since, position, filters, deadline, next_url=next_url)
        self.positions.append(page.position)
        return page


def mentions(standin: StandIn, count: int, project: int = 0) -> list[int]:
    ada = standin.world.people[0]
    card = standin.world.projects[project].recording_ids[0]
    return [standin.mention(ada, card, f"please {n}") for n in range(count)]


def seen_rows(ledger: Ledger) -> list[tuple[Any, ...]]:
    with ledger.read() as connection:
        return list(
            connection.execute(
                "SELECT id, state, event_type, bucket_id, recording_id, creator_id, created_at,"
                " seen_at, updated_at FROM events ORDER BY id"
            )
        )


def deadline(client: BasecampClient) -> float:
    return client.deadline_in(30)


def test_new_events_become_seen_records(
    standin: StandIn, ledger: Ledger, client: BasecampClient, make_intake: MakeIntake
) -> None:
    mentions(standin, 2)  # before the first poll: "now" starts after them
    intake = make_intake()
    first = intake.poll_once(deadline(client))
    assert first.new_ids == ()
    assert intake.checkpoint() is not None

    ids = mentions(standin, 5)
    assigned = standin.assign(
        standin.world.people[0], standin.world.projects[1].recording_ids[0], standin.world.agent.id
    )
    result = intake.poll_once(deadline(client))

    assert result.new_ids == (*ids, assigned)
    assert result.pages == 3  # pages of two
    assert not result.more
    rows = seen_rows(ledger)
    assert [row[0] for row in rows] == [*ids, assigned]
    events = {event.id: event for event in standin.feed.events()}
    for event_id, state, event_type, bucket_id, recording_id, creator_id, created_at, seen, updated in rows:
        event = events[event_id]
        assert state == "seen"
        assert (event_type, bucket_id, recording_id, creator_id) == (
            event.event_type,
            event.bucket_id,
            event.recording_id,
            event.creator_id,
        )
        assert created_at.endswith("000Z")
        assert len(created_at) == len(seen) == len(updated) == 30
    checkpoint = intake.checkpoint()
    assert checkpoint is not None
    assert checkpoint.last_served_id == assigned


def test_a_configured_start_replays_from_that_id(
    standin: StandIn, client: BasecampClient, make_intake: MakeIntake
) -> None:
    ids = mentions(standin, 3)
    assert make_intake(start=ids[0]).poll_once(deadline(client)).new_ids == tuple(ids[1:])


def test_a_restart_reads_nothing_twice(
    standin: StandIn, ledger_path: Path, client: BasecampClient, make_intake: MakeIntake, ledger: Ledger
) -> None:
    intake = make_intake(start=0)
    ids = mentions(standin, 3)
    assert intake.poll_once(deadline(client)).new_ids == tuple(ids)
    ledger.close()

    with open_ledger(ledger_path) as reopened:
        again = make_intake(on=reopened, start=0)
        assert again.poll_once(deadline(client)).new_ids == ()
        later = mentions(standin, 3)
        assert again.poll_once(deadline(client)).new_ids == tuple(later)
        assert [row[0] for row in seen_rows(reopened)] == [*ids, *later]


def test_another_lineage_dedupes_by_id(
    standin: StandIn, ledger: Ledger, client: BasecampClient, make_intake: MakeIntake
) -> None:
    ids = mentions(standin, 3)
    assert make_intake(start=0).poll_once(deadline(client)).new_ids == tuple(ids)
    other = FeedFilters.of(buckets=[standin.world.projects[0].id])
    assert make_intake(with_filters=other, start=0).poll_once(deadline(client)).new_ids == ()
    assert len(seen_rows(ledger)) == 3
    with ledger.read() as connection:
        assert connection.execute("SELECT count(*) FROM checkpoints").fetchone()[0] == 2


def test_a_crash_between_pages_loses_nothing_and_duplicates_nothing(
    standin: StandIn, ledger: Ledger, client: BasecampClient, make_intake: MakeIntake
) -> None:
    ids = mentions(standin, 5)
    crashing = Recording(client, crash_on=2)
    with pytest.raises(SimulatedCrash):
        make_intake(reader=crashing, start=0).poll_once(deadline(client))
    assert [row[0] for row in seen_rows(ledger)] == ids[:2]
    checkpoint = make_intake().checkpoint()
    assert checkpoint is not None
    assert checkpoint.last_served_id == ids[1]
    assert checkpoint.position == crashing.positions[0]

    resumed = make_intake(start=0).poll_once(deadline(client))
    assert resumed.new_ids == tuple(ids[2:])
    assert [row[0] for row in seen_rows(ledger)] == ids


class BadPage:
    """A reader whose second page cannot be recorded (an unreadable created_at)."""

    def __init__(self, reader: FeedReader) -> None:
        self.reader = reader
        self.calls = 0

    def poll_events(
        self,
        since: int | None,
        position: str | None,
        filters: FeedFilters,
        deadline: float,
        *,
        next_url: str | None = None,
    ) -> FeedPage:
        self.calls += 1
        page = self.reader.poll_events(since, position, filters, deadline, next_url=next_url)
        if self.calls == 2:
            broken = (replace(page.events[0], created_at="yesterday"), *page.events[1:])
            return FeedPage(broken, page.position, page.next_url)
        return page


def test_a_page_that_cannot_be_recorded_saves_nothing_of_itself(
    standin: StandIn, ledger: Ledger, client: BasecampClient, make_intake: MakeIntake
) -> None:
    ids = mentions(standin, 4)
    with pytest.raises(IntakeFailed):
        make_intake(reader=BadPage(client), start=0).poll_once(deadline(client))
    assert [row[0] for row in seen_rows(ledger)] == ids[:2]
    checkpoint = make_intake().checkpoint()
    assert checkpoint is not None
    assert checkpoint.last_served_id == ids[1]
    assert make_intake(start=0).poll_once(deadline(client)).new_ids == tuple(ids[2:])


def test_a_feed_that_fails_is_intake_failed_and_saves_nothing(
    standin: StandIn, ledger: Ledger, client: BasecampClient, make_intake: MakeIntake
) -> None:
    mentions(standin, 1)
    standin.add_fault(Fault(FaultAction.server_error, method="GET", path_contains="events"))
    intake = make_intake(start=0)
    with pytest.raises(IntakeFailed):
        intake.poll_once(deadline(client))
    assert intake.checkpoint() is None
    assert seen_rows(ledger) == []


def test_the_page_cap_stops_with_more_and_the_next_poll_carries_on(
    standin: StandIn, client: BasecampClient, make_intake: MakeIntake
) -> None:
    ids = mentions(standin, 5)
    intake = make_intake(start=0, max_pages=1)
    first = intake.poll_once(deadline(client))
    assert (first.new_ids, first.more) == (tuple(ids[:2]), True)
    assert intake.poll_once(deadline(client)).new_ids == tuple(ids[2:4])
    assert intake.poll_once(deadline(client)).new_ids == tuple(ids[4:])


def set_position(ledger: Ledger, intake: Intake, position: str) -> None:
    with ledger.write() as connection:
        connection.execute(
            "UPDATE checkpoints SET position = ? WHERE filter_digest = ?", (position, intake.digest)
        )


def test_an_invalid_position_is_dropped_and_intake_resumes_after_the_last_served(
    standin: StandIn, ledger: Ledger, client: BasecampClient, make_intake: MakeIntake
) -> None:
    intake = make_intake(start=0)
    before = mentions(standin, 3)
    intake.poll_once(deadline(client))
    set_position(ledger, intake, "not-a-position")
    after = mentions(standin, 2)

    result = intake.poll_once(deadline(client))
    assert result.recoveries == ("invalid_position",)
    assert result.new_ids == tuple(after)
    assert [row[0] for row in seen_rows(ledger)] == [*before, *after]
    checkpoint = intake.checkpoint()
    assert checkpoint is not None
    assert checkpoint.position
    assert checkpoint.position != "not-a-position"


@pytest.mark.parametrize("answer", ["414 from the server itself", "431 from a proxy before it"])
def test_a_position_too_long_to_send_back_is_dropped_as_an_invalid_one(
    standin: StandIn, ledger: Ledger, client: BasecampClient, make_intake: MakeIntake, answer: str
) -> None:
    """A position kept before positions were bounded, too long for a request line: the 414 (or a
    431) is the position's refusal, so intake resumes after the last served event, not stuck."""
    intake = make_intake(start=0)
    before = mentions(standin, 3)
    intake.poll_once(deadline(client))
    if answer.startswith("414"):
        set_position(ledger, intake, "p" * 70_000)  # past the stand-in's 64 KiB request line
    else:
        standin.add_fault(Fault(FaultAction.refuse, status=431, path_contains="events.json"))
    after = mentions(standin, 2)
    result = intake.poll_once(deadline(client))
    assert result.recoveries == ("invalid_position",)
    assert result.new_ids == tuple(after)
    assert [row[0] for row in seen_rows(ledger)] == [*before, *after]
    checkpoint = intake.checkpoint()
    assert checkpoint is not None
    assert 0 < len(checkpoint.position) <= MAX_POSITION_BYTES


def test_a_page_whose_position_is_over_the_bound_is_unreadable_and_saves_nothing(
    standin: StandIn, ledger: Ledger, client: BasecampClient, make_intake: MakeIntake
) -> None:
    intake = make_intake(start=0)
    mentions(standin, 1)
    standin.add_fault(Fault(FaultAction.long_position, path_contains="events.json"))
    with pytest.raises(IntakeFailed, match=f"position is over {MAX_POSITION_BYTES} bytes"):
        intake.poll_once(deadline(client))
    assert seen_rows(ledger) == []
    assert intake.checkpoint() is None


def test_an_invalid_position_before_anything_was_served_resumes_at_the_start_not_at_zero(
    standin: StandIn, ledger: Ledger, client: BasecampClient, make_intake: MakeIntake
) -> None:
    mentions(standin, 2)
    intake = make_intake()  # start: now
    intake.poll_once(deadline(client))
    set_position(ledger, intake, "not-a-position")
    result = intake.poll_once(deadline(client))
    assert result.recoveries == ("invalid_position",)
    assert result.new_ids == ()


def test_a_position_of_another_filter_set_is_409_and_handled_the_same(
    standin: StandIn, ledger: Ledger, client: BasecampClient, make_intake: MakeIntake
) -> None:
    other = make_intake(with_filters=FeedFilters.of(types=["comment.created"]), start=0)
    other.poll_once(deadline(client))
    foreign = other.checkpoint()
    assert foreign is not None
    intake = make_intake(start=0)
    before = mentions(standin, 1)
    intake.poll_once(deadline(client))
    set_position(ledger, intake, foreign.position)
    after = mentions(standin, 1)

    result = intake.poll_once(deadline(client))
    assert result.recoveries == ("filters_changed",)
    assert result.new_ids == tuple(after)
    assert {row[0] for row in seen_rows(ledger)} == {*before, *after}


def test_a_passed_epoch_resumes_after_epoch_after_id_and_says_so(
    standin: StandIn,
    ledger: Ledger,
    client: BasecampClient,
    make_intake: MakeIntake,
    caplog: pytest.LogCaptureFixture,
) -> None:
    intake = make_intake(start=0)
    served = mentions(standin, 1)
    intake.poll_once(deadline(client))
    lost = mentions(standin, 2)
    epoch_after = standin.feed.begin_epoch()
    kept = mentions(standin, 3)

    with caplog.at_level(logging.INFO, logger="connector"):
        result = intake.poll_once(deadline(client))
    assert result.recoveries == ("epoch_passed",)
    assert epoch_after == lost[-1]
    assert result.new_ids == tuple(kept)
    assert [row[0] for row in seen_rows(ledger)] == [*served, *kept]
    assert any(
        "epoch passed" in record.getMessage() and str(epoch_after) in record.getMessage()
        for record in caplog.records
    )
    checkpoint = intake.checkpoint()
    assert checkpoint is not None
    assert checkpoint.last_served_id == kept[-1]


def test_refused_filters_are_their_own_error(client: BasecampClient, make_intake: MakeIntake) -> None:
    with pytest.raises(FeedFiltersRefused):
        make_intake(with_filters=FeedFilters(actor_types=("robot",))).poll_once(deadline(client))


def test_a_next_on_another_origin_is_not_followed(client: BasecampClient) -> None:
    with pytest.raises(FeedFailed, match="another origin"):
        client.poll_events(
            None, None, FeedFilters(), deadline(client), next_url="http://evil.example/1/events.json"
        )


def test_the_position_and_the_query_never_appear_in_a_log_line(
    standin: StandIn,
    ledger: Ledger,
    client: BasecampClient,
    make_intake: MakeIntake,
    caplog: pytest.LogCaptureFixture,
) -> None:
    reader = Recording(client)
    intake = make_intake(reader=reader, start=0)
    with caplog.at_level(logging.DEBUG):
        mentions(standin, 5)
        intake.poll_once(deadline(client))
        set_position(ledger, intake, "not-a-position")
        mentions(standin, 1)
        intake.poll_once(deadline(client))
        standin.feed.begin_epoch()
        mentions(standin, 1)
        intake.poll_once(deadline(client))
        standin.add_fault(Fault(FaultAction.server_error, method="GET", path_contains="events"))
        with pytest.raises(IntakeFailed) as failed:
            intake.poll_once(deadline(client))

    assert len(reader.positions) == 5
    assert reader.urls  # next was followed
    checkpoint = intake.checkpoint()
    assert checkpoint is not None
    secrets = {*reader.positions, checkpoint.position, *reader.urls}
    ours = [record for record in caplog.records if not record.name.startswith("urllib3")]
    lines = [record.getMessage() for record in ours]
    lines += [str(failed.value), repr(checkpoint), repr(reader.client)]
    assert any("intake" in line for line in lines)
    for line in lines:
        assert "position=" not in line
        assert "since=" not in line
        assert "?" not in line
        for secret in secrets:
            assert secret not in line


def test_urllib3_debug_lines_do_not_carry_the_position(
    standin: StandIn, client: BasecampClient, make_intake: MakeIntake, caplog: pytest.LogCaptureFixture
) -> None:
    reader = Recording(client)
    mentions(standin, 3)
    with caplog.at_level(logging.DEBUG, logger="urllib3"):
        make_intake(reader=reader, start=0).poll_once(deadline(client))
    for record in caplog.records:
        assert "position=" not in record.getMessage()


def test_the_performer_the_feed_names_is_recorded_for_the_gate(
    standin: StandIn, ledger: Ledger, client: BasecampClient, make_intake: MakeIntake
) -> None:
    intake = make_intake()
    intake.poll_once(deadline(client))
    ada, grace = standin.world.people[0], standin.world.people[1]
    card = standin.world.projects[0].recording_ids[0]
    created_by_ada = standin.mention(ada, card, "please look")
    delegated = standin.feed.record(
        "comment.created", bucket_id=standin.world.projects[0].id, creator_id=ada.id,
        recording_id=card, created_at=standin.feed.events()[-1].created_at, performed_by_id=grace.id,
    ).id
    intake.poll_once(deadline(client))
    with ledger.read() as connection:
        performers = dict(connection.execute("SELECT id, performed_by_id FROM events").fetchall())
    assert performers == {created_by_ada: None, delegated: grace.id}
