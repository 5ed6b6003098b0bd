"""How current intake is, as ``status`` shows it: the inbox lane's verdict and position, and the
last time each lane brought what the others had not.

Rules:
1. ``InboxVerdict``: what intake knows of the agent's inbox. Without one (``not_for_principal``)
   intake hears by the feed and the live lane alone, and a braked event or one past a stale feed
   position can go unheard. ``inbox_line`` says it in one line, never which position is kept.
2. ``LaneNews``: per lane, when it last recorded an event no other lane had, which, and how many
   in all. ``news_line`` names every lane, ``never`` for one that brought nothing yet: a lane
   that never brings news while another does is a lane that is not needed, or not working.
3. ``intake_report`` is the same for ``status --json``. Nothing here holds a position.
4. Light like ``core.lane_status``: ``bin/connect status`` imports it on every look.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum

LANES = ("poll", "live", "repair", "inbox")
LANE_NAMES = {"poll": "feed", "live": "live", "repair": "repair", "inbox": "inbox"}


class InboxVerdict(StrEnum):
    available = "available"
    not_for_principal = "not_for_principal"
    failing = "failing"


@dataclass(frozen=True, slots=True)
class InboxStatus:
    """The inbox lane's row as the connector last wrote it (timestamps are the ledger's)."""

    verdict: InboxVerdict
    verdict_since: str
    why: str
    has_position: bool
    last_item_id: int
    read_at: str | None


@dataclass(frozen=True, slots=True)
class LaneNews:
    lane: str
    last_new_at: str
    last_new_id: int
    news: int


def inbox_line(status: InboxStatus | None, short_time: Callable[[str], str]) -> str:
    """Rule 1."""
    if status is None:
        return "inbox lane: never read"
    read = "never read a page" if status.read_at is None else f"read {short_time(status.read_at)}"
    kept = "position kept" if status.has_position else "no position"
    where = f"{kept}, last item {status.last_item_id}, {read}"
    since = short_time(status.verdict_since)
    match status.verdict:
        case InboxVerdict.available:
            return f"inbox lane: available ({where})"
        case InboxVerdict.not_for_principal:
            return (
                f"inbox lane: not for this principal since {since} ({status.why}); intake hears by the feed"
                " and the live lane alone: an event Basecamp brakes, or one past a stale feed position,"
                " may go unheard"
            )
        case InboxVerdict.failing:
            return f"inbox lane: failing since {since}: {status.why} ({where})"


def news_line(news: Sequence[LaneNews], short_time: Callable[[str], str]) -> str:
    """Rule 2."""
    by_lane = {found.lane: found for found in news}
    parts = []
    for lane in LANES:
        found = by_lane.get(lane)
        shown = (
            "never"
            if found is None
            else f"{short_time(found.last_new_at)} (event {found.last_new_id}; {found.news} in all)"
        )
        parts.append(f"{LANE_NAMES[lane]} {shown}")
    return "first heard by: " + "; ".join(parts)


def intake_report(news: Sequence[LaneNews], inbox: InboxStatus | None) -> dict[str, object]:
    """Rule 3."""
    by_lane = {found.lane: found for found in news}
    shown_news: dict[str, object] = {
        LANE_NAMES[lane]: None
        if (found := by_lane.get(lane)) is None
        else {"last_new_at": found.last_new_at, "last_new_id": found.last_new_id, "news": found.news}
        for lane in LANES
    }
    shown_inbox = None
    if inbox is not None:
        shown_inbox = {
            "verdict": inbox.verdict.value,
            "verdict_since": inbox.verdict_since,
            "why": inbox.why,
            "has_position": inbox.has_position,
            "last_item_id": inbox.last_item_id,
            "read_at": inbox.read_at,
        }
    return {"inbox": shown_inbox, "news": shown_news}
