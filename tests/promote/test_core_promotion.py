"""``core.promotion.next_step`` with plain values: each state a crash can leave names one step,
and running promote again walks them to the end without a second hold."""

from __future__ import annotations

from dataclasses import replace

import pytest

from core.promotion import CAUSE_PREFIX, Finished, Marker, OnDisk, Step, Stuck, marker_for, next_step

MARKER = Marker(f"{CAUSE_PREFIX} 2026-12-01T22:00:00.000000Z", "ledger.before-promote-x.sqlite3")
UNTOUCHED = OnDisk(marker=None, shadow_ledger=True, shadow_hold=None, ledger=True, ledger_hold=None)


def test_a_shadow_ledger_and_no_marker_begins() -> None:
    assert next_step(UNTOUCHED) is Step.begin


def test_the_walk_from_an_untouched_shadow_to_finished_takes_each_step_once() -> None:
    begun = replace(UNTOUCHED, marker=MARKER)
    assert next_step(begun) is Step.hold
    held = replace(begun, shadow_hold=MARKER.cause)
    assert next_step(held) is Step.set_aside
    aside = replace(held, ledger=False, aside=True)
    assert next_step(aside) is Step.move
    moved = replace(aside, shadow_ledger=False, shadow_hold=None, ledger=True, ledger_hold=MARKER.cause)
    assert next_step(moved) is Step.finish
    finished = replace(moved, marker=None, aside=False)
    assert next_step(finished) == Finished(already=True)


def test_with_no_old_ledger_nothing_is_set_aside() -> None:
    marker = replace(MARKER, aside=None)
    held = OnDisk(marker=marker, shadow_ledger=True, shadow_hold=marker.cause, ledger=False, ledger_hold=None)
    assert next_step(held) is Step.move


def test_a_hold_the_shadow_ledger_held_before_promote_is_not_promote_s_own() -> None:
    other = replace(UNTOUCHED, marker=MARKER, shadow_hold="someone else's hold")
    assert next_step(other) is Step.hold


@pytest.mark.parametrize(
    ("disk", "words"),
    [
        (replace(UNTOUCHED, shadow_ledger=False), "no shadow ledger"),
        (replace(UNTOUCHED, shadow_ledger=False, ledger_hold="a person's hold"), "no shadow ledger"),
        (OnDisk(MARKER, True, MARKER.cause, ledger=True, ledger_hold=None, aside=True), "appeared"),
        (OnDisk(replace(MARKER, aside=None), True, MARKER.cause, ledger=True, ledger_hold=None), "appeared"),
        (OnDisk(MARKER, False, None, ledger=True, ledger_hold=None), "neither"),
        (OnDisk(MARKER, False, None, ledger=False, ledger_hold=None), "neither"),
    ],
)
def test_what_promote_cannot_make_sense_of_is_stuck_with_words(disk: OnDisk, words: str) -> None:
    answer = next_step(disk)
    assert isinstance(answer, Stuck)
    assert words in answer.why


def test_the_marker_names_the_old_ledger_only_when_there_is_one() -> None:
    assert marker_for(False, "2026-12-01T22:00:00.123456Z") == Marker(
        f"{CAUSE_PREFIX} 2026-12-01T22:00:00.123456Z", None
    )
    aside = marker_for(True, "2026-12-01T22:00:00.123456Z").aside
    assert aside == "ledger.before-promote-2026-12-01T220000-123456Z.sqlite3"


def test_a_connector_ledger_with_something_in_flight_is_never_set_aside() -> None:
    disk = OnDisk(
        marker=None, shadow_ledger=True, shadow_hold=None, ledger=True, ledger_hold=None,
        ledger_unsettled="1 worker attempt(s) not ended",
    )  # fmt: skip
    stuck = next_step(disk)
    assert isinstance(stuck, Stuck)
    assert "still holds 1 worker attempt(s) not ended" in stuck.why
    settled = OnDisk(marker=None, shadow_ledger=True, shadow_hold=None, ledger=True, ledger_hold=None)
    assert next_step(settled) is Step.begin


def test_a_ledger_that_has_something_in_flight_again_after_begin_is_not_set_aside() -> None:
    marker = Marker(f"{CAUSE_PREFIX} then", "ledger.before-promote-then.sqlite3")
    disk = OnDisk(
        marker=marker, shadow_ledger=True, shadow_hold=marker.cause, ledger=True, ledger_hold=None,
        ledger_unsettled="1 lifecycle message(s) not yet final",
    )  # fmt: skip
    stuck = next_step(disk)
    assert isinstance(stuck, Stuck)
    assert "still holds 1 lifecycle message(s) not yet final" in stuck.why
    assert next_step(replace(disk, ledger_unsettled=None)) is Step.set_aside
