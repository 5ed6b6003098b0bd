"""core.feed with plain values: the filter digest, reading a page, refusals, new ids."""

from __future__ import annotations

from typing import Any

import pytest
from returns.result import Failure, Success

from core.feed import (
    FEED_REFUSALS,
    MAX_POSITION_BYTES,
    EpochPassed,
    FeedFilters,
    FiltersChanged,
    InvalidFilter,
    InvalidPosition,
    PageRejected,
    UnexpectedFeedAnswer,
    new_ids,
    read_inbox_page,
    read_page,
    read_refusal,
)


def event(event_id: int, **overrides: Any) -> dict[str, Any]:
    return {
        "id": event_id, "kind": "comment", "action": "created", "event_type": "comment.created",
        "bucket_id": 1, "creator_id": 2, "performed_by_id": None, "recording_id": 3,
        "created_at": "2026-11-29T12:00:00.000Z", "details": None, **overrides,
    }  # fmt: skip


def test_one_filter_set_spelled_two_ways_has_one_digest() -> None:
    first = FeedFilters.of(buckets=[3, 1, 3], exclude_performers=["self"], actor_types=["person"])
    second = FeedFilters.of(actor_types=["person", "person"], buckets=[1, 3], exclude_performers=["self"])
    assert first == second
    assert first.digest() == second.digest()
    assert len(first.digest()) == 64
    assert first.digest() != FeedFilters.of(buckets=[1]).digest()
    assert first.query() == (("buckets", "1,3"), ("exclude_performers", "self"), ("actor_types", "person"))


@pytest.mark.parametrize(
    "options",
    [{"buckets": range(1, 102)}, {"buckets": [0]}, {"actor_types": ["robot"]},
     {"exclude_performers": ["me"]}, {"types": ["a,b"]}],
)  # fmt: skip
def test_filters_the_feed_would_refuse_are_refused_here(options: dict[str, Any]) -> None:
    with pytest.raises(ValueError):  # noqa: PT011
        FeedFilters.of(**options)


def test_a_page_is_read_whole_and_its_position_never_prints() -> None:
    result = read_page({"events": [event(1), event(2)], "position": "SECRET", "next": "http://x/NEXT"})
    assert isinstance(result, Success)
    page = result.unwrap()
    assert [e.id for e in page.events] == [1, 2]
    assert page.last_id == 2
    assert "SECRET" not in repr(page)
    assert "NEXT" not in repr(page)


@pytest.mark.parametrize(
    "body",
    [
        [],
        {"events": {}, "position": "p"},
        {"events": [event(1)]},
        {"events": [event(1)], "position": ""},
        {"events": [event(2), event(1)], "position": "p"},
        {"events": [event(1), event(1)], "position": "p"},
        {"events": [event(1, id="1")], "position": "p"},
        {"events": [event(1, bucket_id=None)], "position": "p"},
        {"events": [event(1, details=[1])], "position": "p"},
        {"events": [event(0)], "position": "p"},
        {"events": [event(1)], "position": "p", "next": 5},
    ],
)
def test_a_page_that_breaks_the_shape_is_rejected(body: object) -> None:
    result = read_page(body)
    assert isinstance(result, Failure)
    assert isinstance(result.failure(), PageRejected)


def test_refusals_are_a_closed_set() -> None:
    assert read_refusal(400, {"error": "x", "reason": "invalid_position"}) == InvalidPosition()
    assert isinstance(read_refusal(400, {"error": "bad buckets", "reason": "invalid_filter"}), InvalidFilter)
    assert read_refusal(409, {"error": "x"}) == FiltersChanged()
    assert read_refusal(410, {"error": "x", "epoch_after_id": 7}) == EpochPassed(7)
    assert read_refusal(410, {"error": "x"}) == UnexpectedFeedAnswer(410)
    assert read_refusal(410, {"epoch_after_id": True}) == UnexpectedFeedAnswer(410)
    assert read_refusal(500, None) == UnexpectedFeedAnswer(500)


def test_new_ids_are_the_unknown_ones_in_order_each_once() -> None:
    assert new_ids([5, 3, 9, 3, 7], known=[9]) == (5, 3, 7)
    assert new_ids([], known=[1]) == ()


@pytest.mark.parametrize("status", [414, 431])
def test_a_position_too_long_to_send_back_is_refused_as_an_invalid_one(status: int) -> None:
    assert status in FEED_REFUSALS, "the client hands it to intake as a refusal, not a failure"
    assert read_refusal(status, None) == InvalidPosition()


def test_a_position_over_a_few_kib_makes_the_page_unreadable() -> None:
    for read in (read_page, read_inbox_page):
        name = "events" if read is read_page else "items"
        assert isinstance(read({name: [], "position": "p" * MAX_POSITION_BYTES}), Success)
        refused = read({name: [], "position": "p" * (MAX_POSITION_BYTES + 1)})
        assert isinstance(refused, Failure)
        assert f"position is over {MAX_POSITION_BYTES} bytes" in refused.failure().reason
        assert isinstance(read({name: [], "position": "é" * (MAX_POSITION_BYTES // 2 + 1)}), Failure), "bytes"
        assert isinstance(read({name: [], "position": "p" * (1 << 20)}), Failure), "a 1 MiB position"
