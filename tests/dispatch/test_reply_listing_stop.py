"""``shell.dispatcher.ReplyAdopter`` under a shutdown: a stop ends the listing between reply
destinations and does not wait for one under way; what was listed whole is kept, the rest left
"not known". A real ledger; a lister with behaviour in place of the client (the stand-in version
with a real process is ``tests/connector/test_stop_during_adoption.py``)."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from datetime import datetime

import pytest

from core.destinations import Destination, ListedMessage
from shell.basecamp.errors import ListingFailed
from shell.dispatcher import ReplyAdopter
from shell.ledger.connection import Ledger
from tests.support.ledger_world import LedgerWorld

AGENT = 7


@dataclass
class Lister:
    """Lists one message per destination; ``then`` runs inside each listing, before it answers."""

    then: list[str]
    stop: threading.Event
    release: threading.Event = field(default_factory=threading.Event)
    calls: int = 0

    def list(self, destination: Destination, since: datetime, creator_id: int, deadline: float) -> list[ListedMessage]:
        self.calls += 1
        match self.then.pop(0):
            case "stop":  # the shutdown begins while this listing finishes whole
                self.stop.set()
            case "hang":  # Basecamp does not answer until the test lets it
                self.release.wait(30)
                raise ListingFailed("no answer")
            case "break":
                raise RuntimeError("not Basecamp's")
        return [ListedMessage(900 + self.calls, since, creator_id, "a reply")]


def _two_delivered_rows(world: LedgerWorld) -> int:
    world.request(101, recording_id=9)
    world.request(102, recording_id=9)
    task_id = world.task(101, 102)
    world.attempt(task_id)
    for event_id in (101, 102):
        world.get_dispatch(task_id, event_id)
        world.ack(task_id, event_id, ack_id=5_000_000 + event_id)
    return task_id


def test_a_stop_ends_the_listing_between_destinations_and_keeps_what_was_listed_whole(
    world: LedgerWorld, ledger: Ledger
) -> None:
    task_id = _two_delivered_rows(world)
    stop = threading.Event()
    lister = Lister(["stop", "list"], stop)
    listed = ReplyAdopter(ledger, lister, AGENT).list_replies(task_id, stop)
    assert lister.calls == 1, "no destination is listed after the stop"
    assert list(listed.listed) == [101], "the first was listed whole; the second is not known"


def test_a_listing_under_way_is_not_waited_for_once_the_stop_comes(world: LedgerWorld, ledger: Ledger) -> None:
    task_id = _two_delivered_rows(world)
    stop = threading.Event()
    lister = Lister(["list", "hang"], stop)
    threading.Timer(0.3, stop.set).start()
    started = time.monotonic()
    try:
        listed = ReplyAdopter(ledger, lister, AGENT).list_replies(task_id, stop)
    finally:
        lister.release.set()
    assert time.monotonic() - started < 5, "the hanging listing's 30 s were not waited for"
    assert list(listed.listed) == [101]


def test_without_a_stop_every_destination_is_listed(world: LedgerWorld, ledger: Ledger) -> None:
    task_id = _two_delivered_rows(world)
    stop = threading.Event()
    listed = ReplyAdopter(ledger, Lister(["list", "list"], stop), AGENT).list_replies(task_id, stop)
    assert sorted(listed.listed) == [101, 102]


def test_what_a_listing_raises_besides_basecamp_s_failures_is_raised_on_the_caller_s_thread(
    world: LedgerWorld, ledger: Ledger
) -> None:
    task_id = _two_delivered_rows(world)
    stop = threading.Event()
    with pytest.raises(RuntimeError, match="not Basecamp's"):
        ReplyAdopter(ledger, Lister(["break"], stop), AGENT).list_replies(task_id, stop)
