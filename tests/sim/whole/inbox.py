"""The simulated agent's inbox, Basecamp's brakes and long outages, and the check
``no-addressed-event-missed``.

Rules:
1. Every mention addresses the agent: the inbox holds one item per mention, the feed's and the
   braked ones alike, its addressing ids increasing as the mentions were made (a mention is
   itemized at the first read after it, in event-id order). A braked mention (``brake``) takes the
   run's next event id like any other, and is absent from the feed and the cable: only the inbox
   has it.
2. ``poll_inbox`` answers as Basecamp's does (``shell.intake.inbox_lane.InboxReader``): after
   ``since`` (``None``: now; 0: the earliest retained) or a position (the last item's id, as text),
   at most ``PAGE_SIZE`` items, ``next`` while more remain. Items kept ``RETENTION``; a position
   with an item after it that retention dropped is the inbox's own 410 (``InboxGone``): those
   items are expired unread. ``inbox_blips`` fails that many next reads (a 5xx).
3. Quiescence heals it (``heal``): its faults end, and the inbox lane reads it at its next turn
   (each quiescence turn passes hours: many of the lane's turns).
4. A long outage (``outage``): mentions arrive, some braked, time passes past the feed's horizon
   (rarely past the inbox's 30 days too), and the feed's epoch passes all of them: the feed will
   never serve them (a 410, a gap), and only the inbox can bring them.
5. ``no-addressed-event-missed`` (at the end): every mention -- every event addressed to the
   agent -- is exactly one record (the events table's key makes "one" hold; the check asks that it
   is there), unless its item was expired unread by the inbox's retention and no other lane could
   bring it (braked, or inside a feed's gap).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta
from typing import TYPE_CHECKING

from core.feed import InboxGone, InboxItem, InboxPage
from shell.basecamp.errors import BasecampError, InboxRefused
from tests.sim.whole.basecamp import ROUTED, Mention, SimBasecamp, _event

if TYPE_CHECKING:
    from tests.sim.whole.run import Run

PAGE_SIZE = 3
RETENTION = timedelta(days=30)
FIRST_ITEM = 9_100_000_000


@dataclass
class SimInbox:
    basecamp: SimBasecamp
    braked: list[Mention] = field(default_factory=list)
    items: list[tuple[int, Mention]] = field(default_factory=list)  # (addressing id, mention)
    expired_unread: set[int] = field(default_factory=set)  # event ids (rule 2)
    inbox_blips: int = 0

    def _itemize(self) -> None:
        itemized = {mention.event_id for _, mention in self.items}
        fresh = sorted(
            (mention for mention in [*self.basecamp.feed, *self.braked] if mention.event_id not in itemized),
            key=lambda mention: mention.event_id,
        )
        for mention in fresh:
            self.items.append((FIRST_ITEM + len(self.items) + 1, mention))

    def poll_inbox(
        self, since: int | None, position: str | None, deadline: float, *, next_url: str | None = None
    ) -> InboxPage:
        if self.inbox_blips:
            self.inbox_blips -= 1
            self.basecamp.on_fault("inbox failed")
            raise BasecampError("the inbox is down")
        self._itemize()
        retained = self.basecamp.clock.now() - RETENTION
        cursor = next_url or position
        if cursor is not None:
            after = int(cursor)
            expired = [
                mention.event_id for number, mention in self.items if number > after and mention.at < retained
            ]
            if expired:
                self.expired_unread.update(expired)
                self.basecamp.on_fault("inbox 410: the position fell behind the retention")
                raise InboxRefused(InboxGone())
        elif since is None:
            after = self.items[-1][0] if self.items else FIRST_ITEM
        else:
            after = since
        ready = [
            (number, mention) for number, mention in self.items if number > after and mention.at >= retained
        ]
        page, more = ready[:PAGE_SIZE], len(ready) > PAGE_SIZE
        last = page[-1][0] if page else max(after, FIRST_ITEM)
        shown = tuple(
            InboxItem(number, "mentioned", mention.created_at, _event(mention)) for number, mention in page
        )
        return InboxPage(shown, str(last), str(last) if more else None)


def attach(run: Run) -> SimInbox:
    """The run's Basecamp gets an agent's inbox."""
    inbox = SimInbox(run.basecamp)
    run.basecamp.inbox = inbox
    return inbox


def brake(run: Run) -> None:
    """A mention Basecamp braked (rule 1): the run's next event id, in the inbox alone."""
    inbox = _inbox(run)
    event_id = run.next_event
    run.next_event += 1
    now = run.clock.now()
    recording = 555 if run.rng.random() < 0.3 else 1_000_000 + event_id
    from core.timestamps import format_timestamp

    inbox.braked.append(Mention(event_id, ROUTED, recording, False, format_timestamp(now), now))
    run.note(f"event {event_id} braked: in the inbox alone")
    run.cover("inbox: a braked mention")


def outage(run: Run) -> None:
    """Rule 4: what arrives during a long outage is past the feed's horizon when it ends."""
    for _ in range(run.rng.randrange(1, 4)):
        brake(run) if run.rng.random() < 0.3 else run._mention()
    days = 31 if run.rng.random() < 0.125 else 0
    run.clock.advance(run.rng.choice([3700, 7 * 3600]) + days * 86_400)
    basecamp = run.basecamp
    if basecamp.feed:
        basecamp.epoch_after_id = max(basecamp.epoch_after_id, basecamp.feed[-1].event_id)
    run.note(f"a long outage{' past the inbox retention' if days else ''}: the feed's epoch passes"
             f" after {basecamp.epoch_after_id}")  # fmt: skip
    run.cover("inbox: a long outage past the feed's horizon")


def fault(run: Run) -> None:
    _inbox(run).inbox_blips = run.rng.choice([1, 2])
    run.note(f"next {_inbox(run).inbox_blips} inbox reads fail")


def heal(run: Run) -> None:
    """Quiescence: the inbox answers again, and the hours the quiescence passes in a turn are
    many of the inbox lane's turns: it is read at the next."""
    _inbox(run).inbox_blips = 0
    run.connector.connector.inbox.ask_now()


def _inbox(run: Run) -> SimInbox:
    inbox = run.basecamp.inbox
    assert isinstance(inbox, SimInbox)
    return inbox


def judge(run: Run, events: dict[int, str], lanes: dict[int, str], gaps: list[tuple[int, int]]) -> None:
    """Rule 5."""
    inbox = _inbox(run)
    braked = {mention.event_id for mention in inbox.braked}
    for mention in [*run.basecamp.feed, *inbox.braked]:
        event_id = mention.event_id
        if event_id in events:
            if lanes.get(event_id) == "inbox":
                run.cover("inbox: recorded an event no other lane had")
            continue
        unreachable = event_id in braked or any(after < event_id <= resumed for after, resumed in gaps)
        if event_id in inbox.expired_unread and unreachable:
            run.cover("inbox: an event expired unread past the retention")
            continue
        run.truth.violations.append(
            ("no-addressed-event-missed", f"event {event_id} was addressed to the agent and is no record")
        )
