"""Geared pagination, the Link header, X-Total-Count, and the order of Campfire lines."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

import pytest

from shell.basecamp.standin.api import BASECAMP_PAGE_SIZES, page_of
from shell.basecamp.standin.server import StandIn

if TYPE_CHECKING:
    from conftest import Answer, Client

LINK = re.compile(r'<([^>]+)>; rel="next"')


def next_url(answer: Answer) -> str | None:
    link = answer.headers.get("link")
    if not link:
        return None
    found = LINK.fullmatch(link)
    assert found, link
    return found.group(1)


def walk(client: Client, path: str) -> list[Answer]:
    """Every page, following Link headers only."""
    pages = [client.get(path)]
    while (url := next_url(pages[-1])) is not None:
        pages.append(client.get(url.removeprefix(client.standin.base_url)))
    return pages


def test_basecamps_gears_are_15_30_50_then_100() -> None:
    items = list(range(395))
    sizes = [len(page_of(items, number, BASECAMP_PAGE_SIZES).items) for number in range(1, 7)]
    assert sizes == [15, 30, 50, 100, 100, 100]
    assert page_of(items, 5, BASECAMP_PAGE_SIZES).items[0] == 195
    assert not page_of(items, 6, BASECAMP_PAGE_SIZES).has_next
    assert page_of(items, 5, BASECAMP_PAGE_SIZES).has_next


@pytest.mark.parametrize("kind", ["comment", "boost", "chat_line"])
def test_a_listing_is_paged_with_an_absolute_same_origin_link_while_more_remain(
    demo: StandIn, demo_client: Client, kind: str
) -> None:
    project = demo.world.projects[0]
    recording_id = project.campfire_id if kind == "chat_line" else project.recording_ids[0]
    path = {
        "comment": f"recordings/{recording_id}/comments.json",
        "boost": f"recordings/{recording_id}/boosts.json",
        "chat_line": f"buckets/{project.id}/chats/{recording_id}/lines.json",
    }[kind]
    author = demo.world.people[0].id
    ids = [demo.seed_message(kind, recording_id, author, f"message {n}") for n in range(12)]

    pages = walk(demo_client, path)

    assert [len(page.json()) for page in pages] == [2, 3, 4, 3]  # the demo's gears: 2, 3, 4, 5
    assert [item["id"] for page in pages for item in page.json()] == ids
    assert all(page.headers["x-total-count"] == "12" for page in pages)
    assert next_url(pages[-1]) is None
    for number, page in enumerate(pages[:-1], start=1):
        url = urlsplit(next_url(page) or "")
        assert f"{url.scheme}://{url.netloc}" == demo.base_url
        assert url.path == f"/{demo.world.account_id}/{path}"
        assert url.query == f"page={number + 1}"


def test_a_single_page_has_no_link_and_past_the_end_is_empty(standin: StandIn, client: Client) -> None:
    card = standin.world.projects[0].recording_ids[0]
    standin.seed_message("comment", card, standin.world.agent.id, "only")
    first = client.get(f"recordings/{card}/comments.json")
    assert (len(first.json()), first.headers["x-total-count"], "link" in first.headers) == (1, "1", False)
    beyond = client.get(f"recordings/{card}/comments.json?page=9")
    assert (beyond.status, beyond.json(), "link" in beyond.headers) == (200, [], False)
    for junk in ("0", "-3", "abc"):
        assert len(client.get(f"recordings/{card}/comments.json?page={junk}").json()) == 1


def test_an_empty_listing_has_a_total_of_zero(standin: StandIn, client: Client) -> None:
    answer = client.get(f"chats/{standin.world.projects[0].campfire_id}/lines.json")
    assert (answer.json(), answer.headers["x-total-count"], "link" in answer.headers) == ([], "0", False)


def test_comments_are_listed_oldest_first_whatever_order_they_were_placed_in(
    standin: StandIn, client: Client
) -> None:
    card = standin.world.projects[0].recording_ids[0]
    noon = datetime(2026, 5, 1, 12, 0, tzinfo=UTC)
    late = standin.seed_message("comment", card, standin.world.agent.id, "late", noon + timedelta(hours=1))
    early = standin.seed_message("comment", card, standin.world.agent.id, "early", noon)
    listed = client.get(f"recordings/{card}/comments.json").json()
    assert [item["id"] for item in listed] == [early, late]


def test_lines_default_to_oldest_first_and_honour_sort_and_direction(
    standin: StandIn, client: Client
) -> None:
    campfire = standin.world.projects[0].campfire_id
    start = datetime(2026, 5, 1, 12, 0, tzinfo=UTC)
    ids = [
        standin.seed_message(
            "chat_line", campfire, standin.world.agent.id, f"line {n}", start + timedelta(minutes=n)
        )
        for n in range(5)
    ]
    lines = f"chats/{campfire}/lines.json"

    def listed(query: str) -> list[int]:
        return [item["id"] for page in walk(client, lines + query) for item in page.json()]

    assert listed("") == ids
    assert listed("?sort=created_at&direction=asc") == ids
    assert listed("?sort=created_at&direction=desc") == ids[::-1]
    assert listed("?direction=desc") == ids[::-1]
    first_page = client.get(lines + "?sort=created_at&direction=desc")
    assert [item["id"] for item in first_page.json()] == ids[:-3:-1]
    url = urlsplit(next_url(first_page) or "")
    assert url.query == "sort=created_at&direction=desc&page=2"
