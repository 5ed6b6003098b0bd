"""``core.adoption.check_receipt``: is the message a person names this intent's? Plain values."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from returns.result import Failure, Success

from core.adoption import ReadMessage, ReceiptAccepted, check_receipt
from core.destinations import Destination, MessageKind

AGENT = 1_049_715_901
SINCE = datetime(2026, 11, 29, 11, 58, tzinfo=UTC)
BODY = "<div>I can't start on this here yet.<br>Event 7 · automatic notice</div>"
HERE = Destination(MessageKind.comment, 20, 3001)


def message(**changes: object) -> ReadMessage:
    values: dict[str, object] = {
        "id": 9001,
        "at_recording_id": 3001,
        "creator_id": AGENT,
        "created_at": SINCE + timedelta(minutes=1),
        "content": "<div dir=\"auto\">I can't start on this here yet. Event 7 · automatic notice</div>",
    }
    return ReadMessage(**(values | changes))  # type: ignore[arg-type]


def check(found: ReadMessage | None, body: str = BODY, workers: frozenset[int] = frozenset()) -> object:
    return check_receipt(
        receipt_id=9001, body=body, destination=HERE, agent_id=AGENT, since=SINCE, found=found,
        worker_messages=workers,
    )  # fmt: skip


def test_the_agents_message_with_the_intents_words_at_its_destination_is_accepted() -> None:
    assert check(message()) == Success(ReceiptAccepted(9001))


def test_a_message_created_at_the_listing_bound_is_accepted() -> None:
    assert check(message(created_at=SINCE)) == Success(ReceiptAccepted(9001))


@pytest.mark.parametrize(
    ("found", "reason"),
    [
        (None, "message 9001 was not found at comment on recording 3001"),
        (message(at_recording_id=3002), "message 9001 is on 3002, not at the intent's destination"),
        (message(creator_id=11), f"message 9001 was written by person 11, not by the agent ({AGENT})"),
        (message(content="<div>I can't start on this here.</div>"), "message 9001 does not carry the intent's words"),
        (message(created_at=SINCE - timedelta(seconds=1)), "message 9001 was created at 2026-11-29T11:57:59"),
    ],
)
def test_a_message_that_differs_is_refused_naming_what_differed(found: ReadMessage | None, reason: str) -> None:
    refused = check(found)
    assert isinstance(refused, Failure)
    assert str(refused.failure()).startswith(reason)


def test_a_workers_own_message_with_the_intents_words_is_refused() -> None:
    """Reconciliation: a worker's acknowledgement or reply is never the connector's,
    however alike the words (a guard's fixed form is short enough to collide)."""
    refused = check(message(), workers=frozenset({8000, 9001}))
    assert isinstance(refused, Failure)
    assert str(refused.failure()).startswith("message 9001 is a worker's own")
    assert check(message(), workers=frozenset({8000})) == Success(ReceiptAccepted(9001))


def test_a_body_without_words_accepts_nothing() -> None:
    refused = check(message(content="<div></div>"), body="<div> </div>")
    assert isinstance(refused, Failure)
    assert "has no words" in str(refused.failure())


def test_a_refusal_never_carries_the_words() -> None:
    for found in (message(content="<div>secret plans</div>"), message(creator_id=11)):
        refused = check(found)
        assert isinstance(refused, Failure)
        assert "secret" not in str(refused.failure())
        assert "start on this" not in str(refused.failure())
