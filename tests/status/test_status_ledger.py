"""`bin/connect status` on real ledger files: what it reads, in one transaction, and what it
never does (create a ledger, take the lock, read the token, print a feed position)."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
from pathlib import Path
from typing import Any

import pytest

from core.configuration import Configuration
from core.notes import REFUSED_NOTE
from core.timestamps import parse_timestamp
from shell.cli.main import main as connect
from shell.clock import FakeClock
from shell.errors import EXIT_CONFIG
from shell.ledger import outbox as rows
from shell.ledger.connection import SCHEMA_VERSION, Ledger, open_ledger, open_ledger_read_only
from shell.ledger.hold import set_hold
from shell.ledger.status import read_snapshot
from shell.state.config import save_config
from shell.state.lock import acquire, lock_path
from tests.support.ledger_world import LedgerWorld

ACCOUNT = 999
AGENT = 42
TOKEN = "token-never-shown-6f1c2b7e"
POSITION = "eyJwb3NpdGlvbiI6InNlY3JldCJ9.feed-position-never-shown"
DIGEST = "a" * 64
URL = "https://3.basecamp.com/999/buckets/2085958504/card_tables/cards/1000006"


@pytest.fixture
def state(ledger: Ledger, tmp_path: Path) -> Path:
    """The state directory of the ``ledger`` fixture, configured as `setup` leaves it."""
    token_file = tmp_path / "token"
    token_file.write_text(TOKEN + "\n")
    token_file.chmod(0o600)
    directory = ledger.path.parent
    save_config(
        directory / "config.json",
        Configuration(
            account_id=ACCOUNT,
            base_url="https://3.basecampapi.com",
            agent_id=AGENT,
            token_file=str(token_file),
        ),
    )
    return directory


def status(capsys: pytest.CaptureFixture[str], *arguments: str) -> tuple[int, str, str]:
    code = connect(["status", *arguments])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def status_json(capsys: pytest.CaptureFixture[str], state: Path) -> dict[str, Any]:
    code, out, err = status(capsys, "--state-dir", str(state), "--json")
    assert (code, err) == (0, "")
    found: dict[str, Any] = json.loads(out)
    return found


def indeterminate(world: LedgerWorld, intent_id: int, note: str = "2 matching messages") -> int:
    """The intent claimed, then left indeterminate by reconciliation."""
    now = world.ledger.clock.now()
    with world.ledger.write() as connection:
        rows.claim(connection, intent_id, now)
        rows.make_indeterminate(connection, intent_id, note, now)
    return intent_id


def intent_of(world: LedgerWorld, event_id: int, kind: str) -> int:
    with world.ledger.read() as connection:
        found = connection.execute(
            "SELECT id FROM outbox WHERE event_id = ? AND kind = ?", (event_id, kind)
        ).fetchone()
    return int(found[0])


def test_an_idle_ledger_with_no_connector_says_not_running(
    state: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert not Path(f"{lock_path(state, ACCOUNT, AGENT)}.json").exists()
    found = status_json(capsys, state)
    assert found["running"] == "no"
    assert found["lock_file"]["found"] is False
    assert found["queues"] == dict.fromkeys(
        ("seen", "admitted", "queued", "blocked", "dispatched", "completed", "discarded", "held"), 0
    )
    assert (found["feed"], found["live_tasks"], found["dispatches"], found["held"]) == ([], [], [], [])
    code, out, _ = status(capsys, "--state-dir", str(state))
    assert code == 0
    assert (
        out.splitlines()[0]
        == "not running (no lock file) · 0 live tasks · 0 indeterminate messages · 0 blocked"
    )


def test_the_report_counts_what_the_ledger_holds(
    world: LedgerWorld, state: Path, clock: FakeClock, capsys: pytest.CaptureFixture[str]
) -> None:
    world.request(1)  # admitted, waiting for a task; its guard becomes indeterminate
    world.request(2)  # dispatched, its worker running
    live = world.launch(2, work_dir="/srv/two", running_pid=4242)
    world.seen(3)
    world.verdict(3, "blocked", "no_route")
    world.seen(4)
    world.verdict(4, "blocked", "no_route")
    world.seen(5)
    world.verdict(5, "blocked", "spawn_failed")
    clock.advance(60)
    world.request(6)  # dispatched and finished: the worker reported success
    done = world.launch(6, work_dir="/srv/six", running_pid=4343)
    world.get_dispatch(done.task_id, 6)
    world.report(done.task_id, 6, "succeeded", reply_id=555, ack_id=554)
    world.end_attempt(done.attempt_id, "finished")
    world.request(7)  # held for a person
    with world.ledger.write() as connection:
        connection.execute("UPDATE events SET state = 'held', recording_url = ? WHERE id = 7", (URL,))
    world.request(8)  # its guard refused by Basecamp
    refused = intent_of(world, 8, "guard_ack")
    with world.ledger.write() as connection:
        rows.claim(connection, refused, clock.now())
        rows.cancel(connection, refused, rows.IntentState.sending, REFUSED_NOTE, clock.now())
    waiting = indeterminate(world, intent_of(world, 1, "guard_ack"))

    found = status_json(capsys, state)

    assert found["queues"] == {
        "seen": 0,
        "admitted": 2,
        "queued": 0,
        "blocked": 3,
        "dispatched": 1,
        "completed": 1,
        "discarded": 0,
        "held": 1,
    }
    assert found["blocked"] == {"no_route": 2, "spawn_failed": 1}
    (task,) = found["live_tasks"]
    assert task["task_id"] == live.task_id
    assert task["event_ids"] == [2]
    assert task["attempt"]["attempt_id"] == live.attempt_id
    assert (task["attempt"]["state"], task["attempt"]["pid"]) == ("running", 4242)
    assert [
        (entry["intent_id"], entry["state"], entry["event_id"]) for entry in found["waiting_for_person"]
    ] == [
        (waiting, "indeterminate", 1),
        (refused, "refused", 8),
    ]
    newest, oldest = found["dispatches"]
    assert (newest["attempt_id"], newest["state"], newest["stop_reason"]) == (
        done.attempt_id,
        "ended",
        "finished",
    )
    assert newest["events"] == [
        {
            "event_id": 6,
            "delivery": "completed",
            "outcome": "succeeded",
            "withdrawn": False,
            "record_state": "completed",
            "ack_id": 554,
            "reply_id": 555,
        }
    ]
    assert (oldest["attempt_id"], oldest["state"], oldest["stop_reason"]) == (
        live.attempt_id,
        "running",
        None,
    )
    assert [(event["event_id"], event["outcome"]) for event in oldest["events"]] == [(2, None)]
    assert found["held"] == [
        {"event_id": 7, "event_type": "comment.created", "trigger": "mentioned", "recording_url": URL}
    ]
    assert found["summary"] == (
        "not running (no lock file) · 1 live task · 1 indeterminate message · 3 blocked"
        " · 1 refused message · 1 held record"
    )
    assert [(record["event_id"], record["state"], record["reason"]) for record in found["not_running"]] == [
        (1, "admitted", None),
        (3, "blocked", "no_route"),
        (4, "blocked", "no_route"),
        (5, "blocked", "spawn_failed"),
        (8, "admitted", None),
    ], "the ids a person gives redispatch and discard"


def test_the_last_twenty_dispatches_are_shown_newest_first(
    world: LedgerWorld, state: Path, clock: FakeClock, capsys: pytest.CaptureFixture[str]
) -> None:
    launched = []
    for event_id in range(1, 23):
        world.request(event_id)
        launch = world.launch(event_id, work_dir=f"/srv/{event_id}", running_pid=5000 + event_id)
        world.end_attempt(launch.attempt_id, "lost" if event_id % 2 else "finished")
        launched.append(launch.attempt_id)
        clock.advance(1)
    dispatches = status_json(capsys, state)["dispatches"]
    assert [entry["attempt_id"] for entry in dispatches] == launched[::-1][:20]
    assert [entry["events"][0]["event_id"] for entry in dispatches] == list(range(22, 2, -1))
    assert {(entry["stop_reason"], entry["events"][0]["outcome"]) for entry in dispatches} == {
        ("lost", "unknown"),
        ("finished", "unknown"),
    }


def test_a_hold_is_reported(world: LedgerWorld, state: Path, capsys: pytest.CaptureFixture[str]) -> None:
    set_hold(world.ledger, "local:test", "cutting over", parse_timestamp(world.now()))
    found = status_json(capsys, state)
    assert found["hold"] == {
        "held_by": "local:test", "held_at": world.now(), "cause": "cutting over", "generation": 1
    }
    assert found["summary"].endswith(" · on hold")
    code, text, _ = status(capsys, "--state-dir", str(state))
    assert code == 0
    assert "on hold: held by local:test since" in text
    assert "(cutting over), generation 1" in text


def test_neither_the_feed_position_nor_the_token_is_ever_shown(
    ledger: Ledger, state: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with ledger.write() as connection:
        connection.execute(
            "INSERT INTO checkpoints (filter_digest, position, last_served_id, updated_at) VALUES (?, ?, 812, ?)",
            (DIGEST, POSITION, ledger.timestamp()),
        )
        connection.execute(
            "INSERT INTO checkpoints (filter_digest, position, last_served_id, updated_at) VALUES (?, '', 90, ?)",
            ("b" * 64, ledger.timestamp()),
        )
    code, text, _ = status(capsys, "--state-dir", str(state))
    assert code == 0
    _, machine, _ = status(capsys, "--state-dir", str(state), "--json")
    for output in (text, machine):
        assert POSITION not in output
        assert "feed-position" not in output
        assert TOKEN not in output
    assert json.loads(machine)["feed"] == [
        {"has_position": True, "last_served_id": 812, "updated_at": ledger.timestamp()},
        {"has_position": False, "last_served_id": 90, "updated_at": ledger.timestamp()},
    ]
    assert "feed: position kept; last served event 812" in text
    assert "feed: no position (resumes after the last served event); last served event 90" in text


def test_status_takes_no_lock_and_names_the_holder_the_lock_file_names(
    state: Path, clock: FakeClock, capsys: pytest.CaptureFixture[str]
) -> None:
    with acquire(state, ACCOUNT, AGENT, clock.now()):
        found = status_json(capsys, state)
        assert found["lock_file"] == {
            "diagnostic": True,
            "found": True,
            "pid": os.getpid(),
            "started_at": "2026-11-29T12:00:00.000000000Z",
            "pid_status": "present",
            "configuration_problem": None,
        }
        assert found["running"] == "yes"
        assert found["summary"].startswith(f"running (lock file: pid {os.getpid()}, present) · ")


def test_status_says_why_the_running_connectors_configuration_authorizes_nothing(
    state: Path, clock: FakeClock, capsys: pytest.CaptureFixture[str]
) -> None:
    with acquire(state, ACCOUNT, AGENT, clock.now()) as lock:
        lock.note_configuration("the configuration file cannot be read: gone")
        found = status_json(capsys, state)
        assert found["lock_file"]["configuration_problem"] == "the configuration file cannot be read: gone"
        assert found["summary"].endswith("configuration unusable: authorizes nothing")
        lock.note_configuration("")
        assert status_json(capsys, state)["lock_file"]["configuration_problem"] is None


def test_a_lock_file_left_by_a_dead_connector_names_an_absent_pid(
    state: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    gone = subprocess.Popen(["true"])
    gone.wait()
    Path(f"{lock_path(state, ACCOUNT, AGENT)}.json").write_text(
        json.dumps(
            {
                "pid": gone.pid,
                "started_at": "2026-11-29T11:00:00.000000000Z",
                "account_id": ACCOUNT,
                "agent_id": AGENT,
            }
        )
    )
    found = status_json(capsys, state)
    assert (found["lock_file"]["pid"], found["lock_file"]["pid_status"]) == (gone.pid, "absent")
    assert found["running"] == "no"
    assert found["summary"].startswith(f"not running (lock file: pid {gone.pid}, absent) · ")


def test_a_missing_state_directory_configuration_or_ledger_is_one_line_and_nothing_is_created(
    state: Path, ledger: Ledger, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    nowhere = tmp_path / "nowhere"
    code, out, err = status(capsys, "--state-dir", str(nowhere))
    assert (code, out) == (EXIT_CONFIG, "")
    assert err == f"error: no state directory at {nowhere}: run bin/connect setup, then bin/connect run\n"
    assert not nowhere.exists()

    unconfigured = tmp_path / "unconfigured"
    unconfigured.mkdir(mode=0o700)
    code, _, err = status(capsys, "--state-dir", str(unconfigured))
    assert code == EXIT_CONFIG
    assert err.count("\n") == 1
    assert "no configuration at" in err

    ledger.close()
    for name in ("ledger.sqlite3", "ledger.sqlite3-wal", "ledger.sqlite3-shm"):
        (state / name).unlink(missing_ok=True)
    code, _, err = status(capsys, "--state-dir", str(state))
    assert code == EXIT_CONFIG
    assert (
        err
        == f"error: {state / 'ledger.sqlite3'}: no ledger here; the connector creates it on its first run\n"
    )
    assert not (state / "ledger.sqlite3").exists(), "status never creates a ledger"


def test_a_shadow_directory_that_is_a_symlink_is_said_to_be_one(
    state: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(mode=0o700)
    (state / "shadow").symlink_to(elsewhere)
    code, out, err = status(capsys, "--state-dir", str(state), "--shadow")
    assert (code, out) == (EXIT_CONFIG, "")
    assert err == f"error: the ledger's directory {state / 'shadow'} is a symlink; it must be a real directory\n"


def test_a_ledger_from_a_newer_program_is_refused_in_one_line(
    ledger: Ledger, state: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with ledger.write() as connection:
        connection.execute(
            "INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)",
            (SCHEMA_VERSION + 1, ledger.timestamp()),
        )
    code, out, err = status(capsys, "--state-dir", str(state), "--json")
    said = (
        f"{ledger.path}: the ledger is at schema {SCHEMA_VERSION + 1}, newer than this "
        f"program's {SCHEMA_VERSION}; run the newer program"
    )
    assert code == EXIT_CONFIG
    assert err == f"error: {said}\n"
    assert json.loads(out) == {"error": said, "errors": [said], "exit_code": EXIT_CONFIG}  # --json: one object


def test_a_ledger_that_cannot_be_read_is_one_line_not_a_traceback(
    ledger: Ledger, state: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with ledger.write() as connection:
        connection.execute("DROP TABLE checkpoints")
    code, out, err = status(capsys, "--state-dir", str(state))
    assert (code, out) == (EXIT_CONFIG, "")
    assert err == f"error: {ledger.path}: the ledger could not be read: no such table: checkpoints\n"


def test_the_numbers_agree_while_a_connector_commits_beside_the_read(
    world: LedgerWorld, ledger_path: Path
) -> None:
    """A writer commits between every two statements status runs: one read transaction sees
    none of those commits after its first, so the blocked count and the counts by reason agree."""
    for event_id in range(1, 31):
        world.seen(event_id)
    waiting = iter(range(1, 31))
    reader = open_ledger_read_only(ledger_path)

    def commit_beside(statement: str) -> None:
        if statement.lstrip().upper().startswith("SELECT"):
            world.verdict(next(waiting), "blocked", "no_route")

    reader._connection.set_trace_callback(commit_beside)  # the read-only connection status reads on
    try:
        snapshot = read_snapshot(reader)
    finally:
        reader._connection.set_trace_callback(None)
        reader.close()
    counts = dict(snapshot.state_counts)
    assert counts.get("blocked", 0) == sum(count for _, count in snapshot.blocked)
    assert counts.get("blocked", 0) + counts.get("seen", 0) == 30
    with world.ledger.read() as connection:
        (blocked_now,) = connection.execute("SELECT COUNT(*) FROM events WHERE state = 'blocked'").fetchone()
    assert blocked_now > counts.get("blocked", 0), "the writer committed while status was reading"


def test_status_reads_a_ledger_it_cannot_write(
    ledger: Ledger, state: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The read-only way in: status beside a connector leaves the file as it found it."""
    ledger.close()
    before = (state / "ledger.sqlite3").read_bytes()
    status_json(capsys, state)
    assert (state / "ledger.sqlite3").read_bytes() == before
    with open_ledger_read_only(state / "ledger.sqlite3") as reader, pytest.raises(sqlite3.OperationalError):
        reader._connection.execute("DELETE FROM events")


def test_help_teaches_what_status_shows_and_that_it_takes_no_lock(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        connect(["status", "--help"])
    assert done.value.code == 0
    text = capsys.readouterr().out
    for words in (
        "takes no",
        "lock",
        "Diagnostic only",
        "never the position itself",
        "--json",
        "exit codes",
        "last 20 worker runs",
        "bin/outbox-resolve",
        "--account",
    ):
        assert words in text, words


def test_the_state_directory_is_found_from_the_ids_as_run_finds_it(
    tmp_path: Path, clock: FakeClock, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "xdg"))
    directory = tmp_path / "xdg" / "basecamp-connector" / f"{ACCOUNT}-{AGENT}"
    save_config(
        directory / "config.json",
        Configuration(
            account_id=ACCOUNT, base_url="https://3.basecampapi.com", agent_id=AGENT, token_file="/t"
        ),
    )
    with open_ledger(directory / "ledger.sqlite3", clock=clock):
        pass
    for arguments in (("--account", str(ACCOUNT), "--agent", str(AGENT)), ()):
        code, out, err = status(capsys, *arguments, "--json")
        assert (code, err) == (0, "")
        assert json.loads(out)["state_dir"] == str(directory)
