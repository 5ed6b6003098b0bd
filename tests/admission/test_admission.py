"""Admission against a real stand-in and a real ledger: verdicts, intents, races."""

from __future__ import annotations

import json
import sqlite3
from datetime import timedelta

import pytest

from core.admission import DiscardReason, ReadFailure, ReadFailureKind, RecordingSummary, Verdict
from core.edges import RecordState
from core.message_kinds import GUARD_DELAY
from core.timestamps import format_timestamp
from shell.admission import Admission
from shell.basecamp.standin.faults import Fault, FaultAction
from shell.ledger import records as ledger_admission
from tests.admission.scene import Scene


def test_an_operators_mention_on_a_routed_project_is_admitted_with_a_guard_due_in_thirty_seconds(
    scene: Scene,
) -> None:
    card = scene.routed.recording_ids[0]
    event_id = scene.mention(scene.operator_id, card)

    result = scene.admission.admit(event_id, scene.client.deadline_in(10))

    assert result.applied
    record = scene.record(event_id)
    assert (record["state"], record["reason"], record["trigger_name"]) == ("admitted", "", "mentioned")
    assert record["acknowledge"] == 1
    assert record["conversation_key"] == f"recording:{card}"
    assert (record["reply_kind"], record["reply_recording_id"]) == ("comment", card)
    assert record["requester_id"] == scene.operator_id
    assert record["revision"] == 1
    assert record["decided_at"] == format_timestamp(scene.clock.now())
    snapshot = json.loads(str(record["snapshot"]))
    assert snapshot["type"] == "Comment"
    assert "please look" in snapshot["content"]
    (guard,) = scene.intents(event_id)
    assert (guard["kind"], guard["message_kind"], guard["state"]) == ("guard_ack", "boost", "pending")
    assert guard["recording_id"] == record["recording_id"]  # the event's own recording, the comment
    assert guard["not_before"] == format_timestamp(scene.clock.now() + timedelta(seconds=30))


def test_a_second_mention_on_the_same_card_while_the_first_is_admitted_is_queued(scene: Scene) -> None:
    card = scene.routed.recording_ids[0]
    first = scene.mention(scene.operator_id, card, "one")
    second = scene.mention(scene.operator_id, card, "two")

    scene.admit(first)
    scene.admit(second)

    assert scene.record(first)["state"] == "admitted"
    queued = scene.record(second)
    assert (queued["state"], queued["conversation_key"]) == ("queued", f"recording:{card}")
    assert queued["snapshot"] is not None
    assert [intent["kind"] for intent in scene.intents(second)] == ["guard_ack"]  # still asked


def test_a_mention_on_another_card_is_not_queued_behind_the_first(scene: Scene) -> None:
    first = scene.mention(scene.operator_id, scene.routed.recording_ids[0])
    other = scene.mention(scene.operator_id, scene.routed.recording_ids[1])
    scene.admit(first)
    scene.admit(other)
    assert scene.record(other)["state"] == "admitted"


def test_a_mention_in_an_unrouted_project_is_blocked_no_route_with_one_holding_reply(scene: Scene) -> None:
    card = scene.unrouted.recording_ids[0]
    event_id = scene.mention(scene.operator_id, card)

    scene.admit(event_id)
    scene.admit(event_id)  # a second offer of a record no timer retries decides nothing new

    record = scene.record(event_id)
    assert (record["state"], record["reason"], record["trigger_name"]) == ("blocked", "no_route", "mentioned")
    assert record["snapshot"] is None
    assert record["acknowledge"] == 1
    assert record["next_retry_at"] is None  # only a person's redispatch re-runs it
    (holding,) = scene.intents(event_id)
    assert (holding["kind"], holding["message_kind"], holding["recording_id"]) == (
        "holding_reply",
        "comment",
        card,
    )
    assert holding["not_before"] == format_timestamp(scene.clock.now())


def test_a_subscribed_comment_without_a_mention_is_admitted_unacknowledged_without_a_guard(
    scene: Scene,
) -> None:
    card = scene.routed.recording_ids[0]
    scene.standin.subscribe(scene.agent_id, card)
    event_id = scene.comment(scene.operator_id, card, "<div>an update, no mention</div>")

    scene.admit(event_id)

    record = scene.record(event_id)
    assert (record["state"], record["trigger_name"], record["acknowledge"]) == ("admitted", "subscribed", 0)
    assert scene.intents(event_id) == []


def test_a_comment_the_agent_is_not_subscribed_to_and_not_mentioned_in_is_not_addressed(scene: Scene) -> None:
    event_id = scene.comment(scene.operator_id, scene.routed.recording_ids[0], "<div>no mention</div>")
    scene.admit(event_id)
    assert (scene.record(event_id)["state"], scene.record(event_id)["reason"]) == (
        "discarded",
        "not_addressed",
    )


def test_an_agent_authored_comment_is_discarded_before_any_read_and_asks_for_nothing(scene: Scene) -> None:
    event_id = scene.comment(scene.agent_id, scene.routed.recording_ids[0], "<div>my own reply</div>")
    before = len(scene.standin.requests())

    scene.admit(event_id)

    record = scene.record(event_id)
    assert (record["state"], record["reason"]) == ("discarded", "agent_authored")
    assert scene.intents() == []
    assert len(scene.standin.requests()) == before


def test_a_mention_another_performed_for_its_creator_is_delegated_and_one_the_agent_performed_is_its_own(
    scene: Scene,
) -> None:
    card = scene.routed.recording_ids[0]
    delegated = scene.seen(scene.standin.mention(scene.operator_id, card, "please look"), performed_by_id=scene.other_id)
    own = scene.seen(scene.standin.mention(scene.operator_id, card, "please look"), performed_by_id=scene.agent_id)
    before = len(scene.standin.requests())
    scene.admit(delegated)
    scene.admit(own)
    assert (scene.record(delegated)["state"], scene.record(delegated)["reason"]) == ("discarded", "delegated")
    assert (scene.record(own)["state"], scene.record(own)["reason"]) == ("discarded", "agent_authored")
    assert scene.intents() == []
    assert len(scene.standin.requests()) == before, "decided by the gate, before any read"


def test_a_mention_by_someone_untrusted_is_discarded(scene: Scene) -> None:
    event_id = scene.mention(scene.other_id, scene.routed.recording_ids[0])
    scene.admit(event_id)
    record = scene.record(event_id)
    assert (record["state"], record["reason"]) == ("discarded", "untrusted_performer")
    assert scene.intents() == []


def test_content_written_by_an_untrusted_author_is_discarded_even_for_a_trusted_performer(
    scene: Scene,
) -> None:
    """The feed names the operator, but the comment it points at was written by Grace."""
    message_id = scene.standin.seed_message(
        "comment", scene.routed.recording_ids[0], scene.other_id, "<div>no mention</div>"
    )
    event = next(found for found in scene.standin.feed.events() if found.recording_id == message_id)
    scene.seen(event.id, creator_id=scene.operator_id)
    scene.standin.subscribe(scene.agent_id, scene.routed.recording_ids[0])

    scene.admit(event.id)

    record = scene.record(event.id)
    assert (record["state"], record["reason"]) == ("discarded", "untrusted_author")
    assert scene.intents() == []


def test_a_read_failure_blocks_and_never_discards_then_the_sweep_admits_it(scene: Scene) -> None:
    event_id = scene.mention(scene.operator_id, scene.routed.recording_ids[0])
    scene.standin.add_fault(Fault(FaultAction.server_error, path_contains="/comments/", times=None))

    scene.admit(event_id)

    record = scene.record(event_id)
    assert (record["state"], record["reason"]) == ("blocked", "read_failed")
    assert record["blocked_at"] == format_timestamp(scene.clock.now())
    assert record["next_retry_at"] == format_timestamp(scene.clock.now() + timedelta(minutes=10))
    assert scene.intents() == []

    assert scene.admission.sweep(scene.clock.now()) == []  # not due yet
    scene.clock.advance(600)
    still = scene.admission.sweep(scene.clock.now())
    assert [(found.state, found.reason) for found in still] == [("blocked", "read_failed")]
    assert scene.record(event_id)["blocked_at"] == record["blocked_at"]  # the window runs from the first

    scene.standin.clear_faults()
    scene.clock.advance(600)
    (done,) = scene.admission.sweep(scene.clock.now())
    assert done.applied
    assert done.state == "admitted"
    assert [intent["kind"] for intent in scene.intents(event_id)] == ["guard_ack"]


@pytest.mark.parametrize(("status", "kind"), [(404, "not_found"), (403, "forbidden"), (401, "unauthorized")])
def test_a_refused_read_ends_at_once_as_its_failure_kind(scene: Scene, status: int, kind: str) -> None:
    event_id = scene.mention(scene.operator_id, scene.routed.recording_ids[0])
    comment = int(str(scene.record(event_id)["recording_id"]))
    scene.standin.add_fault(Fault(FaultAction.refuse, path_contains="/comments/", status=status))
    found = scene.reads.summary(scene.routed.id, comment, "comment.created", scene.client.deadline_in(10))
    assert found == ReadFailure(ReadFailureKind(kind))


def test_a_throttled_read_is_blocked_throttled_and_retried_no_earlier_than_retry_at(scene: Scene) -> None:
    event_id = scene.mention(scene.operator_id, scene.routed.recording_ids[0])
    scene.standin.add_fault(
        Fault(FaultAction.rate_limit, path_contains="/comments/", retry_after="900", times=None)
    )

    scene.admit(event_id, seconds=2)

    record = scene.record(event_id)
    assert (record["state"], record["reason"]) == ("blocked", "throttled")
    assert record["retry_at"] is not None
    assert str(record["retry_at"]) >= format_timestamp(scene.clock.now() + timedelta(seconds=800))
    assert record["next_retry_at"] == record["retry_at"]


def test_the_summary_of_a_chat_line_finds_its_campfire(scene: Scene) -> None:
    line = scene.standin.seed_message("chat_line", scene.routed.campfire_id, scene.operator_id, "hello")
    found = scene.reads.summary(scene.routed.id, line, "chat.line.created", scene.client.deadline_in(10))
    assert isinstance(found, RecordingSummary)
    assert found.campfire_id == scene.routed.campfire_id
    assert found.creator is not None
    assert found.creator.id == scene.operator_id


def test_a_line_in_a_bucket_with_no_such_campfire_is_unresolved_and_a_wrong_bucket_a_mismatch(
    scene: Scene,
) -> None:
    line = scene.standin.seed_message("chat_line", scene.routed.campfire_id, scene.operator_id, "hello")
    deadline = scene.client.deadline_in(10)
    other = scene.standin.world.projects[1].id
    assert scene.reads.summary(other, line, "chat.line.created", deadline) == ReadFailure(
        ReadFailureKind.unresolved
    )
    comment = scene.standin.seed_message(
        "comment", scene.routed.recording_ids[0], scene.operator_id, "<div>x</div>"
    )
    assert scene.reads.summary(other, comment, "comment.created", deadline) == ReadFailure(
        ReadFailureKind.bucket_mismatch
    )


def test_an_operators_assignment_of_the_agent_is_admitted_from_the_events_delta(scene: Scene) -> None:
    card = scene.routed.recording_ids[0]
    event_id = scene.seen(scene.standin.assign(scene.operator_id, card, scene.agent_id))

    scene.admit(event_id)

    record = scene.record(event_id)
    assert (record["state"], record["trigger_name"], record["acknowledge"]) == ("admitted", "assigned", 1)
    assert [intent["kind"] for intent in scene.intents(event_id)] == ["guard_ack"]


def test_an_assignment_of_someone_else_is_not_addressed(scene: Scene) -> None:
    event_id = scene.seen(
        scene.standin.assign(scene.operator_id, scene.routed.recording_ids[0], scene.other_id)
    )
    scene.admit(event_id)
    assert (scene.record(event_id)["state"], scene.record(event_id)["reason"]) == (
        "discarded",
        "not_addressed",
    )


class _RacingReads:
    """Reads that let another decision commit while this one is reading."""

    def __init__(self, scene: Scene) -> None:
        self._scene = scene

    def deadline_in(self, seconds: float) -> float:
        return self._scene.reads.deadline_in(seconds)

    def summary(
        self,
        bucket_id: int,
        recording_id: int,
        event_type: str,
        deadline: float,
        *,
        event_id: int | None = None,
    ) -> RecordingSummary | ReadFailure:
        found = self._scene.reads.summary(bucket_id, recording_id, event_type, deadline, event_id=event_id)
        other = Admission(
            self._scene.ledger, self._scene.reads, self._scene.settings, GUARD_DELAY, self._scene.clock
        )
        assert other.admit(event_id or 0, deadline).applied
        return found


def test_a_verdict_racing_another_is_not_applied(scene: Scene) -> None:
    event_id = scene.mention(scene.operator_id, scene.routed.recording_ids[0])
    racing = Admission(scene.ledger, _RacingReads(scene), scene.settings, GUARD_DELAY, scene.clock)

    result = racing.admit(event_id, scene.client.deadline_in(10))

    assert not result.applied
    record = scene.record(event_id)
    assert (record["state"], record["revision"]) == ("admitted", 1)  # one verdict, written once
    assert len(scene.intents(event_id)) == 1


def test_a_stale_revision_writes_nothing(scene: Scene) -> None:
    event_id = scene.mention(scene.operator_id, scene.routed.recording_ids[0])
    scene.admit(event_id)
    with scene.ledger.write() as connection:
        loaded = ledger_admission.load(connection, event_id)
        assert loaded is not None
        assert loaded.revision == 1
        verdict = Verdict(RecordState.discarded, DiscardReason.stale)
        stale = ledger_admission.commit_verdict(
            connection, event_id, 0, verdict, scene.clock.now(), GUARD_DELAY
        )
        assert not stale
    assert scene.record(event_id)["state"] == "admitted"


def test_a_failing_intent_write_rolls_the_verdict_back_with_it(scene: Scene) -> None:
    event_id = scene.mention(scene.operator_id, scene.routed.recording_ids[0])
    with scene.ledger.write() as connection:
        connection.execute(
            "CREATE TRIGGER test_outbox_refused BEFORE INSERT ON outbox"
            " BEGIN SELECT RAISE(ABORT, 'injected: the outbox refuses'); END"
        )

    with pytest.raises(sqlite3.IntegrityError, match="injected"):
        scene.admit(event_id)

    record = scene.record(event_id)
    assert (record["state"], record["revision"], record["decided_at"]) == ("seen", 0, None)
    assert scene.intents() == []

    with scene.ledger.write() as connection:
        connection.execute("DROP TRIGGER test_outbox_refused")
    assert scene.admission.admit(event_id, scene.client.deadline_in(10)).applied
    assert scene.record(event_id)["state"] == "admitted"
