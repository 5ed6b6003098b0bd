"""core.presentation.event_history with plain values: one event's story in time order, how each sent
message came to be its, the worker's ids, every person's decision, and no body anywhere."""

from __future__ import annotations

import json
import re
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from core import notes
from core.presentation.event_history import (
    EventHistory,
    HistoryAttempt,
    HistoryDecision,
    HistoryIntent,
    HistoryRecord,
    HistoryTask,
    landed,
    lines,
    report,
    story,
)
from core.snapshots import WorkerResult


def at(second: int) -> str:
    return f"2026-12-07T14:{second // 60:02d}:{second % 60:02d}.000000000Z"


RECORD = HistoryRecord(
    event_id=7, state="completed", reason="", event_type="comment.created", bucket_id=1, recording_id=1007,
    creator_id=11, trigger="mentioned", lane="live", seen_at=at(0), updated_at=at(9), created_at=at(0),
    decided_at=at(1))  # fmt: skip
ATTEMPT = HistoryAttempt(
    attempt_id="att_" + "a" * 24, seq=1, state="ended", stop_reason="failed", launched_at=at(3), pid=4242,
    session_id="s-1", running_at=at(4), ended_at=at(8),
    result=WorkerResult(is_error=True, turns=3, cost_usd=0.25, duration_ms=4000, error="boom"))  # fmt: skip
TASK = HistoryTask(
    task_id=3000001, conversation="recording:1007", created_at=at(3), delivery="completed", guard="canceled",
    outcome="failed", ended_at=at(8), exposed_at=at(3), pulled_at=at(5), completed_at=at(7), ack_id=1069479008,
    attempts=(ATTEMPT,))  # fmt: skip


def intent(intent_id: int, kind: str, written: int, finished: int, **changes: object) -> HistoryIntent:
    fields: dict[str, object] = {
        "intent_id": intent_id, "kind": kind, "state": "sent", "message_kind": "comment", "bucket_id": 1,
        "recording_id": 1007, "created_at": at(written), "not_before": at(written), "sending_at": at(finished - 1),
        "finished_at": at(finished), "receipt_id": 9000 + intent_id, **changes}  # fmt: skip
    return HistoryIntent(**fields)  # type: ignore[arg-type]


# Listed out of time order on purpose: the completion notice (an intent of the attempt) before the
# worker's acknowledgement, both before the task whose attempt wrote them.
HISTORY = EventHistory(
    record=RECORD, tasks=(TASK,),
    intents=(intent(5000002, "completion", 8, 10, attempt_id=ATTEMPT.attempt_id),
             intent(5000001, "worker_ack", 5, 6, message_kind="boost", task_id=TASK.task_id)),
    decisions=(HistoryDecision(6000001, "redispatch", "local:ada", at(20), "completed", "", "failed", "admitted",
                               revoked_at=at(21), revoked_note="revoked by hold generation 1"),))  # fmt: skip


def test_the_story_is_told_in_time_order_whichever_row_holds_each_moment() -> None:
    times = [moment.at for moment in story(HISTORY)]
    assert times == sorted(times)
    said = [moment.what for moment in story(HISTORY)]
    first = next(index for index, what in enumerate(said) if "worker_ack" in what)
    launched = next(index for index, what in enumerate(said) if "launched" in what)
    assert launched < first, "the attempt launched before its worker acknowledged"
    assert said[-1] == "that redispatch was revoked: revoked by hold generation 1"


@given(st.permutations(range(6)))
def test_any_order_of_rows_tells_the_same_story(order: list[int]) -> None:
    intents = tuple(intent(5000001 + index, "worker_note", 10 + 2 * index, 11 + 2 * index) for index in range(6))
    shuffled = EventHistory(record=RECORD, intents=tuple(intents[index] for index in order))
    told = [moment.at for moment in story(shuffled)]
    assert told == sorted(told)
    assert story(shuffled) == story(EventHistory(record=RECORD, intents=intents))


def test_a_sent_message_is_told_posted_adopted_or_marked_sent_by_a_person() -> None:
    assert landed(intent(1, "completion", 1, 2)) == "posted"
    adopted = intent(1, "holding_reply", 1, 2, note=notes.ADOPTED)
    assert landed(adopted) == "adopted"
    marked = intent(1, "guard_ack", 1, 2, note=notes.RESOLVED_SENT_CHECKED, resolved_by="local:ada")
    assert landed(marked) == "marked_sent"
    assert landed(intent(1, "guard_ack", 1, 2, state="canceled", receipt_id=None, note="get_dispatch")) is None
    told = [moment.what for moment in story(EventHistory(RECORD, intents=(adopted, marked)))]
    assert "intent 1 (holding_reply) adopted by reconciliation: message 9001 (found by listing, not posted again)" in told
    assert "intent 1 (guard_ack) marked sent by local:ada: message 9001" in told
    assert not any("posted: message" in what for what in told)


def test_the_events_ack_id_and_reply_id_are_its_latest_task_rows() -> None:
    later = HistoryTask(task_id=3000002, conversation="recording:1007", created_at=at(30), delivery="completed",
                        guard="", outcome="succeeded", reply_id=1069479020)  # fmt: skip
    shown = report(EventHistory(RECORD, tasks=(TASK, later)))
    assert (shown["ack_id"], shown["reply_id"]) == (None, 1069479020)
    assert [task["ack_id"] for task in shown["tasks"]] == [1069479008, None]
    assert (report(HISTORY)["ack_id"], report(HISTORY)["reply_id"]) == (1069479008, None)
    assert report(EventHistory(RECORD))["ack_id"] is None
    assert lines(HISTORY)[0].endswith("ack_id 1069479008, reply_id -")


def test_the_report_has_every_part_and_the_text_is_its_story() -> None:
    shown = report(HISTORY)
    assert list(shown) == ["event_id", "record", "ack_id", "reply_id", "tasks", "intents", "decisions", "story"]
    (task,) = shown["tasks"]
    (attempt,) = task["attempts"]
    assert (attempt["pid"], attempt["session_id"], attempt["stop_reason"]) == (4242, "s-1", "failed")
    assert attempt["worker_result"]["cost_usd"] == 0.25
    assert [(one["intent_id"], one["landed"]) for one in shown["intents"]] == [(5000002, "posted"),
                                                                              (5000001, "posted")]  # fmt: skip
    (decision,) = shown["decisions"]
    assert (decision["decided_by"], decision["revoked_at"]) == ("local:ada", at(21))
    assert shown["record"]["lane"] == "live"
    assert len(lines(HISTORY)) == 1 + len(shown["story"])
    assert json.loads(json.dumps(shown)) == shown
    ended = next(moment["what"] for moment in shown["story"] if "ended failed" in moment["what"])
    assert "its result: error 'boom', 3 turns, $0.2500, 4.0 s" in ended


def test_every_persons_decision_on_the_event_is_in_its_story() -> None:
    settled = HistoryAttempt(attempt_id="att_" + "b" * 24, seq=1, state="ended", stop_reason="unknown",
                             launched_at=at(3), ended_at=at(40), left_at=at(4), settled_by="local:bob",
                             settled_as="ran")  # fmt: skip
    resolved = intent(5000003, "completion", 41, 42, state="abandoned", receipt_id=None, resolved_by="local:cy",
                      note=notes.RESOLVED_ABANDON)  # fmt: skip
    history = EventHistory(RECORD, tasks=(HistoryTask(3000003, "", at(3), "completed", "", "unknown",
                                                      attempts=(settled,)),), intents=(resolved,),
                           decisions=HISTORY.decisions)  # fmt: skip
    told = " | ".join(moment.what for moment in story(history))
    assert "settled by local:bob as ran" in told
    assert "abandoned by local:cy" in told
    assert "local:ada decided redispatch: the record was completed, outcome failed, to admitted" in told


def test_the_readme_documents_every_key_of_the_report() -> None:
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    shape = readme[readme.index("`--json` is one object: `event_id`"):]
    documented = set(re.findall(r"`(\w+)`", shape[: shape.index("Times are the ledger's text")]))
    shown = report(HISTORY)
    (task,) = shown["tasks"]
    keys = {*shown, *shown["record"], *task, *task["attempts"][0], *shown["intents"][0], *shown["decisions"][0]}
    assert keys - documented == set()
