"""core.dispatch with plain values: which record may start, whether a conversation or a directory
is live. The ledger's tests (test_dispatch_transitions, test_admission) drive the same rules
through the snapshot read."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from core.dispatch import LiveWork, OpenRecord, conversation_live, startable, task_free
from core.edges import RecordState

ROUTED = frozenset({1})


def record(
    event_id: int,
    conversation: str = "c",
    state: RecordState = RecordState.admitted,
    *,
    bucket: int = 1,
    snapshot: bool = True,
    on_task: bool = False,
) -> OpenRecord:
    return OpenRecord(event_id, bucket, conversation, state, snapshot, on_task)


def work(*records: OpenRecord, conversations: frozenset[str] = frozenset(), dirs: frozenset[str] = frozenset()) -> LiveWork:
    return LiveWork(records, conversations, dirs)


def test_a_conversation_is_live_on_a_live_task_or_an_older_open_record() -> None:
    assert conversation_live(work(conversations=frozenset({"c"})), 5, "c")
    assert conversation_live(work(record(4, state=RecordState.dispatched)), 5, "c")
    assert not conversation_live(work(record(6)), 5, "c"), "a younger record does not hold it"
    assert not conversation_live(work(record(4, "other")), 5, "c")
    assert not conversation_live(work(record(4), conversations=frozenset({""})), 5, ""), "no conversation, none live"


def test_a_task_needs_its_conversation_and_its_directory_free() -> None:
    busy = work(conversations=frozenset({"c"}), dirs=frozenset({"/srv/a"}))
    assert task_free(busy, "d", "/srv/b")
    assert not task_free(busy, "c", "/srv/b")
    assert not task_free(busy, "d", "/srv/a")


def test_only_the_oldest_waiting_record_of_a_free_conversation_starts() -> None:
    found = work(
        record(1, "a"),
        record(2, "a"),  # waits behind 1
        record(3, "b", RecordState.queued),
        record(4, "c", on_task=True),  # already on a task
        record(5, "d", snapshot=False),
        record(6, ""),
        record(7, "e", bucket=9),  # not routed
        record(8, "f"),  # its conversation has a live task
        record(9, "g", RecordState.dispatched),
        record(10, "g"),  # behind a dispatched record
        conversations=frozenset({"f"}),
    )
    assert startable(found, ROUTED, 10) == [(1, 1), (3, 1)]
    assert startable(found, ROUTED, 1) == [(1, 1)]
    assert startable(found, ROUTED, 0) == []
    assert startable(found, frozenset(), 10) == []


_records = st.lists(
    st.builds(
        OpenRecord,
        event_id=st.integers(1, 40),
        bucket_id=st.sampled_from([1, 2]),
        conversation_key=st.sampled_from(["", "a", "b", "c"]),
        state=st.sampled_from(sorted(RecordState)),
        has_snapshot=st.booleans(),
        on_live_task=st.booleans(),
    ),
    unique_by=lambda record: record.event_id,
    max_size=12,
)


@given(_records, st.sets(st.sampled_from(["a", "b", "c"])), st.integers(0, 6))
def test_what_starts_is_each_free_conversations_oldest_open_record_oldest_first(
    records: list[OpenRecord], live: set[str], limit: int
) -> None:
    snapshot = work(*records, conversations=frozenset(live))
    found = startable(snapshot, ROUTED, limit)
    assert len(found) <= limit
    assert [event for event, _ in found] == sorted(event for event, _ in found)
    by_id = {record.event_id: record for record in records}
    conversations = [by_id[event].conversation_key for event, _ in found]
    assert len(set(conversations)) == len(conversations), "one start per conversation"
    for event, bucket in found:
        chosen = by_id[event]
        assert bucket == chosen.bucket_id in ROUTED
        assert chosen.state in (RecordState.admitted, RecordState.queued)
        assert chosen.has_snapshot
        assert chosen.conversation_key
        assert not chosen.on_live_task
        assert not conversation_live(snapshot, event, chosen.conversation_key)
        assert task_free(snapshot, chosen.conversation_key, "/nowhere")


@given(_records, st.sets(st.sampled_from(["a", "b", "c"])))
def test_with_room_every_free_conversations_oldest_waiting_record_starts(
    records: list[OpenRecord], live: set[str]
) -> None:
    snapshot = work(*records, conversations=frozenset(live))
    found = {event for event, _ in startable(snapshot, ROUTED, len(records))}
    for chosen in records:
        if (
            chosen.state in (RecordState.admitted, RecordState.queued)
            and chosen.has_snapshot
            and chosen.bucket_id in ROUTED
            and not chosen.on_live_task
            and chosen.conversation_key
            and not conversation_live(snapshot, chosen.event_id, chosen.conversation_key)
        ):
            assert chosen.event_id in found
