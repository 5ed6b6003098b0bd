"""A conversation's Claude Code directory, as the driver hands it to a worker (a real child that
writes what it was given): under the private directory, owner-only, emptied for a worker that
resumes no session, kept for one that does, and swept at release unless a later task resumes it."""

from __future__ import annotations

import sys
import threading
from dataclasses import dataclass
from pathlib import Path

from shell.clock import FakeClock
from shell.worker.command import CLAUDE_CONFIG_ENV
from shell.worker.driver import CommandDriver, RunningWorker, WorkerCommand, claude_directory
from tests.worker.support import ATTEMPT, TOKEN, Attempt

WRITES_ITS_DIRECTORY = (
    "import os, pathlib, sys\n"
    f"given = pathlib.Path(os.environ['{CLAUDE_CONFIG_ENV}'])\n"
    "(pathlib.Path(sys.argv[1]) / 'given').write_text(str(given))\n"
    "(given / 'transcript.jsonl').write_text('said')\n"
)


@dataclass(frozen=True)
class _Launch:
    resume_session: str
    task_id: int = 12
    attempt_id: str = ATTEMPT
    token: str = TOKEN
    event_ids: tuple[int, ...] = (345,)
    trigger: str = "mention"
    recording_url: str = "https://3.basecamp.com/1/buckets/2/messages/3"
    conversation: str = "recording:3"


def _run(attempt: Attempt, launch: _Launch, resumed: bool) -> Path:
    command = WorkerCommand(argv=(sys.executable, "-c", WRITES_ITS_DIRECTORY, "{work_dir}"))
    driver = CommandDriver(command, attempt.private_dir, attempt.ledger_path, clock=FakeClock(), environ={})
    started = driver.spawn(launch, attempt.work_dir)  # type: ignore[arg-type]
    assert isinstance(started, RunningWorker)
    attempt.started.append(started)
    driver.supervise(started, FakeClock().now().replace(year=2100), threading.Event(), lambda: None)
    given = Path((attempt.work_dir / "given").read_text())
    driver.release(started, resumed)
    return given


def _made(attempt: Attempt) -> Path:
    directory = claude_directory(attempt.private_dir, "recording:3")
    for made in (attempt.private_dir, directory.parent, directory):
        made.mkdir(mode=0o700)
        made.chmod(0o700)
    return directory


def test_a_fresh_worker_gets_an_empty_owner_only_directory_of_its_conversations(attempt: Attempt) -> None:
    directory = _made(attempt)
    (directory / "stale.jsonl").write_text("an earlier session's")
    given = _run(attempt, _Launch(resume_session=""), resumed=True)
    assert given == directory
    assert directory.is_relative_to(attempt.private_dir)
    assert oct(directory.stat().st_mode & 0o777) == "0o700"
    assert sorted(path.name for path in directory.iterdir()) == ["transcript.jsonl"], "emptied before it ran"


def test_a_resuming_worker_keeps_its_conversations_transcripts(attempt: Attempt) -> None:
    directory = _made(attempt)
    (directory / "earlier.jsonl").write_text("the session it resumes")
    _run(attempt, _Launch(resume_session="0b3e0c4e-7d4f-4a51-9d6f-1b0c8f7e6a52"), resumed=True)
    assert sorted(path.name for path in directory.iterdir()) == ["earlier.jsonl", "transcript.jsonl"]


def test_release_sweeps_the_directory_unless_a_later_task_resumes_it(attempt: Attempt) -> None:
    directory = claude_directory(attempt.private_dir, "recording:3")
    _run(attempt, _Launch(resume_session=""), resumed=False)
    assert not directory.exists()
