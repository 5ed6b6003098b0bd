"""``core.hold``: what a hold writes and what a release says, as plain values."""

from __future__ import annotations

from core.edges import RecordState
from core.hold import (
    RecordAtHold,
    StandingHold,
    WaitingRedispatch,
    hold,
    may_launch,
    release_summary,
    revocation_note,
)

_R = RecordState
NOW = "2026-12-01T20:00:00.000000000Z"


def records() -> list[RecordAtHold]:
    return [RecordAtHold(event_id, state, 3) for event_id, state in enumerate(_R, start=1)]


def test_a_hold_tags_every_open_record_and_holds_only_the_waiting_ones() -> None:
    plan = hold(None, records(), "local:ana", "cutover", NOW)
    states = {record.event_id: record.state for record in records()}
    assert {states[event_id] for event_id in plan.review} == set(_R) - {_R.completed, _R.discarded}
    assert {record.state for record in plan.to_hold} == {_R.admitted, _R.queued}
    assert (plan.marker_by, plan.marker_at, plan.cause, plan.already) == ("local:ana", NOW, "cutover", False)


def test_a_standing_hold_keeps_its_first_setter_and_time() -> None:
    first = StandingHold("local:ana", "2026-11-30T10:00:00.000000000Z", "cutover", 1)
    plan = hold(first, [], "local:bob", "still cutting over", NOW)
    assert (plan.marker_by, plan.marker_at, plan.cause, plan.already) == (
        "local:ana", "2026-11-30T10:00:00.000000000Z", "still cutting over", True
    )
    assert plan.summary(2).startswith("Hold renewed (generation 2)")


def test_nothing_launches_while_a_hold_stands() -> None:
    assert may_launch(None)
    assert not may_launch(StandingHold("local:ana", NOW, "", 1))


def test_a_release_says_how_many_held_records_stay_held() -> None:
    standing = StandingHold("local:ana", NOW, "", 1)
    assert release_summary(standing, 2) == "Released; 2 held records stay held"
    assert release_summary(standing, 1) == "Released; 1 held record stays held"
    assert release_summary(None, 4) == "No hold stood"


def test_a_hold_revokes_each_waiting_redispatch_and_tags_its_record_even_completed() -> None:
    waiting = WaitingRedispatch(decision_id=9, event_id=7, task_id=3)
    plan = hold(None, [RecordAtHold(5, RecordState.seen, 1)], "local:ana", "cutover", "t", [waiting])
    assert (plan.revoke, plan.review) == ((waiting,), (5, 7))
    assert revocation_note(2, waiting) == ("revoked by the hold (generation 2) before task 3 ended; "
                                           "redispatch event 7 again after `bin/connect release`")
