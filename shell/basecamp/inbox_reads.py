"""One page of the agent's inbox, read through the client's one budget (``shell.basecamp.client``
rule 7a): ``GET /{account}/inbox.json``.

Rules:
1. From ``next_url`` (a previous page's ``next``, only on the client's own origin) when given;
   else from ``position``; else after item ``since`` (None: ``now``; 0: the earliest retained).
   Always with ``reasons`` = ``core.inbox.ASKED_REASONS``: the filter set is the position's, so
   every request of the lane asks with the same one.
2. The read is the client's ``read`` (its pacer, its retries, a poll's yielding turn): the inbox
   spends from the one request budget, and yields to a backlog as a feed poll does.
3. 401 -> ``AuthenticationFailed``; 400, 403, 409, 410 -> ``InboxRefused`` with ``core.inbox``'s
   reading; another status or an unreadable page -> ``FeedFailed``. The position, the query and
   a ``next`` never appear in a message.
"""

from __future__ import annotations

from typing import TYPE_CHECKING
from urllib.parse import urlencode

from returns.result import Failure

from core.inbox import ASKED_REASONS, InboxPage, read_inbox_page, read_inbox_refusal
from core.links import same_origin
from shell.basecamp.errors import AuthenticationFailed, FeedFailed, InboxRefused, ListingFailed

if TYPE_CHECKING:
    from shell.basecamp.client import BasecampClient


def poll_inbox(
    client: BasecampClient,
    origin: str,
    since: int | None,
    position: str | None,
    deadline: float,
    *,
    next_url: str | None = None,
) -> InboxPage:
    """Rules 1 to 3."""
    if next_url is not None:
        if not same_origin(next_url, origin):
            raise FeedFailed("the inbox's next page is on another origin")
        url = next_url
    else:
        query = [("reasons", ",".join(ASKED_REASONS))]
        query.append(
            ("position", position)
            if position is not None
            else ("since", "now" if since is None else str(since))
        )
        url = f"{client.account_url}/inbox.json?{urlencode(query)}"
    try:
        answer = client.read(url, deadline, yielding=True)
    except ListingFailed as error:
        raise FeedFailed(f"the inbox could not be read: {error}") from None
    if answer.status == 401:
        raise AuthenticationFailed("Basecamp refused the token (401)")
    if answer.status in (400, 403, 409, 410):
        raise InboxRefused(read_inbox_refusal(answer.status, answer.body))
    if answer.status != 200:
        raise FeedFailed(f"the inbox answered HTTP {answer.status}")
    page = read_inbox_page(answer.body)
    if isinstance(page, Failure):
        raise FeedFailed(f"the inbox answered an unreadable page: {page.failure().reason}")
    return page.unwrap()
