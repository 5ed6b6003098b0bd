"""Real worker processes (this interpreter running tiny scripts): the process group, the deadline's
SIGTERM-grace-SIGKILL, shutdown, still-running ticks, and ``terminate_group``'s refusal to signal a
process it cannot prove is the recorded one. Every process here was started by the test that
signals it, and is ended at teardown only while it is provably that process.
"""

from __future__ import annotations

import itertools
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from core.snapshots import StopReason
from core.worker_stream import Exited, Signaled, StopRequest
from shell import processes
from shell.clock import FakeClock, SystemClock
from shell.processes import Termination, terminate_group
from shell.worker.driver import Shutdown, supervise
from tests.worker.support import Attempt, group_alive, live, wait_for

pytestmark = pytest.mark.slow

SLEEPS = """
import pathlib, sys, time
pathlib.Path(sys.argv[1], "ready").write_text("")
time.sleep(60)
"""

IGNORES_SIGTERM = """
import pathlib, signal, sys, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)
pathlib.Path(sys.argv[1], "ready").write_text("")
time.sleep(60)
"""

# The worker starts a child that ignores SIGTERM, in its own group, then either sleeps (KEEPS) or
# exits at once (LEAVES). The child's pid is written to "child".
_WITH_CHILD = """
import pathlib, subprocess, sys, time
here = pathlib.Path(sys.argv[1])
child = subprocess.Popen([sys.executable, "-c",
    "import pathlib, signal, sys, time; signal.signal(signal.SIGTERM, signal.SIG_IGN);"
    " pathlib.Path(sys.argv[1], 'child-ready').write_text(''); time.sleep(60)", str(here)])
while not (here / "child-ready").exists():
    time.sleep(0.005)
(here / "child").write_text(str(child.pid))
(here / "ready").write_text("")
"""
KEEPS_CHILD = _WITH_CHILD + "time.sleep(60)\n"
LEAVES_CHILD = _WITH_CHILD + "sys.exit(0)\n"

GRACE = 0.25


def ready(directory: Path) -> None:
    wait_for((directory / "ready").exists)


def now_plus(seconds: float) -> datetime:
    return SystemClock().now() + timedelta(seconds=seconds)


# -- the worker's identity ----------------------------------------------------------------------


def test_the_worker_leads_its_own_group_and_its_identity_is_read_from_proc(attempt: Attempt) -> None:
    running = attempt.python(SLEEPS)
    ready(attempt.work_dir)
    assert running.pgid == running.pid != os.getpgid(0)
    assert os.getpgid(running.pid) == running.pgid
    boot = Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    ticks = (Path("/proc") / str(running.pid) / "stat").read_text().rpartition(")")[2].split()[19]
    assert running.process_started == f"{boot}:{ticks}"
    assert group_alive(running.pgid)
    assert processes.group_members(running.pgid) == (running.pid,)


def test_a_start_time_is_stable_and_names_one_process() -> None:
    mine = processes.process_start_time(os.getpid())
    assert mine is not None
    assert all(processes.process_start_time(os.getpid()) == mine for _ in range(20))
    assert processes.is_same_process(os.getpid(), mine)
    assert not processes.is_same_process(os.getpid(), mine + "0")
    assert not processes.is_same_process(os.getpid(), "")
    # A parent and the child it forked can share a clock tick: the pid is half of the identity.
    parent = processes.process_start_time(os.getppid())
    assert parent is not None
    assert processes.is_same_process(os.getppid(), parent)
    assert int(parent.rpartition(":")[2]) <= int(mine.rpartition(":")[2])
    beyond = int(Path("/proc/sys/kernel/pid_max").read_text()) + 1
    for nobody in (0, -1, beyond):
        assert processes.process_start_time(nobody) is None
        assert not processes.is_same_process(nobody, mine)


def test_a_start_time_outlives_its_process_only_as_long_as_its_zombie(tmp_path: Path) -> None:
    process = subprocess.Popen([sys.executable, "-c", "pass"], start_new_session=True)
    try:
        started = processes.process_start_time(process.pid)
        assert started is not None
        wait_for(lambda: not live(process.pid))
        # Exited, not reaped: still that process, and its number cannot be reused.
        assert processes.is_same_process(process.pid, started)
        assert processes.group_members(process.pid) == ()
    finally:
        process.wait(5)
    assert processes.process_start_time(process.pid) != started


# -- exits ----------------------------------------------------------------------------------------


def test_a_real_exit_zero_is_finished_and_a_real_exit_three_failed(attempt: Attempt) -> None:
    clean = supervise(
        attempt.python("pass", "att_clean"),
        deadline_at=None,
        stop_event=threading.Event(),
        clock=SystemClock(),
    )
    assert (clean.stop_reason, clean.end.ending, clean.signals) == (StopReason.finished, Exited(0), ())
    failing = supervise(
        attempt.python("raise SystemExit(3)", "att_failing"),
        deadline_at=None,
        stop_event=threading.Event(),
        clock=SystemClock(),
    )
    assert (failing.stop_reason, failing.end.ending) == (StopReason.failed, Exited(3))


def test_a_signal_the_connector_did_not_send_is_failed(attempt: Attempt) -> None:
    running = attempt.python(SLEEPS)
    ready(attempt.work_dir)
    os.kill(running.pid, signal.SIGKILL)  # from outside the driver: our own child
    supervision = supervise(
        running,
        deadline_at=None,
        stop_event=threading.Event(),
        clock=SystemClock(),
        grace_seconds=GRACE,
        poll_seconds=0.01,
    )
    assert supervision.stop_reason == StopReason.failed
    assert supervision.end.ending == Signaled(signal.SIGKILL)
    assert supervision.signals == ()


# -- deadline and shutdown ----------------------------------------------------------------------


def test_at_the_deadline_a_worker_that_heeds_sigterm_ends_within_the_grace(attempt: Attempt) -> None:
    running = attempt.python(SLEEPS)
    ready(attempt.work_dir)
    supervision = supervise(
        running,
        deadline_at=now_plus(0.05),
        stop_event=threading.Event(),
        clock=SystemClock(),
        grace_seconds=GRACE,
        poll_seconds=0.01,
    )
    assert supervision.stop_reason == StopReason.deadline
    assert supervision.end.stop_requested == StopRequest.deadline
    assert supervision.end.ending == Signaled(signal.SIGTERM)
    assert supervision.signals == ("SIGTERM",)
    assert not group_alive(running.pgid)
    assert not running.mcp_config.exists()


def test_at_the_deadline_a_worker_that_ignores_sigterm_is_killed_after_the_grace(attempt: Attempt) -> None:
    running = attempt.python(IGNORES_SIGTERM)
    ready(attempt.work_dir)
    began = time.monotonic()
    supervision = supervise(
        running,
        deadline_at=now_plus(0),
        stop_event=threading.Event(),
        clock=SystemClock(),
        grace_seconds=GRACE,
        poll_seconds=0.01,
    )
    assert time.monotonic() - began >= GRACE
    assert supervision.stop_reason == StopReason.deadline
    assert supervision.signals == ("SIGTERM", "SIGKILL")
    assert supervision.end.ending == Signaled(signal.SIGKILL)
    assert not supervision.survivors
    assert not group_alive(running.pgid)


def test_the_workers_children_end_with_its_group(attempt: Attempt) -> None:
    running = attempt.python(KEEPS_CHILD)
    ready(attempt.work_dir)
    child = int((attempt.work_dir / "child").read_text())
    attempt.stray(child)
    assert processes.group_members(running.pgid) == tuple(sorted((running.pid, child)))
    supervision = supervise(
        running,
        deadline_at=now_plus(0),
        stop_event=threading.Event(),
        clock=SystemClock(),
        grace_seconds=GRACE,
        poll_seconds=0.01,
    )
    assert supervision.stop_reason == StopReason.deadline
    assert supervision.signals == ("SIGTERM", "SIGKILL")  # the child ignored SIGTERM
    assert not live(child)
    assert processes.group_members(running.pgid) == ()


def test_a_child_left_behind_by_a_finished_worker_is_ended_and_the_worker_still_finished(
    attempt: Attempt,
) -> None:
    running = attempt.python(LEAVES_CHILD)
    ready(attempt.work_dir)
    child = int((attempt.work_dir / "child").read_text())
    attempt.stray(child)
    supervision = supervise(
        running,
        deadline_at=None,
        stop_event=threading.Event(),
        clock=SystemClock(),
        grace_seconds=GRACE,
        poll_seconds=0.01,
    )
    assert supervision.stop_reason == StopReason.finished
    assert supervision.end.ending == Exited(0)
    assert supervision.signals == ("SIGTERM", "SIGKILL")
    assert not live(child)


def test_shutdown_stops_the_worker_and_is_named_shutdown(attempt: Attempt) -> None:
    running = attempt.python(SLEEPS)
    ready(attempt.work_dir)
    stop = threading.Event()
    threading.Timer(0.1, stop.set).start()
    supervision = supervise(
        running,
        deadline_at=now_plus(3600),
        stop_event=stop,
        clock=SystemClock(),
        grace_seconds=GRACE,
        poll_seconds=0.01,
    )
    assert supervision.stop_reason == StopReason.shutdown
    assert supervision.signals == ("SIGTERM",)
    assert not group_alive(running.pgid)


def test_a_shutdown_that_asks_for_a_shorter_grace_kills_a_worker_ignoring_sigterm_within_it(
    attempt: Attempt,
) -> None:
    running = attempt.python(IGNORES_SIGTERM)
    ready(attempt.work_dir)
    stop = Shutdown()
    stop.begin(0.3)
    began = time.monotonic()
    supervision = supervise(running, deadline_at=now_plus(3600), stop_event=stop, clock=SystemClock(),
                            grace_seconds=30.0, poll_seconds=0.01)  # fmt: skip
    assert time.monotonic() - began < 5, "the driver's own 30 s grace, not the shutdown's"
    assert supervision.stop_reason == StopReason.shutdown
    assert supervision.signals == ("SIGTERM", "SIGKILL")
    assert not group_alive(running.pgid)


def test_a_shutdown_that_begins_during_the_deadlines_grace_cuts_it_short(attempt: Attempt) -> None:
    running = attempt.python(IGNORES_SIGTERM)
    ready(attempt.work_dir)
    stop = Shutdown()
    threading.Timer(0.5, stop.begin, args=(0.3,)).start()  # the deadline's SIGTERM went 0.5 s before
    began = time.monotonic()
    supervision = supervise(running, deadline_at=now_plus(0), stop_event=stop, clock=SystemClock(),
                            grace_seconds=30.0, poll_seconds=0.01)  # fmt: skip
    assert time.monotonic() - began < 5, "the deadline's 30 s grace ran on past the shutdown's"
    assert supervision.stop_reason == StopReason.deadline
    assert supervision.signals == ("SIGTERM", "SIGKILL")
    assert not group_alive(running.pgid)


def test_a_shutdown_never_lengthens_the_drivers_grace(attempt: Attempt) -> None:
    running = attempt.python(IGNORES_SIGTERM)
    ready(attempt.work_dir)
    stop = Shutdown()
    stop.begin(30.0)
    began = time.monotonic()
    supervision = supervise(running, deadline_at=now_plus(3600), stop_event=stop, clock=SystemClock(),
                            grace_seconds=GRACE, poll_seconds=0.01)  # fmt: skip
    assert time.monotonic() - began < 5
    assert supervision.signals == ("SIGTERM", "SIGKILL")


# -- still running --------------------------------------------------------------------------------


def test_a_running_worker_is_reported_still_running_every_interval(attempt: Attempt) -> None:
    ticks: list[float] = []
    began = time.monotonic()
    supervision = supervise(
        attempt.python("import time; time.sleep(0.45)"),
        deadline_at=None,
        stop_event=threading.Event(),
        clock=SystemClock(),
        still_running_every=0.1,
        on_tick=lambda: ticks.append(time.monotonic() - began),
        poll_seconds=0.01,
    )
    elapsed = time.monotonic() - began
    assert supervision.stop_reason == StopReason.finished
    assert supervision.still_running == len(ticks)
    assert 3 <= len(ticks) <= elapsed / 0.1 + 1
    assert all(later - earlier >= 0.09 for earlier, later in itertools.pairwise(ticks))


def test_ticks_follow_the_clock_given_and_stop_at_the_deadline(attempt: Attempt) -> None:
    clock = FakeClock()
    running = attempt.python(SLEEPS)
    ready(attempt.work_dir)
    ticks: list[object] = []
    supervision = supervise(
        running,
        deadline_at=clock.now() + timedelta(minutes=50),
        stop_event=threading.Event(),
        clock=clock,
        on_tick=lambda: ticks.append(clock.now()),
        poll_seconds=10.0,
        grace_seconds=30.0,
    )
    # Every ten minutes of the worker's fifty: at 10, 20, 30 and 40; at 50 the deadline came first.
    assert supervision.still_running == len(ticks) == 4
    assert supervision.stop_reason == StopReason.deadline
    assert supervision.signals[0] == "SIGTERM"


def test_a_failing_still_running_report_does_not_abandon_the_worker(attempt: Attempt) -> None:
    def broken() -> None:
        raise RuntimeError("the ledger is locked")

    supervision = supervise(
        attempt.python("import time; time.sleep(0.2)"),
        deadline_at=None,
        stop_event=threading.Event(),
        clock=SystemClock(),
        still_running_every=0.05,
        on_tick=broken,
        poll_seconds=0.01,
    )
    assert supervision.stop_reason == StopReason.finished
    assert supervision.still_running >= 2


# -- terminate_group: recovery's ending of a recorded group ---------------------------------------


@pytest.fixture
def leaders(tmp_path: Path) -> Iterator[list[subprocess.Popen[bytes]]]:
    """Session leaders started directly by a test; ended at teardown while provably ours."""
    started: list[subprocess.Popen[bytes]] = []
    yield started
    for process in started:
        if process.poll() is None and os.getpgid(process.pid) == process.pid:
            os.killpg(process.pid, signal.SIGKILL)  # our unreaped child: its number is still its own
            process.wait(5)


def leader(leaders: list[subprocess.Popen[bytes]], directory: Path, script: str) -> subprocess.Popen[bytes]:
    process = subprocess.Popen([sys.executable, "-c", script, str(directory)], start_new_session=True)
    leaders.append(process)
    ready(directory)
    return process


def test_a_group_whose_leader_has_another_start_time_is_never_signaled(
    tmp_path: Path, leaders: list[subprocess.Popen[bytes]]
) -> None:
    process = leader(leaders, tmp_path, SLEEPS)
    actual = processes.process_start_time(process.pid)
    assert actual is not None
    boot, _, ticks = actual.rpartition(":")
    for wrong in (f"{boot}:{int(ticks) + 1}", f"{boot}:{int(ticks) - 1}", f"another-boot:{ticks}"):
        result = terminate_group(process.pid, process.pid, wrong, grace_seconds=0.2)
        assert result.outcome == Termination.gone  # the recorded process no longer exists
        assert result.signals == ()
    time.sleep(0.1)
    assert process.poll() is None, "the process was signaled"
    assert live(process.pid)


@pytest.mark.parametrize(("pid_of", "started"), [("leader", ""), ("none", "x:1"), ("init", "x:1")])
def test_nothing_is_signaled_without_a_recorded_process(
    tmp_path: Path, leaders: list[subprocess.Popen[bytes]], pid_of: str, started: str
) -> None:
    process = leader(leaders, tmp_path, SLEEPS)
    pid = {"leader": process.pid, "none": 0, "init": 1}[pid_of]
    result = terminate_group(process.pid if pid_of == "leader" else pid, pid, started, grace_seconds=0.2)
    assert result.outcome == Termination.unverifiable
    assert result.signals == ()
    assert process.poll() is None


def test_a_verified_group_that_heeds_sigterm_is_terminated(
    tmp_path: Path, leaders: list[subprocess.Popen[bytes]]
) -> None:
    process = leader(leaders, tmp_path, SLEEPS)
    started = processes.process_start_time(process.pid)
    assert started is not None
    result = terminate_group(process.pid, process.pid, started, grace_seconds=2.0)
    assert (result.outcome, result.signals) == (Termination.terminated, ("SIGTERM",))
    assert process.wait(5) == -signal.SIGTERM


def test_a_verified_group_that_ignores_sigterm_is_killed_after_the_grace(
    tmp_path: Path, leaders: list[subprocess.Popen[bytes]]
) -> None:
    process = leader(leaders, tmp_path, IGNORES_SIGTERM)
    started = processes.process_start_time(process.pid)
    assert started is not None
    began = time.monotonic()
    result = terminate_group(process.pid, process.pid, started, grace_seconds=0.3)
    assert time.monotonic() - began >= 0.3
    assert (result.outcome, result.signals) == (Termination.killed, ("SIGTERM", "SIGKILL"))
    assert process.wait(5) == -signal.SIGKILL


HEEDS_SIGTERM_KEEPS_CHILD = KEEPS_CHILD  # the leader heeds SIGTERM; its child does not


def test_members_older_than_the_verified_leader_are_killed_after_it_is_gone(
    tmp_path: Path, leaders: list[subprocess.Popen[bytes]], attempt: Attempt
) -> None:
    process = leader(leaders, tmp_path, HEEDS_SIGTERM_KEEPS_CHILD)
    child = int((tmp_path / "child").read_text())
    attempt.stray(child)
    started = processes.process_start_time(process.pid)
    assert started is not None
    # Someone else reaps the leader as soon as it exits, as init would after a connector's crash.
    reaper = threading.Thread(target=process.wait)
    reaper.start()
    result = terminate_group(process.pid, process.pid, started, grace_seconds=0.3)
    reaper.join(5)
    assert (result.outcome, result.signals) == (Termination.killed, ("SIGTERM", "SIGKILL"))
    assert not live(child)


def test_a_group_whose_leader_is_already_gone_is_unverifiable_and_left_alone(
    tmp_path: Path, leaders: list[subprocess.Popen[bytes]], attempt: Attempt
) -> None:
    process = leader(leaders, tmp_path, LEAVES_CHILD)
    child = int((tmp_path / "child").read_text())
    attempt.stray(child)
    started = processes.process_start_time(process.pid)
    assert started is not None
    assert process.wait(5) == 0  # the leader is gone and reaped; its child holds the group
    result = terminate_group(process.pid, process.pid, started, grace_seconds=0.2)
    assert result.outcome == Termination.unverifiable
    assert result.signals == ()
    assert live(child)


def test_a_group_that_is_gone_entirely_is_gone(
    tmp_path: Path, leaders: list[subprocess.Popen[bytes]]
) -> None:
    process = subprocess.Popen([sys.executable, "-c", "pass"], start_new_session=True)
    leaders.append(process)
    started = processes.process_start_time(process.pid)
    assert started is not None
    process.wait(5)
    result = terminate_group(process.pid, process.pid, started, grace_seconds=0.2)
    assert (result.outcome, result.signals) == (Termination.gone, ())
