"""``core.import_file`` with plain values: what a version-1 file is, and what each entry does
to the record it names (or why it cannot)."""

from __future__ import annotations

import json

import pytest
from returns.result import Failure, Success

from core.edges import RecordState
from core.import_file import (
    MAX_BYTES,
    Decision,
    Entry,
    NotAFile,
    RecordNow,
    Unappliable,
    parse,
    plan,
)

_R = RecordState


def file(*entries: object, version: object = 1) -> bytes:
    return json.dumps({"version": version, "entries": list(entries)}).encode()


def test_a_good_file_is_its_entries_in_order() -> None:
    raw = file({"event_id": 123, "decision": "done"}, {"event_id": 456, "decision": "held"})
    assert parse(raw) == Success((Entry(0, 123, Decision.done), Entry(1, 456, Decision.held)))


@pytest.mark.parametrize(
    ("raw", "words"),
    [
        (b"{not json", "not JSON"),
        (b"\xff\xfe", "not JSON"),
        (b"[]", "not a JSON object"),
        (file(version=2), "version 2: this program reads version 1"),
        (file(version="1"), 'version "1": this program reads version 1'),
        (file(version=True), "version true"),
        (b'{"version": 1}', "its entries are not a list"),
        (b" " * (MAX_BYTES + 1), "larger than 16 MB"),
    ],
)
def test_what_is_not_a_version_1_file_says_why(raw: bytes, words: str) -> None:
    answer = parse(raw)
    assert isinstance(answer, Failure)
    assert isinstance(answer.failure(), NotAFile)
    assert words in answer.failure().why


@pytest.mark.parametrize(
    ("entry", "words"),
    [
        ("done", "not an object"),
        ({"event_id": 0, "decision": "done"}, "event_id 0 is not a positive id"),
        ({"event_id": 2**63, "decision": "done"}, "is not a positive id"),
        ({"event_id": True, "decision": "done"}, "event_id true"),
        ({"event_id": 7, "decision": "maybe"}, 'decision "maybe" is neither done nor held'),
        ({"event_id": 7, "decision": ["done"]}, 'decision ["done"] is neither done nor held'),
        ({"event_id": 7, "decision": {"done": 1}}, 'decision {"done": 1} is neither done nor held'),
        ({"event_id": 5, "decision": "held"}, "named again (first at entry 0)"),
    ],
)
def test_a_bad_entry_is_named_by_its_index(entry: object, words: str) -> None:
    answer = parse(file({"event_id": 5, "decision": "done"}, entry))
    assert isinstance(answer, Failure)
    bad = answer.failure()
    assert isinstance(bad, Unappliable)
    assert bad.index == 1
    assert words in str(bad)
    assert str(bad).startswith("entry 1")


def now(event_id: int, state: RecordState, outcome: str = "", carried: bool = False) -> RecordNow:
    return RecordNow(event_id, state, "", outcome, 3, carried)


def test_done_closes_what_waits_or_settled_badly_tombstones_the_unseen_and_tags_the_rest() -> None:
    known = {
        1: now(1, _R.held), 2: now(2, _R.blocked), 3: now(3, _R.completed, "unknown"),
        4: now(4, _R.completed, "failed"), 5: now(5, _R.completed, "succeeded"), 6: now(6, _R.discarded),
        7: now(7, _R.admitted),
    }  # fmt: skip
    entries = [Entry(index, event_id, Decision.done) for index, event_id in enumerate([1, 2, 3, 4, 5, 6, 99])]
    entries += [Entry(7, 7, Decision.held), Entry(8, 98, Decision.held)]
    done = plan(entries, known, [1, 2, 7, 50]).unwrap()
    assert [record.event_id for record in done.discard] == [1, 2, 3, 4]
    assert (done.tombstones, done.already, done.unknown_held) == ((99,), (5, 6), (98,))
    assert done.review == (7, 50)
    assert done.summary == "Imported 9 entries: 4 tombstoned, 1 tombstones added, 2 records tagged for review"


@pytest.mark.parametrize(
    ("record", "words"),
    [
        (now(1, _R.dispatched), "a task still carries it"),
        (now(1, _R.completed, "unknown", carried=True), "a task still carries it"),
        (now(1, _R.seen), "waiting for its verdict"),
    ],
)
def test_done_cannot_close_what_a_task_carries_or_admission_has_not_decided(
    record: RecordNow, words: str
) -> None:
    entries = [Entry(0, 99, Decision.done), Entry(1, 1, Decision.done)]
    answer = plan(entries, {1: record}, [1])
    assert isinstance(answer, Failure)
    assert (answer.failure().index, answer.failure().event_id) == (1, 1)
    assert words in answer.failure().why
