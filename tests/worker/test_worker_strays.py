"""What a worker starts outside its process group ends with its attempt: a real worker that
double-forks a sleeper into a session of its own and exits. Under the connector's subreaper the
sleeper is reparented to the connector, found by the attempt's mark and ended; through
``bin/connect run`` too, whose process is that subreaper."""

from __future__ import annotations

import sys
import threading
from datetime import timedelta
from pathlib import Path

from shell import processes
from shell.basecamp.standin.server import StandIn
from shell.clock import SystemClock
from shell.ledger.connection import open_ledger_read_only
from shell.worker.driver import CommandDriver, RunningWorker, WorkerCommand
from tests.support.child import wait_until
from tests.support.configured import configure_connector, start_run
from tests.worker.support import Attempt, live
from tests.worker.test_claude_directory import _Launch

# The worker: fork, setsid, fork again; the grandchild execs sleep and its pid is written down.
DETACHES_A_SLEEPER = (
    "import os, sys, time\n"
    "if os.fork() == 0:\n"
    "    os.setsid()\n"
    "    if os.fork() == 0:\n"
    "        open(os.path.join(sys.argv[1], 'sleeper'), 'w').write(str(os.getpid()))\n"
    "        os.execvp('sleep', ['sleep', '60'])\n"
    "    os._exit(0)\n"
    "while not os.path.exists(os.path.join(sys.argv[1], 'sleeper')):\n"
    "    time.sleep(0.01)\n"
)


def _sleeper(work_dir: Path, attempt: Attempt) -> int:
    wait_until(lambda: (work_dir / "sleeper").exists() and (work_dir / "sleeper").read_text() != "", timeout=10)
    pid = int((work_dir / "sleeper").read_text())
    attempt.stray(pid)  # ended at teardown if it is still that process
    return pid


def test_a_detached_process_a_worker_started_ends_with_its_attempt(tmp_path: Path) -> None:
    attempt = Attempt(tmp_path, tmp_path / "project", tmp_path / "private", tmp_path / "ledger.sqlite3")
    attempt.work_dir.mkdir()
    try:
        command = WorkerCommand(argv=(sys.executable, "-c", DETACHES_A_SLEEPER, "{work_dir}"))
        driver = CommandDriver(command, attempt.private_dir, attempt.ledger_path, grace_seconds=2, environ={})
        with processes.subreaper():
            started = driver.spawn(_Launch(resume_session=""), attempt.work_dir)  # type: ignore[arg-type]
            assert isinstance(started, RunningWorker)
            attempt.started.append(started)
            sleeper = _sleeper(attempt.work_dir, attempt)
            told = driver.supervise(started, SystemClock().now() + timedelta(seconds=30), threading.Event(),
                                    lambda: None)  # fmt: skip
        assert told is not None, "nothing outlived SIGKILL"
        assert not live(sleeper), "the sleeper it left outside its group is gone"
        assert not Path(f"/proc/{sleeper}").exists(), "and reaped: no zombie left"
    finally:
        attempt.clean_up()


def test_the_running_connector_ends_what_a_worker_left_outside_its_group(tmp_path: Path) -> None:
    with StandIn(world="demo") as standin:
        state = configure_connector(standin, tmp_path, worker=[sys.executable, "-c", DETACHES_A_SLEEPER,
                                                                "{work_dir}"])  # fmt: skip
        work = next(tmp_path.glob("work-*"))
        process = start_run(state)
        attempt = Attempt(tmp_path, work, state / "sessions", state / "ledger.sqlite3")
        try:
            standin.mention(standin.world.people[0], standin.world.projects[0].recording_ids[0], "please look")
            sleeper = _sleeper(work, attempt)
            wait_until(lambda: _attempts(state) == ["ended"], timeout=60)
            wait_until(lambda: not Path(f"/proc/{sleeper}").exists(), timeout=5)
        finally:
            process.terminate()
            process.communicate(timeout=60)
            attempt.clean_up()
        assert process.returncode == 0


def _attempts(state: Path) -> list[str]:
    with open_ledger_read_only(state / "ledger.sqlite3") as ledger, ledger.read() as connection:
        return [str(row[0]) for row in connection.execute("SELECT state FROM attempts")]

