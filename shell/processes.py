"""Process identity and process-group control, for Linux: the one module that signals.

A pid names a process only until the kernel reuses it; with its start time (``/proc/<pid>/stat``
field 22) and the boot's id it names one process ever. The ledger records that identity, and every
signal here is checked against it first: a recorded group is signaled only after its leader was
checked, just before, to be the recorded process (an unreaped zombie still is), or, with the leader
gone, when every live member started before the leader was last seen: Linux never reuses a number
still some process's pid, group or session, so such a member is the original group's. Nothing
unverifiable is signaled; the attempt then stays live. SIGTERM, the grace, then SIGKILL is written
once (``_escalate``), for a recorded group and for the driver's own child. The race left is every
check-then-signal's: between check and signal the whole group would have to end and its number go to
a new session leader. What a child started outside its group (a session of its own) is found by a
mark in its environment among this process's descendants, held here by ``subreaper``, and ended by
``end_marked_descendants``, each signal only to the process found."""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import subprocess
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from shell.clock import Clock, SystemClock

PROC = Path("/proc")
BOOT_ID = PROC / "sys" / "kernel" / "random" / "boot_id"
STAT_START_TIME = 22  # field numbers as proc(5) counts them, from 1
STAT_STATE = 3
STAT_PARENT = 4
STAT_PROCESS_GROUP = 5
DEAD_STATES = frozenset({"Z", "X", "x"})
POLL_SECONDS = 0.02
KILL_WAIT_SECONDS = 5.0
LAST_WORDS_SECONDS = 2.0  # stop_child: the moment a child has to answer its last-words signal
PR_SET_CHILD_SUBREAPER, PR_GET_CHILD_SUBREAPER = 36, 37  # prctl(2)


class Termination(StrEnum):
    gone = "gone"  # nothing of the recorded process or its group was left to signal
    terminated = "terminated"  # SIGTERM sent; the group was gone within the grace
    killed = "killed"  # SIGKILL sent after the grace; the group is gone
    survived = "survived"  # SIGKILL sent; members were still alive after waiting for them
    unverifiable = "unverifiable"  # nothing sent (or nothing more): the group could not be proven ours


@dataclass(frozen=True, slots=True)
class TerminationResult:
    outcome: Termination
    reason: str
    signals: tuple[str, ...] = ()  # the signals sent to the group, in order


@dataclass(frozen=True, slots=True)
class _Stat:
    state: str
    parent: int
    process_group: int
    start_ticks: int


def _read_stat(pid: int) -> _Stat | None:
    if pid <= 0:
        return None
    try:
        text = (PROC / str(pid) / "stat").read_text(encoding="ascii", errors="replace")
    except (FileNotFoundError, ProcessLookupError, NotADirectoryError, PermissionError):
        return None
    # Field 2 is the command name in parentheses and may itself hold spaces and parentheses:
    # every field after it starts past the last ")".
    _, closing, rest = text.rpartition(")")
    fields = rest.split()
    if not closing or len(fields) < STAT_START_TIME - 2:
        return None
    try:
        return _Stat(fields[STAT_STATE - 3], int(fields[STAT_PARENT - 3]),
                     int(fields[STAT_PROCESS_GROUP - 3]), int(fields[STAT_START_TIME - 3]))
    except ValueError:
        return None


def process_start_time(pid: int) -> str | None:
    """The identity of the process now at ``pid``, or ``None`` when it is gone or unreadable."""
    stat = _read_stat(pid)
    try:
        boot = BOOT_ID.read_text(encoding="ascii").strip()
    except OSError:
        return None
    return f"{boot}:{stat.start_ticks}" if stat is not None and boot else None


def is_same_process(pid: int, start_time: str) -> bool:
    return pid > 1 and bool(start_time) and process_start_time(pid) == start_time


def group_members(pgid: int) -> tuple[int, ...]:
    """The live (not zombie) processes in group ``pgid``, read from ``/proc``."""
    if pgid <= 1:
        return ()
    members: list[int] = []
    for entry in PROC.iterdir():
        if not entry.name.isdigit():
            continue
        stat = _read_stat(int(entry.name))
        if stat is not None and stat.process_group == pgid and stat.state not in DEAD_STATES:
            members.append(int(entry.name))
    return tuple(sorted(members))


def _ticks_now() -> int | None:
    """Clock ticks since boot now, on the scale of ``/proc/<pid>/stat`` field 22."""
    try:
        uptime = float((PROC / "uptime").read_text(encoding="ascii").split()[0])
    except (OSError, ValueError, IndexError):
        return None
    return int(uptime * os.sysconf("SC_CLK_TCK"))


def _provably_ours(pgid: int, leader_pid: int, leader_start_time: str, seen_at_ticks: int) -> bool:
    if is_same_process(leader_pid, leader_start_time):
        return True
    for member in group_members(pgid):
        stat = _read_stat(member)
        if stat is not None and stat.state not in DEAD_STATES and stat.start_ticks >= seen_at_ticks:
            return False
    return True


def _signal_group(pgid: int, signal_number: signal.Signals) -> bool:
    try:
        os.killpg(pgid, signal_number)
    except ProcessLookupError:
        return False
    return True


Grace = float | Callable[[], float]  # seconds; a callable is asked again as the wait goes on


def _wait_for_members(pgid: int, seconds: Grace, clock: Clock, poll: float = POLL_SECONDS) -> bool:
    """Wait up to ``seconds`` for group ``pgid`` to have no live member; True if it has none."""
    began = clock.monotonic()
    while group_members(pgid):
        if clock.monotonic() >= began + max(0.0, seconds() if callable(seconds) else seconds):
            return False
        clock.sleep(poll)
    return True


_SENT_TERM, _SENT_BOTH = ("SIGTERM",), ("SIGTERM", "SIGKILL")


def _escalate(pgid: int, grace: Grace, clock: Clock, poll: float,
              may_signal: Callable[[signal.Signals], bool]) -> TerminationResult:
    """SIGTERM, the grace, SIGKILL; ``may_signal`` is asked just before each signal whether the
    group is still provably the caller's (``gone``: SIGTERM was not allowed or found no group)."""
    if not (may_signal(signal.SIGTERM) and _signal_group(pgid, signal.SIGTERM)):
        return TerminationResult(Termination.gone, "the group ended before it was signaled")
    if _wait_for_members(pgid, grace, clock, poll):
        return TerminationResult(Termination.terminated, "ended within the grace", _SENT_TERM)
    if not may_signal(signal.SIGKILL):
        younger = "after SIGTERM the leader was gone and the group held a process younger than it"
        return TerminationResult(Termination.unverifiable, younger, _SENT_TERM)
    if not _signal_group(pgid, signal.SIGKILL):
        return TerminationResult(Termination.terminated, "ended just after the grace", _SENT_TERM)
    if _wait_for_members(pgid, KILL_WAIT_SECONDS, clock, poll):
        return TerminationResult(Termination.killed, "killed after the grace", _SENT_BOTH)
    return TerminationResult(Termination.survived, "members outlived SIGKILL (uninterruptible?)", _SENT_BOTH)


def terminate_group(pgid: int, leader_pid: int, leader_start_time: str, grace_seconds: float,
                    clock: Clock | None = None) -> TerminationResult:
    """End the recorded worker's process group: SIGTERM, the grace, SIGKILL, each provably ours."""
    checked = _check_leader(pgid, leader_pid, leader_start_time)
    if isinstance(checked, TerminationResult):
        return checked

    def may_signal(number: signal.Signals) -> bool:
        # SIGTERM follows the check just made; SIGKILL, after the grace, checks again.
        return number == signal.SIGTERM or _provably_ours(pgid, leader_pid, leader_start_time, checked)

    return _escalate(pgid, grace_seconds, clock or SystemClock(), POLL_SECONDS, may_signal)


def _check_leader(pgid: int, leader_pid: int, leader_start_time: str) -> TerminationResult | int:
    """When the recorded leader was last seen to be itself (clock ticks), or why nothing may be signaled."""
    if pgid <= 1 or leader_pid <= 1:
        return TerminationResult(Termination.unverifiable, "no process was recorded")
    if not leader_start_time:
        return TerminationResult(Termination.unverifiable, "no start time was recorded")
    current = process_start_time(leader_pid)
    if current is not None and current != leader_start_time:
        # Linux frees a number only once no pid, group or session holds it: the group ended first.
        return TerminationResult(Termination.gone, "the recorded leader's pid is another process now")
    if current is None:
        if not group_members(pgid):
            return TerminationResult(Termination.gone, "the recorded leader and its group are gone")
        in_use = "the recorded leader is gone but its group number is in use"
        return TerminationResult(Termination.unverifiable, in_use)
    seen_at = _ticks_now()
    if seen_at is None or not is_same_process(leader_pid, leader_start_time):
        return TerminationResult(Termination.unverifiable, "the leader could not be checked again")
    return seen_at


def _unreaped_child(pid: int) -> bool:
    """True while ``pid`` is this process's child, alive or a zombie not yet reaped."""
    if pid <= 1:
        return False
    try:
        os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    except ChildProcessError:
        return False
    return True


def end_child_group(pid: int, process_started: str, grace_seconds: Grace, clock: Clock,
                    poll: float) -> tuple[tuple[str, ...], bool]:
    """End the group our child ``pid`` leads, each signal only while the child is unreaped or
    provably the recorded process (a callable grace is asked again while it runs, so it can be cut
    short): the signals sent, and whether members survived them all."""
    if pid <= 1 or not group_members(pid):
        return (), False

    def may_signal(_: signal.Signals) -> bool:
        return _unreaped_child(pid) or is_same_process(pid, process_started)

    ended = _escalate(pid, grace_seconds, clock, poll, may_signal)
    if ended.outcome is Termination.gone:
        return (), bool(group_members(pid))
    if ended.signals == _SENT_BOTH:
        return ended.signals, ended.outcome is Termination.survived
    return ended.signals, not _wait_for_members(pid, KILL_WAIT_SECONDS, clock, poll)


@contextlib.contextmanager
def subreaper() -> Iterator[None]:
    """While it stands, what a descendant orphans is reparented to this process, not to init: it
    stays a descendant, to be found. Without ``prctl`` (not Linux) nothing changes."""
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        yield
        return
    was = ctypes.c_int(0)
    prctl(PR_GET_CHILD_SUBREAPER, ctypes.byref(was), 0, 0, 0)
    prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    try:
        yield
    finally:
        prctl(PR_SET_CHILD_SUBREAPER, was.value, 0, 0, 0)


def _descendants() -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in PROC.iterdir():
        if entry.name.isdigit() and (stat := _read_stat(int(entry.name))) is not None:
            children.setdefault(stat.parent, []).append(int(entry.name))
    found, waiting = [], list(children.get(os.getpid(), []))
    while waiting:
        found.append(pid := waiting.pop())
        waiting.extend(children.get(pid, []))
    return found


def _marked(pid: int, mark: bytes) -> bool:
    try:
        return mark in (PROC / str(pid) / "environ").read_bytes().split(b"\0")
    except OSError:
        return False


def _live(pid: int, started: str) -> bool:
    stat = _read_stat(pid)
    return stat is not None and stat.state not in DEAD_STATES and is_same_process(pid, started)


def end_marked_descendants(mark: str, grace_seconds: float, clock: Clock,
                           poll: float = POLL_SECONDS) -> tuple[int, bool]:
    """End every descendant of this process whose environment holds ``mark`` (``NAME=value``):
    SIGTERM, the grace, SIGKILL, each only to the process found, and reap those reparented here.
    How many were found, and whether any outlived SIGKILL."""
    found: dict[int, str] = {}
    sent: dict[int, signal.Signals] = {}
    kill_at = clock.monotonic() + max(0.0, grace_seconds)
    while True:
        for pid in _descendants():
            if pid not in found and _marked(pid, mark.encode()):
                found[pid] = process_start_time(pid) or ""
        for pid in found:  # a zombie reparented here is ours to reap; any other answers nothing
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, os.WNOHANG)
        live = [pid for pid, started in found.items() if _live(pid, started)]
        now = clock.monotonic()
        if not live or now >= kill_at + KILL_WAIT_SECONDS:
            return len(found), bool(live)
        number = signal.SIGKILL if now >= kill_at else signal.SIGTERM
        for pid in live:
            if sent.get(pid) != number and is_same_process(pid, found[pid]):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, number)
                sent[pid] = number
        clock.sleep(poll)


def signal_child(process: subprocess.Popen[bytes], number: signal.Signals) -> None:
    """Signal a child this process started and has not reaped (``Popen.send_signal`` sends nothing
    to one already reaped, so its number is never someone else's)."""
    process.send_signal(number)


def stop_child(process: subprocess.Popen[bytes], grace_seconds: float,
               last_words: signal.Signals | None = None) -> int | None:
    """SIGTERM to a child this process started, the grace, then SIGKILL: its exit code, or None when
    it had to be killed. ``last_words``: a signal sent before the SIGKILL, with a moment to answer
    it (the connector writes its stacks on SIGUSR1), so a child says where it was."""
    signal_child(process, signal.SIGTERM)
    try:
        return process.wait(timeout=grace_seconds)
    except subprocess.TimeoutExpired:
        if last_words is not None:
            signal_child(process, last_words)
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(timeout=LAST_WORDS_SECONDS)
        signal_child(process, signal.SIGKILL)
        process.wait()
        return None


def is_present(pid: int) -> bool | None:
    """Whether a process has number ``pid`` now (``kill(pid, 0)``): None when it is someone else's,
    present but not provably ours. A liveness probe only: nothing is signaled."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return None
    return True
