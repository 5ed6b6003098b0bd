"""core.presentation.status_report with plain values: what a person and a machine are told, and what never."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest

from core.edges import AttemptState, IntentState
from core.presentation import short_time
from core.presentation.status_report import lines, queue_depths, report, summary
from core.presentation.status_values import (
    LOW_DISK_BYTES,
    Disk,
    Dispatch,
    DispatchedEvent,
    FeedCheckpoint,
    HeldRecord,
    Hold,
    LedgerSnapshot,
    LiveAttempt,
    LiveTask,
    LockFile,
    PidStatus,
    Status,
    WaitingIntent,
    WriteFailure,
    pid_status,
)

T0 = "2026-11-29T12:00:00.000000000Z"
T1 = "2026-11-29T12:05:30.250000000Z"


def snapshot(**changes: Any) -> LedgerSnapshot:
    empty = LedgerSnapshot(
        hold=None, feed=(), state_counts=(), blocked=(), live_tasks=(), waiting=(), dispatches=(), held=()
    )
    return dataclasses.replace(empty, **changes)


def status(ledger: LedgerSnapshot | None = None, lock_file: LockFile | None = None) -> Status:
    return Status(
        account_id=999,
        agent_id=42,
        state_dir="/state/999-42",
        ledger_path="/state/999-42/ledger.sqlite3",
        lock_file=lock_file,
        ledger=ledger or snapshot(),
    )


def live_task(task_id: int, pid: int | None = 4242) -> LiveTask:
    return LiveTask(
        task_id=task_id,
        superseded=False,
        conversation=f"recording:{task_id}",
        created_at=T0,
        deadline_at=T1,
        attempt=LiveAttempt(f"att_{task_id:024x}", AttemptState.running, pid, T0),
        event_ids=(task_id * 10,),
    )


def waiting(intent_id: int, *, refused: bool) -> WaitingIntent:
    return WaitingIntent(
        intent_id=intent_id,
        kind="completion",
        state=IntentState.canceled if refused else IntentState.indeterminate,
        refused=refused,
        event_id=7,
        attempt_id=None,
        message_kind="comment",
        bucket_id=1,
        recording_id=1007,
        note="the request was refused; no message was created" if refused else "2 matching messages",
    )


PRESENT = LockFile(123, T0, PidStatus.present)


def test_the_summary_comes_first_and_reads_like_the_issue_says() -> None:
    given = status(
        snapshot(
            live_tasks=(live_task(1), live_task(2)),
            state_counts=(("blocked", 1), ("dispatched", 2)),
            blocked=(("no_route", 1),),
        ),
        PRESENT,
    )
    assert (
        summary(given)
        == "running (lock file: pid 123, present) · 2 live tasks · 0 indeterminate messages · 1 blocked"
    )
    assert lines(given)[0] == summary(given)
    assert report(given)["summary"] == summary(given)


@pytest.mark.parametrize(
    ("lock_file", "phrase", "running"),
    [
        (None, "not running (no lock file)", "no"),
        (LockFile(123, T0, PidStatus.present), "running (lock file: pid 123, present)", "yes"),
        (LockFile(123, T0, PidStatus.absent), "not running (lock file: pid 123, absent)", "no"),
        (LockFile(123, T0, PidStatus.unknown), "perhaps running (lock file: pid 123, unknown)", "unknown"),
    ],
)
def test_running_is_said_only_when_the_lock_files_pid_is_present(
    lock_file: LockFile | None, phrase: str, running: str
) -> None:
    given = status(lock_file=lock_file)
    assert summary(given).split(" · ")[0] == phrase
    assert report(given)["running"] == running


def test_a_pid_whose_presence_cannot_be_told_is_unknown_not_absent() -> None:
    assert pid_status(True) is PidStatus.present
    assert pid_status(False) is PidStatus.absent
    assert pid_status(None) is PidStatus.unknown


def test_the_lock_file_is_marked_diagnostic_whether_or_not_there_is_one() -> None:
    for lock_file in (None, PRESENT):
        given = status(lock_file=lock_file)
        assert report(given)["lock_file"]["diagnostic"] is True
        assert any("diagnostic" in line for line in lines(given))
    assert report(status(lock_file=PRESENT))["lock_file"] == {
        "diagnostic": True,
        "found": True,
        "pid": 123,
        "started_at": T0,
        "pid_status": "present",
        "configuration_problem": None,
    }
    assert report(status())["lock_file"] == {
        "diagnostic": True,
        "found": False,
        "pid": None,
        "started_at": None,
        "pid_status": None,
        "configuration_problem": None,
    }


def test_queue_depths_name_every_record_state_zero_included_in_the_lifecycles_order() -> None:
    depths = queue_depths(snapshot(state_counts=(("completed", 3), ("blocked", 1))))
    assert list(depths.items()) == [
        ("seen", 0),
        ("admitted", 0),
        ("queued", 0),
        ("blocked", 1),
        ("dispatched", 0),
        ("completed", 3),
        ("discarded", 0),
        ("held", 0),
    ]
    assert list(report(status())["queues"]) == list(depths)


def test_blocked_records_are_counted_by_reason() -> None:
    given = status(snapshot(state_counts=(("blocked", 3),), blocked=(("spawn_failed", 1), ("no_route", 2))))
    assert report(given)["blocked"] == {"no_route": 2, "spawn_failed": 1}
    assert "blocked by reason: no_route 2 · spawn_failed 1" in lines(given)


def test_refused_messages_wait_for_a_person_too_and_are_counted_apart() -> None:
    given = status(
        snapshot(waiting=(waiting(5, refused=False), waiting(6, refused=True), waiting(8, refused=False)))
    )
    assert summary(given).split(" · ")[2:] == ["2 indeterminate messages", "0 blocked", "1 refused message"]
    assert [(entry["intent_id"], entry["state"]) for entry in report(given)["waiting_for_person"]] == [
        (5, "indeterminate"),
        (6, "refused"),
        (8, "indeterminate"),
    ]
    text = "\n".join(lines(given))
    assert "lifecycle messages waiting for a person (3):" in text
    assert "intent 6: completion refused, event 7, a comment on recording 1007 in project 1" in text
    assert "bin/outbox-resolve --ledger /state/999-42/ledger.sqlite3 show ID" in text


def test_a_live_dispatch_has_no_stop_reason_and_an_unreported_event_no_outcome() -> None:
    live = Dispatch(
        attempt_id="att_" + "1" * 24,
        task_id=3,
        seq=1,
        state=AttemptState.running,
        stop_reason="",
        spawn_failed=False,
        launched_at=T1,
        ended_at=None,
        events=(DispatchedEvent(30, "exposed", "", False, "dispatched"),),
    )
    ended = Dispatch(
        attempt_id="att_" + "2" * 24,
        task_id=2,
        seq=1,
        state=AttemptState.ended,
        stop_reason="finished",
        spawn_failed=False,
        launched_at=T0,
        ended_at=T1,
        events=(
            DispatchedEvent(20, "completed", "succeeded", False, "completed"),
            DispatchedEvent(21, "completed", "unknown", False, "completed"),
        ),
    )
    given = status(snapshot(dispatches=(live, ended)))
    dispatches = report(given)["dispatches"]
    assert [(entry["state"], entry["stop_reason"]) for entry in dispatches] == [
        ("running", None),
        ("ended", "finished"),
    ]
    assert [(event["event_id"], event["outcome"]) for entry in dispatches for event in entry["events"]] == [
        (30, None),
        (20, "succeeded"),
        (21, "unknown"),
    ]
    text = lines(given)
    assert text[-3] == "last 2 dispatches, newest first:"
    assert text[-2].endswith("running: event 30 no outcome yet (exposed)")
    assert text[-1].endswith("ended finished: event 20 succeeded; event 21 unknown")


def test_a_withdrawn_event_says_its_worker_could_not_be_started() -> None:
    failed = Dispatch(
        attempt_id="att_" + "3" * 24,
        task_id=4,
        seq=1,
        state=AttemptState.ended,
        stop_reason="failed",
        spawn_failed=True,
        launched_at=T0,
        ended_at=T0,
        events=(DispatchedEvent(40, "exposed", "", True, "admitted"),),
    )
    (entry,) = report(status(snapshot(dispatches=(failed,))))["dispatches"]
    assert entry["spawn_failed"] is True
    assert entry["events"] == [
        {
            "event_id": 40,
            "delivery": "exposed",
            "outcome": None,
            "withdrawn": True,
            "record_state": "admitted",
            "ack_id": None,
            "reply_id": None,
        }
    ]
    assert lines(status(snapshot(dispatches=(failed,))))[-1].endswith(
        "ended failed: event 40 withdrawn (the worker could not be started), now admitted"
    )


def test_words_refused_for_a_credential_are_said_on_their_dispatch() -> None:
    why = "reply_dispatch: its words held a task token, so nothing was written"
    refused = Dispatch(
        attempt_id="att_" + "4" * 24, task_id=5, seq=1, state=AttemptState.ended, stop_reason="finished",
        spawn_failed=False, launched_at=T0, ended_at=T1,
        events=(DispatchedEvent(50, "completed", "succeeded", False, "completed"),), words_refused=why,
    )  # fmt: skip
    (entry,) = report(status(snapshot(dispatches=(refused,))))["dispatches"]
    assert entry["words_refused"] == why
    assert lines(status(snapshot(dispatches=(refused,))))[-1].endswith(f"event 50 succeeded; words refused: {why}")
    (quiet,) = report(status(snapshot(dispatches=(dataclasses.replace(refused, words_refused=""),))))["dispatches"]
    assert quiet["words_refused"] is None


def test_held_records_are_listed_only_when_there_are_some() -> None:
    url = "https://3.basecamp.com/999/buckets/1/card_tables/cards/1006"
    held = status(
        snapshot(held=(HeldRecord(6, "comment.created", "mentioned", url),), state_counts=(("held", 1),))
    )
    assert summary(held).endswith("· 1 held record")
    assert report(held)["held"] == [
        {"event_id": 6, "event_type": "comment.created", "trigger": "mentioned", "recording_url": url}
    ]
    assert f"  event 6 comment.created (mentioned) {url}" in lines(held)
    none = status()
    assert report(none)["held"] == []
    assert not any(line.startswith("held records") for line in lines(none))
    assert "held record" not in summary(none)


def test_a_hold_is_shown_and_summarized() -> None:
    given = status(snapshot(hold=Hold("local:ops", T0, "cutting over", 3)))
    assert report(given)["hold"] == {"held_by": "local:ops", "held_at": T0, "cause": "cutting over", "generation": 3}
    assert summary(given).endswith("· on hold")
    assert any(
        line.startswith("on hold: held by local:ops") and "(cutting over), generation 3" in line
        for line in lines(given)
    )
    assert report(status())["hold"] is None


def test_live_tasks_show_their_attempt_and_worker_pid() -> None:
    given = status(snapshot(live_tasks=(live_task(1), live_task(2, pid=None))))
    first, second = report(given)["live_tasks"]
    assert first == {
        "task_id": 1,
        "state": "live",
        "conversation": "recording:1",
        "created_at": T0,
        "deadline_at": T1,
        "attempt": {
            "attempt_id": "att_" + "0" * 23 + "1",
            "state": "running",
            "pid": 4242,
            "launched_at": T0,
            "needs_person": None,
        },
        "event_ids": [10],
    }
    assert second["attempt"]["pid"] is None
    text = lines(given)
    assert "live tasks (2):" in text
    assert any("task 1 on recording:1: attempt att_" in line and "pid 4242" in line for line in text)


def test_an_attempt_left_mid_launch_is_flagged_for_a_person_with_what_to_check() -> None:
    left = LiveTask(
        task_id=7, superseded=False, conversation="recording:7", created_at=T0, deadline_at=T1,
        attempt=LiveAttempt("att_" + "0" * 23 + "7", AttemptState.launching, None, T0, left_at=T1),
        event_ids=(70, 71),
    )
    given = status(snapshot(live_tasks=(left, live_task(2))))
    flagged, ordinary = report(given)["live_tasks"]
    assert flagged["attempt"]["needs_person"]["left_at"] == T1
    assert "bin/connect settle-launch 70 --ran" in flagged["attempt"]["needs_person"]["check"]
    assert ordinary["attempt"]["needs_person"] is None
    assert "1 launch left for a person" in summary(given)
    text = lines(given)
    assert any(line.startswith("    NEEDS A PERSON:") and "settle-launch 70" in line for line in text)
    assert sum("NEEDS A PERSON" in line for line in text) == 1


def test_a_feed_checkpoint_says_whether_a_position_is_kept_never_which() -> None:
    assert [field.name for field in dataclasses.fields(FeedCheckpoint)] == [
        "has_position",
        "last_served_id",
        "updated_at",
    ]
    given = status(snapshot(feed=(FeedCheckpoint(True, 812, T1),)))
    assert report(given)["feed"] == [{"has_position": True, "last_served_id": 812, "updated_at": T1}]
    assert "feed: position kept; last served event 812; updated 2026-11-29T12:05:30Z" in lines(given)
    assert "feed: never read (no checkpoint yet)" in lines(status())


def test_the_reports_keys_are_stable_and_documented() -> None:
    import core.presentation.status_report as module

    keys = list(report(status()))
    assert keys == [
        "summary",
        "account_id",
        "agent_id",
        "state_dir",
        "ledger",
        "lock_file",
        "running",
        "unsafe_test_timings",
        "worker_allowed",
        "disk",
        "write_failure",
        "token_outage",
        "hold",
        "feed",
        "queues",
        "blocked",
        "live_tasks",
        "waiting_for_person",
        "dispatches",
        "held",
        "outbox",
        "not_running",
    ]
    documented = module.__doc__ or ""
    assert all(key in documented for key in keys)
    json.dumps(report(status(snapshot(live_tasks=(live_task(1),)), PRESENT)))  # serializable


def test_times_are_shown_to_the_second() -> None:
    assert short_time(T1) == "2026-11-29T12:05:30Z"
    assert short_time(None) == "-"


def test_records_not_yet_running_are_listed_by_id_with_what_moves_them() -> None:
    from core.presentation.status_values import LAST_WAITING_RECORDS, WaitingRecord

    records = (
        WaitingRecord(7, "blocked", "read_failed", "comment.created", T1),
        WaitingRecord(8, "blocked", "no_route", "comment.created", None),
        WaitingRecord(9, "queued", "", "comment.created", None),
    )
    shown = lines(status(snapshot(not_running=records)))
    assert "  event 7 blocked (read_failed) comment.created; admission tries again at 2026-11-29T12:05:30Z" in shown
    assert "  event 8 blocked (no_route) comment.created; nothing retries it: a person's redispatch or discard" in shown
    assert any(line.startswith("  event 9 queued comment.created: waiting for a worker slot") for line in shown)
    assert (
        "  decide with: a blocked one: bin/connect redispatch EVENT_ID (admission tries it again), or discard; "
        "one waiting to run: bin/connect discard EVENT_ID to close it (else it runs on its own)"
    ) in shown  # a redispatch of one waiting to run is refused: never advised
    assert report(status(snapshot(not_running=records)))["not_running"][1] == {
        "event_id": 8, "state": "blocked", "reason": "no_route", "event_type": "comment.created", "next_retry_at": None,
        "waits_for": "person", "decisions": ["redispatch", "discard"],
    }
    assert report(status(snapshot(not_running=records)))["not_running"][2]["decisions"] == ["discard"]
    assert LAST_WAITING_RECORDS == 20
    assert not any("not yet running" in line for line in lines(status()))


def test_status_says_the_timing_floors_are_lifted() -> None:
    lifted = dataclasses.replace(status(), unsafe_test_timings=True)
    assert any(line.startswith("UNSAFE TEST TIMINGS") for line in lines(lifted))
    assert report(lifted)["unsafe_test_timings"] is True
    assert not any("UNSAFE" in line for line in lines(status()))


def test_the_connectors_failed_write_is_in_the_summary_the_text_and_the_report() -> None:
    why = "database or disk is full"
    failing = dataclasses.replace(status(), write_failure=WriteFailure("2026-11-29T12:03:00.000000000Z", why, 4242))
    assert report(failing)["write_failure"] == {"at": "2026-11-29T12:03:00.000000000Z", "why": why, "pid": 4242}
    assert summary(failing).endswith(" · ledger writes failing since 2026-11-29T12:03:00Z")
    assert any(
        line.startswith("ledger writes: the connector's last one failed at 2026-11-29T12:03:00Z (pid 4242): " + why)
        for line in lines(failing)
    )
    assert report(status())["write_failure"] is None
    assert "ledger writes" not in summary(status())
    assert not any(line.startswith("ledger writes") for line in lines(status()))


def test_a_disk_nearly_full_is_in_the_summary_the_text_and_the_report() -> None:
    full = dataclasses.replace(status(), disk=Disk(free_bytes=12_000, total_bytes=1_000_000))
    assert report(full)["disk"] == {"free_bytes": 12_000, "total_bytes": 1_000_000, "low": True}
    assert summary(full).endswith(" · disk nearly full (12 kB free)")
    assert any(line.startswith("disk: 12 kB free of 1 MB") and "nearly full" in line for line in lines(full))
    roomy = dataclasses.replace(status(), disk=Disk(free_bytes=LOW_DISK_BYTES, total_bytes=10**12))
    assert report(roomy)["disk"]["low"] is False
    assert "disk" not in summary(roomy)
    assert report(status())["disk"] is None


@pytest.mark.parametrize("guard", ["refused", "abandoned"])
def test_an_event_told_of_a_guard_that_never_went_out_says_so(guard: str) -> None:
    ended = Dispatch(
        attempt_id="att_" + "4" * 24, task_id=5, seq=1, state=AttemptState.ended, stop_reason="finished",
        spawn_failed=False, launched_at=T0, ended_at=T1,
        events=(DispatchedEvent(50, "completed", "succeeded", False, "completed", guard),
                DispatchedEvent(51, "completed", "succeeded", False, "completed", "fired")),
    )  # fmt: skip
    given = status(snapshot(dispatches=(ended,)))
    (entry,) = report(given)["dispatches"]
    assert [event.get("guard") for event in entry["events"]] == [guard, None]
    said = {"refused": "refused: it never went out", "abandoned": "abandoned by a person"}[guard]
    assert lines(given)[-1].endswith(f"event 50 succeeded (its guard boost was {said}); event 51 succeeded")
