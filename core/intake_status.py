"""How intake stands, as values the lanes write and ``status`` reads: the live lane's state, the
inbox lane's verdict, each lane's news, the losses and gaps, and the backlog that pauses intake.
Light on purpose (``bin/connect status`` imports it on every look): no feed, frames or
``returns``, and no feed or inbox position (a position is a credential).

The live lane connects within ``CONNECT_WITHIN`` (a ticket, the opening and the confirmation are
each bounded): one connecting longer, while its connector runs, is stuck, and ``status`` says so.

A lane's news is when it last recorded an event no other lane had: a lane that never brings news
while another does is not needed, or not working. Without the agent's inbox
(``not_for_principal``) intake hears by the feed and the live lane alone, and an event Basecamp
brakes, or one past a stale feed position, can go unheard.

A loss is a stretch the live lane did not hear: events after ``after_id`` through ``through_id``
(None until an event heard after it bounds it). Its repair walk is done once it has read past
``through_id``, or, with no bound, once the feed has nothing more to serve; a loss not repaired
within its window is unrecovered. A gap is a stretch the feed said it will not serve (a 410).
The backlog is the records intake handed over that no worker has yet: at ``pause`` intake stops
reading on purpose (nothing is lost: the poll lane's position stays); at ``warn`` it says so.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from datetime import datetime, timedelta
from enum import StrEnum

from core.timestamps import parse_timestamp

LANES = ("poll", "live", "repair", "inbox")
CONNECT_WITHIN = timedelta(seconds=60)
LANE_NAMES = {"poll": "feed", "live": "live", "repair": "repair", "inbox": "inbox"}


class LaneState(StrEnum):
    connecting = "connecting"
    connected = "connected"  # the subscription was confirmed
    down = "down"


@dataclass(frozen=True, slots=True)
class LaneStatus:
    """The live lane as the connector last wrote it. ``since`` is a ledger timestamp."""
    state: LaneState
    since: str
    why: str = ""
    connects: int = 0
    overflows: int = 0


def stuck_connecting(status: LaneStatus | None, now: datetime) -> bool:
    """Whether the lane of a running connector has been connecting longer than any connect takes."""
    if status is None or status.state is not LaneState.connecting:
        return False
    try:
        return now - parse_timestamp(status.since) > CONNECT_WITHIN
    except ValueError:
        return False


def lane_line(status: LaneStatus | None, short_time: Callable[[str], str], *,
              now: datetime | None = None) -> str:
    """``now``: while a connector runs, so a lane stuck connecting is named."""
    if status is None:
        return "live lane: never started (intake polls only)"
    since = short_time(status.since)
    counts = f"{status.connects} connects, {status.overflows} overflows"
    match status.state:
        case LaneState.connected:
            return f"live lane: connected since {since} ({counts})"
        case LaneState.connecting if now is not None and stuck_connecting(status, now):
            took = f"longer than a connect takes ({CONNECT_WITHIN.total_seconds():g} s)"
            return f"live lane: STUCK connecting since {since}, {took} ({counts}); intake polls meanwhile"
        case LaneState.connecting:
            return f"live lane: connecting since {since} ({counts}); intake polls meanwhile"
        case LaneState.down:
            return f"live lane: down since {since}: {status.why} ({counts}); intake polls meanwhile"


def lane_report(status: LaneStatus | None) -> dict[str, object] | None:
    return None if status is None else asdict(status)


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
    by_lane = {found.lane: found for found in news}
    parts = []
    for lane in LANES:
        found = by_lane.get(lane)
        if found is None:
            parts.append(f"{LANE_NAMES[lane]} never")
        else:
            heard = f"{short_time(found.last_new_at)} (event {found.last_new_id}; {found.news} in all)"
            parts.append(f"{LANE_NAMES[lane]} {heard}")
    return "first heard by: " + "; ".join(parts)


def intake_report(news: Sequence[LaneNews], inbox: InboxStatus | None) -> dict[str, object]:
    heard = {found.lane: {"last_new_at": found.last_new_at, "last_new_id": found.last_new_id,
                          "news": found.news} for found in news}
    shown_news = {LANE_NAMES[lane]: heard.get(lane) for lane in LANES}
    return {"inbox": None if inbox is None else asdict(inbox), "news": shown_news}


# -- losses and gaps --------------------------------------------------------------------------
class LossState(StrEnum):
    open = "open"
    repaired = "repaired"
    unrecovered = "unrecovered"


@dataclass(frozen=True, slots=True)
class Loss:
    id: int
    cause: str
    after_id: int
    through_id: int | None
    cursor: int
    window_ends_at: datetime


def walk_done(loss: Loss, read_through: int, more: bool) -> bool:
    """``read_through``: the newest id the walk has read; ``more``: the feed has more to serve now."""
    if loss.through_id is None:
        return not more
    return read_through > loss.through_id


def settle_state(done: bool, now: datetime, loss: Loss) -> LossState:
    if done:
        return LossState.repaired
    return LossState.unrecovered if now >= loss.window_ends_at else LossState.open


@dataclass(frozen=True, slots=True)
class LossCounts:
    open: int = 0
    repaired: int = 0
    unrecovered: int = 0
    gaps: int = 0


def losses_line(counts: LossCounts) -> str:
    line = f"losses: {counts.open} open, {counts.repaired} repaired, {counts.unrecovered} unrecovered;"
    line += f" gaps: {counts.gaps}"
    if counts.unrecovered or counts.gaps:
        line += " (events there may never have been heard: see the feed)"
    return line


def losses_report(counts: LossCounts) -> dict[str, int]:
    return asdict(counts)


# -- the backlog ------------------------------------------------------------------------------
BACKLOG_STATES = ("seen", "admitted", "queued")


@dataclass(frozen=True, slots=True)
class BacklogLimits:
    warn: int = 100
    pause: int = 500

    def __post_init__(self) -> None:
        if not 1 <= self.warn <= self.pause:
            raise ValueError(f"backlog limits need 1 <= warn <= pause, not {self.warn} and {self.pause}")


def backlog_reason(depth: int, limits: BacklogLimits) -> str | None:
    """Why intake pauses at this depth (what the live lane's state and the log say), or None."""
    if depth >= limits.pause:
        return f"intake paused on purpose: {depth} records wait for a worker (pause at {limits.pause})"
    return None


def backlog_warns(depth: int, limits: BacklogLimits) -> bool:
    return depth >= limits.warn
