"""Cursor-style reads, one page a call: the account event feed (``events.json``, the client's
``poll_events``) and the agent's inbox (``inbox.json``, ``poll_inbox``), through the client's one
budget (``shell.basecamp.client`` rule 7).

Rules:
1. From ``next_url`` (a previous page's ``next``, only on the client's own origin) when given;
   else from ``position``; else after ``since`` (None: ``now``). The inbox is always asked with
   ``reasons`` = ``core.feed.ASKED_REASONS``: the filter set is the position's, so every request
   of the lane asks with the same one.
2. The read is the client's ``read`` (its pacer, its retries, a poll's yielding turn): both
   spend from the one request budget, and yield to a backlog.
3. A failure raises one of ``shell.basecamp.errors`` (a refusal with ``core.feed``'s
   reading of it); the position, the query and a ``next`` never appear in a
   message.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING
from urllib.parse import urlencode

from returns.result import Failure

from core.feed import ASKED_REASONS, InboxPage, read_inbox_page, read_inbox_refusal
from core.links import same_origin
from shell.basecamp.errors import AuthenticationFailed, FeedFailed, InboxRefused, ListingFailed
from shell.basecamp.wire import Answer

if TYPE_CHECKING:
    from shell.basecamp.client import BasecampClient


def read_cursor(
    client: BasecampClient,
    origin: str,
    resource: str,
    filters: Sequence[tuple[str, str]],
    deadline: float,
    *,
    since: int | None,
    position: str | None,
    next_url: str | None,
    what: str,
) -> Answer:
    """One page's answer (rules 1 to 3's first half); ``what`` names it in a failure."""
    if next_url is not None:
        if not same_origin(next_url, origin):
            raise FeedFailed(f"{what}'s next page is on another origin")
        url = next_url
    else:
        query = list(filters)
        query.append(
            ("position", position)
            if position is not None
            else ("since", "now" if since is None else str(since))
        )
        url = f"{client.account_url}/{resource}?{urlencode(query)}"
    try:
        answer = client.read(url, deadline, yielding=True)
    except ListingFailed as error:
        raise FeedFailed(f"{what} could not be read: {error}") from None
    if answer.status == 401:
        raise AuthenticationFailed("Basecamp refused the token (401)")
    return answer


def poll_inbox(
    client: BasecampClient,
    origin: str,
    since: int | None,
    position: str | None,
    deadline: float,
    *,
    next_url: str | None = None,
) -> InboxPage:
    """One page of the agent's inbox (rules 1 to 3)."""
    reasons = (("reasons", ",".join(ASKED_REASONS)),)
    answer = read_cursor(client, origin, "inbox.json", reasons, deadline,
                         since=since, position=position, next_url=next_url, what="the inbox")  # fmt: skip
    if answer.status in (400, 403, 409, 410):
        raise InboxRefused(read_inbox_refusal(answer.status, answer.body))
    if answer.status != 200:
        raise FeedFailed(f"the inbox answered HTTP {answer.status}")
    page = read_inbox_page(answer.body)
    if isinstance(page, Failure):
        raise FeedFailed(f"the inbox answered an unreadable page: {page.failure().reason}")
    return page.unwrap()
