"""core.admission: the verdict from a recording summary, queued vs admitted, the blocked retry
schedule, and mention detection."""

from __future__ import annotations

import base64
import json
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.admission import (
    BLOCKED_RETRY_INTERVAL,
    BLOCKED_RETRY_WINDOW,
    MATRIX,
    AdmissionSettings,
    Author,
    BlockedReason,
    DiscardReason,
    EventPointer,
    ReadFailure,
    ReadFailureKind,
    RecordingStatus,
    RecordingSummary,
    Trigger,
    Verdict,
    decide,
    mentioned_in,
    next_retry,
    settle_verdict,
)
from core.configuration import TrustMode
from core.destinations import Destination, MessageKind
from core.dispatch_tools.instruction import read_snapshot
from core.edges import RecordState
from core.intent_kinds import IntentKind
from core.message_kinds import intents_for_verdict
from core.snapshots import RecordSnapshot


def as_record(event: EventPointer, verdict: Verdict) -> RecordSnapshot:
    """The record as the verdict's transaction leaves it, for ``core.message_kinds.intents_for_verdict``."""
    return RecordSnapshot(
        event_id=event.id,
        state=verdict.state,
        reason="" if verdict.reason is None else str(verdict.reason),
        bucket_id=event.bucket_id,
        recording_id=event.recording_id,
        acknowledge=verdict.acknowledge,
        reply_kind=verdict.reply_kind,
        reply_bucket_id=verdict.reply_bucket_id,
        reply_recording_id=verdict.reply_recording_id,
    )


AGENT = 900
OPERATOR = 100
FRIEND = 200
STRANGER = 300
SERVED = 10
UNSERVED = 20
WATCHED = 40
NOW = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)

SETTINGS = AdmissionSettings(
    agent_id=AGENT,
    operator_id=OPERATOR,
    trust_mode=TrustMode.allowlist,
    allowlist=frozenset({FRIEND}),
    routed_projects=frozenset({SERVED, WATCHED}),
    watched_projects=frozenset({WATCHED}),
)
HUMAN = Author(OPERATOR, "User")


def pointer(event_type: str = "comment.created", **changes: object) -> EventPointer:
    base = EventPointer(
        id=1, event_type=event_type, bucket_id=SERVED, creator_id=OPERATOR,
        performed_by_id=None, actor_type="person", recording_id=5,
    )
    return replace(base, **changes)  # type: ignore[arg-type]


def summary(**changes: object) -> RecordingSummary:
    base = RecordingSummary(
        status=RecordingStatus.active, type="Comment", creator=HUMAN, parent_id=7, parent_type="Kanban::Card",
        campfire_id=None, mentioned_person_ids=frozenset({AGENT}), app_url="https://3.basecamp.com/1/x",
        title="Fix it", content="<div>please</div>", updated_at="2026-11-29T11:59:00Z",
    )
    return replace(base, **changes)  # type: ignore[arg-type]


def sgid(person_id: int) -> str:
    payload = base64.b64encode(f"gid://bc3/Person/{person_id}?expires_in".encode()).decode()
    return f"{payload}--{'0' * 40}"


def mention(person_id: int) -> str:
    return (
        f'<bc-attachment sgid="{sgid(person_id)}" content-type="application/vnd.basecamp.mention">'
        f"<figure><figcaption>Someone</figcaption></figure></bc-attachment>"
    )


# -- admitted: triggers, conversation and reply ------------------------------------------------------

ADMITTED = [
    ("a comment mentioning the agent", pointer(), summary(), Trigger.mentioned, "recording:7",
     MessageKind.comment, 7),
    ("a chat line mentioning the agent", pointer("chat.line.created"),
     summary(type="Chat::Lines::Text", parent_id=None, campfire_id=33), Trigger.mentioned, "campfire:33",
     MessageKind.chat_line, 33),
    ("a card created mentioning the agent", pointer("card.created"), summary(type="Kanban::Card"),
     Trigger.mentioned, "recording:5", MessageKind.comment, 5),
    ("a subscribed comment", pointer(), summary(mentioned_person_ids=frozenset(), subscribed=True),
     Trigger.subscribed, "recording:7", MessageKind.comment, 7),
    ("an assignment to the agent", pointer("todo.assignment_changed"),
     summary(type="Todo", added_person_ids=frozenset({AGENT}), assignee_ids=frozenset({AGENT, 1})),
     Trigger.assigned, "recording:5", MessageKind.comment, 5),
    ("a completion on a watched route", pointer("todo.completed", bucket_id=WATCHED),
     summary(type="Todo", mentioned_person_ids=frozenset()), Trigger.completed, "recording:5",
     MessageKind.comment, 5),
    ("a completion of the agent's todo", pointer("card.completed"),
     summary(assignee_ids=frozenset({AGENT})), Trigger.completed, "recording:5", MessageKind.comment, 5),
    ("a completion the agent follows", pointer("card.completed"), summary(subscribed=True),
     Trigger.completed, "recording:5", MessageKind.comment, 5),
]


AdmittedRow = tuple[str, EventPointer, RecordingSummary, Trigger, str, MessageKind, int]


@pytest.mark.parametrize("row", ADMITTED, ids=[row[0] for row in ADMITTED])
def test_admitted(row: AdmittedRow) -> None:
    _, event, read, trigger, key, kind, reply = row
    verdict = decide(event, SETTINGS, read)
    assert verdict.state is RecordState.admitted
    assert verdict.reason is None
    assert verdict.trigger is trigger
    assert verdict.acknowledge == (trigger in (Trigger.mentioned, Trigger.assigned))
    assert (verdict.conversation_key, verdict.reply_kind, verdict.reply_recording_id) == (key, kind, reply)
    assert verdict.reply_bucket_id == event.bucket_id
    assert verdict.snapshot is not None


def test_the_snapshot_is_what_the_instruction_reads() -> None:
    verdict = decide(pointer(), SETTINGS, summary())
    assert verdict.snapshot is not None
    snapshot = read_snapshot(json.dumps(dict(verdict.snapshot)))
    assert snapshot is not None
    assert (snapshot.type, snapshot.title, snapshot.app_url, snapshot.content, snapshot.updated_at) == (
        "Comment", "Fix it", "https://3.basecamp.com/1/x", "<div>please</div>", "2026-11-29T11:59:00Z"
    )


def test_the_requester_is_the_author_of_a_mention_and_the_performer_of_an_assignment() -> None:
    assert decide(pointer(creator_id=FRIEND), SETTINGS, summary(creator=Author(FRIEND, "User"))).requester_id == FRIEND
    assigned = summary(added_person_ids=frozenset({AGENT}), assignee_ids=frozenset({AGENT}), creator=Author(7, "User"))
    assert decide(pointer("todo.assignment_changed"), SETTINGS, assigned).requester_id == OPERATOR


# -- discarded and blocked after the read ---------------------------------------------------------------

PROJECT = replace(SETTINGS, trust_mode=TrustMode.project)
STRANGER_EVENT = pointer(creator_id=STRANGER)
STRANGER_SUMMARY = summary(creator=Author(STRANGER, "User"))

DECISIONS = [
    # gate discards reach the verdict unchanged
    ("not in matrix", pointer("boost.created"), SETTINGS, summary(), None,
     RecordState.discarded, DiscardReason.not_in_matrix),
    ("gate: agent authored", pointer(creator_id=AGENT), SETTINGS, summary(), None,
     RecordState.discarded, DiscardReason.agent_authored),
    ("gate: delegated", pointer(performed_by_id=77), SETTINGS, summary(), None,
     RecordState.discarded, DiscardReason.delegated),
    ("gate: completion unrouted", pointer("todo.completed", bucket_id=UNSERVED), SETTINGS, summary(), None,
     RecordState.discarded, DiscardReason.no_route),
    # membership
    ("membership not read", STRANGER_EVENT, PROJECT, STRANGER_SUMMARY, None,
     RecordState.blocked, BlockedReason.trust_unverified),
    ("not a member", STRANGER_EVENT, PROJECT, STRANGER_SUMMARY, frozenset({1}),
     RecordState.discarded, DiscardReason.untrusted_performer),
    ("a member", STRANGER_EVENT, PROJECT, STRANGER_SUMMARY, frozenset({STRANGER}),
     RecordState.admitted, None),
    # the recording
    ("drafted", pointer(), SETTINGS, summary(status=RecordingStatus.drafted), None,
     RecordState.discarded, DiscardReason.stale),
    ("trashed", pointer(), SETTINGS, summary(status=RecordingStatus.trashed), None,
     RecordState.discarded, DiscardReason.stale),
    ("no creator", pointer(), SETTINGS, summary(creator=None), None, RecordState.blocked, BlockedReason.read_failed),
    ("a comment without parent", pointer(), SETTINGS, summary(parent_id=None), None,
     RecordState.blocked, BlockedReason.read_failed),
    ("a line without campfire", pointer("chat.line.created"), SETTINGS, summary(campfire_id=None), None,
     RecordState.blocked, BlockedReason.read_failed),
    # the author
    ("the agent wrote it", pointer(), SETTINGS, summary(creator=Author(AGENT, "User")), None,
     RecordState.discarded, DiscardReason.agent_authored),
    ("another agent wrote it", pointer(), SETTINGS, summary(creator=Author(4, "Agent")), None,
     RecordState.discarded, DiscardReason.agent_authored),
    ("an untrusted author", pointer(), SETTINGS, summary(creator=Author(STRANGER, "User")), None,
     RecordState.discarded, DiscardReason.untrusted_author),
    ("an untrusted author, subscribed too", pointer(), SETTINGS,
     summary(creator=Author(STRANGER, "User"), subscribed=True), None,
     RecordState.discarded, DiscardReason.untrusted_author),
    ("an allowlisted author", pointer(), SETTINGS, summary(creator=Author(FRIEND, "User")), None,
     RecordState.admitted, None),
    ("project mode: author not read", pointer(), PROJECT, STRANGER_SUMMARY, None,
     RecordState.blocked, BlockedReason.trust_unverified),
    ("project mode: author a member", pointer(), PROJECT, STRANGER_SUMMARY, frozenset({STRANGER}),
     RecordState.admitted, None),
    # the rules
    ("not addressed", pointer(), SETTINGS, summary(mentioned_person_ids=frozenset({1})), None,
     RecordState.discarded, DiscardReason.not_addressed),
    ("assignment delta unread", pointer("todo.assignment_changed"), SETTINGS,
     summary(added_person_ids=None, assignee_ids=frozenset({AGENT})), None,
     RecordState.blocked, BlockedReason.delta_unverified),
    ("assigned earlier, not by this event", pointer("todo.assignment_changed"), SETTINGS,
     summary(added_person_ids=frozenset({1}), assignee_ids=frozenset({AGENT})), None,
     RecordState.discarded, DiscardReason.not_addressed),
    ("added, then unassigned", pointer("todo.assignment_changed"), SETTINGS,
     summary(added_person_ids=frozenset({AGENT}), assignee_ids=frozenset()), None,
     RecordState.discarded, DiscardReason.not_addressed),
    ("a completion nobody asked about", pointer("todo.completed"), SETTINGS, summary(), None,
     RecordState.discarded, DiscardReason.not_addressed),
    # no route
    ("a mention, unrouted", pointer(bucket_id=UNSERVED), SETTINGS, summary(), None,
     RecordState.blocked, BlockedReason.no_route),
    ("a subscription, unrouted", pointer(bucket_id=UNSERVED), SETTINGS,
     summary(mentioned_person_ids=frozenset(), subscribed=True), None,
     RecordState.discarded, DiscardReason.not_addressed),
    ("an assignment, unrouted", pointer("card.assignment_changed", bucket_id=UNSERVED), SETTINGS,
     summary(added_person_ids=frozenset({AGENT}), assignee_ids=frozenset({AGENT})), None,
     RecordState.blocked, BlockedReason.no_route),
]


DecisionRow = tuple[
    str, EventPointer, AdmissionSettings, RecordingSummary, frozenset[int] | None, RecordState,
    DiscardReason | BlockedReason | None,
]


@pytest.mark.parametrize("row", DECISIONS, ids=[row[0] for row in DECISIONS])
def test_decisions(row: DecisionRow) -> None:
    _, event, settings, read, members, state, reason = row
    verdict = decide(event, settings, read, members)
    assert (verdict.state, verdict.reason) == (state, reason)


def test_a_mention_in_a_comment_never_falls_through_to_subscribed() -> None:
    verdict = decide(pointer(), SETTINGS, summary(subscribed=True))
    assert verdict.trigger is Trigger.mentioned
    refused = decide(pointer(), SETTINGS, summary(creator=Author(4, "Agent"), subscribed=True))
    assert (refused.state, refused.trigger) == (RecordState.discarded, None)


def test_blocked_no_route_keeps_its_trigger_and_reply_for_the_holding_reply() -> None:
    event = pointer(bucket_id=UNSERVED)
    verdict = decide(event, SETTINGS, summary())
    assert (verdict.trigger, verdict.acknowledge, verdict.snapshot) == (Trigger.mentioned, True, None)
    (intent,) = intents_for_verdict(as_record(event, verdict), NOW)
    assert intent.kind is IntentKind.holding_reply
    assert intent.destination == Destination(MessageKind.comment, UNSERVED, 7)


def test_an_admitted_or_queued_request_arms_the_guard() -> None:
    event = pointer()
    for live in (False, True):
        verdict = settle_verdict(decide(event, SETTINGS, summary()), live)
        (intent,) = intents_for_verdict(as_record(event, verdict), NOW)
        assert intent.kind is IntentKind.guard_ack
    subscribed = decide(event, SETTINGS, summary(mentioned_person_ids=frozenset(), subscribed=True))
    assert intents_for_verdict(as_record(event, subscribed), NOW) == ()


# -- read failures are blocked, never discarded ----------------------------------------------------------

FAILURES = [
    (ReadFailureKind.failed, BlockedReason.read_failed),
    (ReadFailureKind.not_found, BlockedReason.read_failed),
    (ReadFailureKind.forbidden, BlockedReason.read_failed),
    (ReadFailureKind.unauthorized, BlockedReason.read_unauthorized),
    (ReadFailureKind.unresolved, BlockedReason.read_unresolved),
    (ReadFailureKind.bucket_mismatch, BlockedReason.bucket_mismatch),
    (ReadFailureKind.unroutable, BlockedReason.unroutable),
    (ReadFailureKind.throttled, BlockedReason.throttled),
]


@pytest.mark.parametrize(("kind", "reason"), FAILURES)
def test_a_read_failure_is_blocked(kind: ReadFailureKind, reason: BlockedReason) -> None:
    retry_at = NOW + timedelta(minutes=3)
    verdict = decide(pointer(), SETTINGS, ReadFailure(kind, retry_at))
    assert (verdict.state, verdict.reason, verdict.snapshot) == (RecordState.blocked, reason, None)
    assert verdict.retry_at == (retry_at if kind is ReadFailureKind.throttled else None)


def test_a_failure_mapping_covers_every_kind() -> None:
    assert {kind for kind, _ in FAILURES} == set(ReadFailureKind)


# -- settle --------------------------------------------------------------------------------------------


def test_an_admitted_verdict_is_queued_behind_a_live_conversation() -> None:
    admitted = decide(pointer(), SETTINGS, summary())
    assert settle_verdict(admitted, conversation_live=False) == admitted
    queued = settle_verdict(admitted, conversation_live=True)
    assert queued == replace(admitted, state=RecordState.queued)
    blocked = decide(pointer(bucket_id=UNSERVED), SETTINGS, summary())
    assert settle_verdict(blocked, conversation_live=True) == blocked


def test_a_verdict_refuses_to_be_incoherent() -> None:
    with pytest.raises(ValueError, match="snapshot"):
        Verdict(RecordState.discarded, DiscardReason.stale, snapshot={"type": "x"})
    with pytest.raises(ValueError, match="snapshot"):
        Verdict(RecordState.admitted)
    with pytest.raises(ValueError, match="acknowledge"):
        Verdict(RecordState.blocked, BlockedReason.read_failed, Trigger.subscribed, acknowledge=True)
    with pytest.raises(ValueError, match="retry_at"):
        Verdict(RecordState.blocked, BlockedReason.read_failed, retry_at=NOW)
    with pytest.raises(ValueError, match="not a verdict"):
        Verdict(RecordState.dispatched, None, snapshot={})


# -- the blocked retry schedule -------------------------------------------------------------------------


def test_the_constants_are_the_specs() -> None:
    assert (timedelta(minutes=10), timedelta(hours=24)) == (BLOCKED_RETRY_INTERVAL, BLOCKED_RETRY_WINDOW)


@pytest.mark.parametrize("reason", ["read_failed", "read_unresolved", "delta_unverified", "trust_unverified",
                                    "throttled"])
def test_timed_and_bounded(reason: str) -> None:
    since = NOW - timedelta(hours=1)
    assert next_retry(reason, since, NOW, None) == NOW + BLOCKED_RETRY_INTERVAL
    late = since + BLOCKED_RETRY_WINDOW - timedelta(minutes=5)
    assert next_retry(reason, since, late, None) is None


def test_throttled_waits_for_its_retry_at_never_before() -> None:
    since = NOW - timedelta(minutes=1)
    assert next_retry("throttled", since, NOW, NOW + timedelta(minutes=2)) == NOW + timedelta(minutes=2)
    assert next_retry("throttled", since, NOW, NOW + timedelta(hours=2)) == NOW + timedelta(hours=2)
    assert next_retry("throttled", since, NOW, NOW - timedelta(minutes=2)) == NOW
    assert next_retry("throttled", since, NOW, since + BLOCKED_RETRY_WINDOW + timedelta(seconds=1)) is None


def test_config_unreadable_is_timed_without_end() -> None:
    since = NOW - timedelta(days=30)
    assert next_retry("config_unreadable", since, NOW, None) == NOW + BLOCKED_RETRY_INTERVAL


def test_a_record_blocked_by_a_refused_token_is_timed_without_end() -> None:
    """A token outage of over a day leaves no mention blocked for good: the 401 was the token's."""
    since = NOW - timedelta(days=3)
    assert next_retry("read_unauthorized", since, NOW, None) == NOW + BLOCKED_RETRY_INTERVAL


@pytest.mark.parametrize("reason", ["no_route", "bucket_mismatch", "unroutable", "spawn_failed", "stale", ""])
def test_not_timed(reason: str) -> None:
    assert next_retry(reason, NOW, NOW, NOW + timedelta(minutes=1)) is None


# -- mentions -------------------------------------------------------------------------------------------


def test_mentions_are_read_from_rich_text() -> None:
    content = f"<div>Hi {mention(AGENT)} and {mention(12)} and {mention(AGENT)}</div>"
    assert mentioned_in(content) == {AGENT, 12}
    write_form = f'<bc-attachment sgid="{sgid(13)}"></bc-attachment>'
    assert mentioned_in(write_form) == {13}
    assert mentioned_in("<div>@Agent, plain text</div>") == frozenset()
    assert mentioned_in(f"<!-- {mention(AGENT)} -->") == frozenset()
    assert mentioned_in('<bc-attachment sgid="not-a-person--x"></bc-attachment>') == frozenset()


def test_a_summary_built_from_content_is_addressed() -> None:
    content = f"<div>{mention(AGENT)} can you look?</div>"
    verdict = decide(pointer(), SETTINGS, summary(content=content, mentioned_person_ids=mentioned_in(content)))
    assert (verdict.state, verdict.trigger) == (RecordState.admitted, Trigger.mentioned)


# -- wide inputs ----------------------------------------------------------------------------------------

PEOPLE = st.sampled_from([AGENT, OPERATOR, FRIEND, STRANGER, 4])
PEOPLE_SETS = st.frozensets(PEOPLE)
EVENTS = st.builds(
    EventPointer,
    id=st.integers(0, 50),
    event_type=st.sampled_from([*MATRIX, "boost.created"]),
    bucket_id=st.sampled_from([SERVED, UNSERVED, WATCHED]),
    creator_id=PEOPLE,
    performed_by_id=st.none() | PEOPLE,
    actor_type=st.sampled_from(["person", "agent"]),
    recording_id=st.integers(0, 50),
)
SUMMARIES = st.builds(
    RecordingSummary,
    status=st.sampled_from(RecordingStatus),
    type=st.just("Comment"),
    creator=st.none() | st.builds(Author, PEOPLE, st.sampled_from(["User", "Agent", "Client"])),
    parent_id=st.none() | st.integers(0, 9),
    campfire_id=st.none() | st.integers(0, 9),
    mentioned_person_ids=PEOPLE_SETS,
    assignee_ids=PEOPLE_SETS,
    added_person_ids=st.none() | PEOPLE_SETS,
    subscribed=st.booleans(),
)
READS = SUMMARIES | st.builds(ReadFailure, st.sampled_from(ReadFailureKind), st.none() | st.just(NOW))
SETTINGS_ANY = st.builds(
    AdmissionSettings,
    agent_id=st.just(AGENT),
    operator_id=st.just(OPERATOR),
    trust_mode=st.sampled_from(TrustMode),
    allowlist=PEOPLE_SETS,
    projects=st.none() | st.frozensets(st.sampled_from([SERVED, UNSERVED, WATCHED])),
    routed_projects=st.frozensets(st.sampled_from([SERVED, WATCHED])),
    watched_projects=st.frozensets(st.sampled_from([WATCHED])),
)


@given(EVENTS, SETTINGS_ANY, READS, st.none() | PEOPLE_SETS, st.booleans())
def test_verdict_invariants(event: EventPointer, settings: AdmissionSettings, read: RecordingSummary | ReadFailure,
                            members: frozenset[int] | None, live: bool) -> None:
    verdict = settle_verdict(decide(event, settings, read, members), live)
    # the agent's own and delegated actions are never admitted
    if AGENT in (event.creator_id, event.performed_by_id) or event.actor_type == "agent":
        assert verdict.state is RecordState.discarded
    if event.performed_by_id not in (None, event.creator_id):
        assert verdict.state is RecordState.discarded
    # only admitted (or queued) carries a snapshot, and it always does
    assert (verdict.snapshot is not None) == (verdict.state in (RecordState.admitted, RecordState.queued))
    # acknowledge exactly for a request that was admitted, queued or blocked for want of a route
    assert verdict.acknowledge == (
        verdict.trigger in (Trigger.mentioned, Trigger.assigned)
        and (verdict.state in (RecordState.admitted, RecordState.queued) or verdict.reason == "no_route")
    )
    # a read failure is never a discard
    if isinstance(read, ReadFailure) and verdict.state is not RecordState.discarded:
        assert verdict.state is RecordState.blocked
    if isinstance(read, ReadFailure):
        assert verdict.state is not RecordState.admitted
    # an admitted record is in a routed project, and queued only when its conversation is live
    if verdict.state in (RecordState.admitted, RecordState.queued):
        assert settings.routed(event.bucket_id)
        assert (verdict.state is RecordState.queued) == live
        assert verdict.conversation_key.startswith(("recording:", "campfire:"))
        assert verdict.reply_kind is not None


@given(EVENTS, SETTINGS_ANY, st.sampled_from(ReadFailureKind), PEOPLE_SETS)
def test_a_read_failure_after_the_gate_is_blocked(event: EventPointer, settings: AdmissionSettings,
                                                  kind: ReadFailureKind, members: frozenset[int]) -> None:
    verdict = decide(event, settings, ReadFailure(kind), members | {event.performer_id})
    if verdict.state is RecordState.discarded:  # only ever the gate's own discard
        assert verdict.reason in (
            DiscardReason.invalid_pointer, DiscardReason.not_in_matrix, DiscardReason.agent_authored,
            DiscardReason.delegated, DiscardReason.out_of_scope, DiscardReason.untrusted_performer,
            DiscardReason.assignment_not_operator, DiscardReason.no_route,
        )
    else:
        assert verdict.state is RecordState.blocked


@given(st.sampled_from([*BlockedReason, "stale"]), st.integers(0, 48 * 60), st.none() | st.integers(-60, 48 * 60))
def test_a_retry_is_never_in_the_past_nor_before_retry_at(reason: str, minutes: int, retry_in: int | None) -> None:
    since = NOW - timedelta(minutes=minutes)
    retry_at = None if retry_in is None else NOW + timedelta(minutes=retry_in)
    due = next_retry(reason, since, NOW, retry_at)
    if due is None:
        return
    assert due >= NOW
    if reason == "throttled" and retry_at is not None:
        assert due >= retry_at
    if reason not in ("config_unreadable", "read_unauthorized"):  # retried without end
        assert due <= since + BLOCKED_RETRY_WINDOW
