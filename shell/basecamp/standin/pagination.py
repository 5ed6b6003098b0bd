"""Basecamp's geared pagination.

Rules:
1. Page ``n`` holds ``sizes[n-1]`` items; every page past the last size holds the last size
   (Basecamp: 15, 30, 50, then 100 for every page from the fourth).
2. ``?page=N`` selects exactly page N; a missing, malformed or non-positive page is page 1.
3. ``Link: <ABSOLUTE URL>; rel="next"`` only when items remain after this page, on the
   origin it is given (the stand-in's own); ``X-Total-Count`` always.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from shell.basecamp.standin.urls import page_url

BASECAMP_PAGE_SIZES = (15, 30, 50, 100)

Item = TypeVar("Item")


@dataclass(frozen=True, slots=True)
class Page(Generic[Item]):
    items: Sequence[Item]
    number: int
    total: int
    has_next: bool


def page_number(query: dict[str, str]) -> int:
    try:
        number = int(query.get("page", "1"))
    except ValueError:
        return 1
    return max(number, 1)


def page_of(items: Sequence[Item], number: int, sizes: Sequence[int]) -> Page[Item]:
    """Page ``number`` of ``items`` under the geared ``sizes``."""
    if not sizes or any(size < 1 for size in sizes):
        raise ValueError(f"page sizes must be positive, not {tuple(sizes)}")
    before = number - 1
    start = sum(sizes[:before]) + max(0, before - len(sizes)) * sizes[-1]
    end = start + sizes[min(before, len(sizes) - 1)]
    return Page(items[start:end], number, len(items), end < len(items))


def page_headers(
    page: Page[Any], origin: str, path: str, query: dict[str, str]
) -> tuple[tuple[str, str], ...]:
    """``X-Total-Count``, and ``Link`` to the next page on ``origin`` when there is one."""
    headers = [("X-Total-Count", str(page.total))]
    if page.has_next:
        headers.append(("Link", next_link(origin, path, query, page.number)))
    return tuple(headers)


def next_link(origin: str, path: str, query: dict[str, str], number: int) -> str:
    """The ``Link`` header value naming page ``number + 1``."""
    return f'<{page_url(origin, path, query, number + 1)}>; rel="next"'
