"""What status says of how current intake is: the inbox lane's verdict and position (kept or not,
never which), and when each lane last brought an event no other had -- from a real ledger."""

from __future__ import annotations

from pathlib import Path

from core.feed import FeedEvent
from core.intake_status import InboxStatus, InboxVerdict, inbox_line, intake_report, news_line
from shell.ledger import intake, records
from shell.ledger.connection import open_ledger
from shell.ledger.intake import Lane, read_intake_status


def event(event_id: int) -> FeedEvent:
    return FeedEvent(event_id, "comment", "created", "comment.created", 2, 3, None, 4, "2026-12-01T09:00:00Z")


def short(stamp: str) -> str:
    return stamp[11:19]


def test_each_lane_says_when_it_last_brought_what_no_other_had(tmp_path: Path) -> None:
    tmp_path.chmod(0o700)
    with open_ledger(tmp_path / "ledger.sqlite3") as ledger:
        with ledger.write() as connection:
            records.insert_seen(connection, [(event(1), "2026-12-01T09:00:00.000000000Z")], Lane.poll,
                                "2026-12-01T09:00:01.000000000Z")  # fmt: skip
            records.insert_seen(connection, [(event(1), "x"), (event(2), "2026-12-01T09:00:00.000000000Z")],
                                Lane.inbox, "2026-12-01T09:00:05.000000000Z")  # fmt: skip
            records.insert_seen(connection, [(event(2), "x")], Lane.live, "2026-12-01T09:00:06.000000000Z")
            intake.save_inbox_page(connection, "a-secret-position", 91, 0, "2026-12-01T09:00:05.000000000Z")
        news, inbox = read_intake_status(ledger)
    line = news_line(news, short)
    assert line == ("first heard by: feed 09:00:01 (event 1; 1 in all); live never; repair never;"
                    " inbox 09:00:05 (event 2; 1 in all)")  # fmt: skip
    assert inbox is not None
    assert inbox_line(inbox, short) == "inbox lane: available (position kept, last item 91, read 09:00:05)"
    shown = intake_report(news, inbox)
    assert "a-secret-position" not in repr(shown)
    assert shown["news"] == {
        "feed": {"last_new_at": "2026-12-01T09:00:01.000000000Z", "last_new_id": 1, "news": 1},
        "live": None, "repair": None,
        "inbox": {"last_new_at": "2026-12-01T09:00:05.000000000Z", "last_new_id": 2, "news": 1},
    }  # fmt: skip


def test_the_inbox_lines_for_each_verdict() -> None:
    assert inbox_line(None, short) == "inbox lane: never read"
    none = InboxStatus(
        InboxVerdict.not_for_principal, "2026-12-01T09:00:00Z", "403: agents only", False, 0, None
    )
    assert inbox_line(none, short).startswith(
        "inbox lane: not for this principal since 09:00:00 (403: agents only)"
    )
    assert "may go unheard" in inbox_line(none, short)
    failing = InboxStatus(
        InboxVerdict.failing, "2026-12-01T09:00:00Z", "HTTP 500", True, 7, "2026-12-01T08:59:00Z"
    )
    assert inbox_line(failing, short) == (
        "inbox lane: failing since 09:00:00: HTTP 500 (position kept, last item 7, read 08:59:00)"
    )
