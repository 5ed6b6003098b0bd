"""``core.feed`` with plain values: a page read whole or refused, the events of its items once
each above the floor, the refusals, and the reasons mapped onto the matrix's triggers."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st
from returns.result import Failure, Success

from core.admission import MATRIX, Trigger
from core.feed import (
    ASKED_REASONS,
    INBOX_REFUSALS,
    REASON_TRIGGERS,
    InboxFiltersRefused,
    InboxGone,
    InboxItem,
    NotForPrincipal,
    PositionRefused,
    UnexpectedInboxAnswer,
    addressed_events,
    read_inbox_page,
    read_inbox_refusal,
)


def event(event_id: int, event_type: str = "comment.created") -> dict[str, Any]:
    return {"id": event_id, "kind": "comment", "action": "created", "event_type": event_type,
            "bucket_id": 2, "creator_id": 3, "performed_by_id": None, "recording_id": 4,
            "created_at": "2026-12-01T09:00:00.000Z", "details": None}  # fmt: skip


def item(addressing_id: int, event_id: int, reason: str = "mentioned") -> dict[str, Any]:
    return {"addressing_id": addressing_id, "reason": reason, "addressed_at": "2026-12-01T09:00:00.000Z",
            "event": event(event_id)}  # fmt: skip


def test_a_page_is_read_whole() -> None:
    page = read_inbox_page({"items": [item(1, 10), item(2, 10, "subscribed")], "position": "p", "next": "u"})
    assert isinstance(page, Success)
    read = page.unwrap()
    assert (read.last_item_id, [i.event.id for i in read.items]) == (2, [10, 10])
    assert "'p'" not in repr(read), "a position never prints"
    assert "'u'" not in repr(read)


def test_a_page_that_breaks_a_rule_is_refused() -> None:
    for body in (
        [], {"items": {}, "position": "p"}, {"items": [], "position": ""}, {"items": [], "position": "p", "next": 3},
        {"items": [item(2, 10), item(1, 11)], "position": "p"}, {"items": [item(0, 10)], "position": "p"},
        {"items": [{**item(1, 10), "event": {"id": "x"}}], "position": "p"},
        {"items": [{**item(1, 10), "reason": None}], "position": "p"},
    ):  # fmt: skip
        assert isinstance(read_inbox_page(body), Failure), body


@given(st.lists(st.tuples(st.integers(1, 30), st.sampled_from(sorted(REASON_TRIGGERS))), max_size=20),
       st.integers(0, 30))  # fmt: skip
def test_the_events_of_a_page_are_each_once_in_item_order_above_the_floor(
    addressed: list[tuple[int, str]], floor: int
) -> None:
    items = [
        InboxItem(number, reason, "", read_inbox_page({"items": [item(1, event_id)], "position": "p"})
                  .unwrap().items[0].event)
        for number, (event_id, reason) in enumerate(addressed, start=1)
    ]  # fmt: skip
    expected: list[int] = []
    for event_id, _ in addressed:
        if event_id > floor and event_id not in expected:
            expected.append(event_id)
    assert [found.id for found in addressed_events(items, floor)] == expected


def test_the_refusals() -> None:
    assert read_inbox_refusal(403, None) == NotForPrincipal()
    assert read_inbox_refusal(410, {"error": "gone", "resume": "u"}) == InboxGone()
    assert read_inbox_refusal(400, {"reason": "invalid_position"}) == PositionRefused()
    assert read_inbox_refusal(409, {}) == PositionRefused()
    for too_long in (414, 431):  # a position the server cannot read back
        assert too_long in INBOX_REFUSALS
        assert read_inbox_refusal(too_long, None) == PositionRefused()
    assert read_inbox_refusal(400, {"reason": "invalid_filter"}) == InboxFiltersRefused()
    assert read_inbox_refusal(500, {}) == UnexpectedInboxAnswer(500)


def test_each_reason_maps_onto_a_trigger_the_matrix_has_or_none() -> None:
    in_matrix = {rule.trigger for rules in MATRIX.values() for rule in rules}
    assert set(REASON_TRIGGERS) == {"mentioned", "assigned", "subscribed", "watched", "pinged", "boosted"}
    assert {trigger for trigger in REASON_TRIGGERS.values() if trigger} <= in_matrix
    assert REASON_TRIGGERS["mentioned"] is Trigger.mentioned
    assert REASON_TRIGGERS["boosted"] is None
    assert set(ASKED_REASONS) == {reason for reason, trigger in REASON_TRIGGERS.items() if trigger}
