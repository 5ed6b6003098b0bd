"""Process identity and process-group control, for Linux: the one module that signals.

A pid names a process only until the kernel reuses it; with its start time (``/proc/<pid>/stat``
field 22) and the boot's id it names one process ever. The ledger records that identity, and
every signal here is checked against it first: a recorded group is signaled only after its
leader was checked, just before, to be the recorded process (an unreaped zombie still is), or,
with the leader gone, when every live member started before the leader was last seen: Linux
never reuses a number still some process's pid, group or session, so such a member is the
original group's. Nothing unverifiable is signaled; the attempt then stays live. SIGTERM, the
grace, then SIGKILL is written once (``_escalate``), for a recorded group and for the driver's
own child. The race left is every check-then-signal's: between check and signal the whole group
would have to end and its number go to a new session leader."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from shell.clock import Clock, SystemClock

PROC = Path("/proc")
BOOT_ID = PROC / "sys" / "kernel" / "random" / "boot_id"
STAT_START_TIME = 22  # field numbers as proc(5) counts them, from 1
STAT_STATE = 3
STAT_PROCESS_GROUP = 5
DEAD_STATES = frozenset({"Z", "X", "x"})
POLL_SECONDS = 0.02
KILL_WAIT_SECONDS = 5.0
LAST_WORDS_SECONDS = 2.0  # stop_child: the moment a child has to answer its last-words signal


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
        return _Stat(
            state=fields[STAT_STATE - 3],
            process_group=int(fields[STAT_PROCESS_GROUP - 3]),
            start_ticks=int(fields[STAT_START_TIME - 3]),
        )
    except ValueError:
        return None


def _boot_id() -> str | None:
    try:
        boot = BOOT_ID.read_text(encoding="ascii").strip()
    except OSError:
        return None
    return boot or None


def process_start_time(pid: int) -> str | None:
    """The identity of the process now at ``pid``, or ``None`` when it is gone or unreadable."""
    stat = _read_stat(pid)
    boot = _boot_id()
    if stat is None or boot is None:
        return None
    return f"{boot}:{stat.start_ticks}"


def is_same_process(pid: int, start_time: str) -> bool:
    if pid <= 1 or not start_time:
        return False
    return process_start_time(pid) == start_time


def group_alive(pgid: int) -> bool:
    """True when any process, a zombie included, is in group ``pgid`` (``killpg(pgid, 0)``)."""
    if pgid <= 1:
        return False
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # it exists; it is someone else's
    return True


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


def _wait_for_members(pgid: int, seconds: float, clock: Clock, poll: float = POLL_SECONDS) -> bool:
    """Wait up to ``seconds`` for group ``pgid`` to have no live member; True if it has none."""
    until = clock.monotonic() + max(0.0, seconds)
    while group_members(pgid):
        if clock.monotonic() >= until:
            return False
        clock.sleep(poll)
    return True


class _Escalation(StrEnum):
    not_sent = "not_sent"  # SIGTERM was not allowed, or found no group
    ended = "ended"  # the group had no live member within the grace
    kill_refused = "kill_refused"  # after the grace the group could not be proven ours: no SIGKILL
    gone_before_kill = "gone_before_kill"  # SIGKILL found no group
    killed = "killed"  # SIGKILL sent; the group is gone
    survived = "survived"  # SIGKILL sent; members still live after waiting for them


def _escalate(
    pgid: int, grace: float, clock: Clock, poll: float, may_signal: Callable[[signal.Signals], bool]
) -> _Escalation:
    """SIGTERM, the grace, SIGKILL; ``may_signal`` is asked just before each signal whether the
    group is still provably the caller's."""
    if not (may_signal(signal.SIGTERM) and _signal_group(pgid, signal.SIGTERM)):
        return _Escalation.not_sent
    if _wait_for_members(pgid, grace, clock, poll):
        return _Escalation.ended
    if not may_signal(signal.SIGKILL):
        return _Escalation.kill_refused
    if not _signal_group(pgid, signal.SIGKILL):
        return _Escalation.gone_before_kill
    if _wait_for_members(pgid, KILL_WAIT_SECONDS, clock, poll):
        return _Escalation.killed
    return _Escalation.survived


_SENT_TERM, _SENT_BOTH = ("SIGTERM",), ("SIGTERM", "SIGKILL")
_TERMINATIONS = {
    _Escalation.not_sent: TerminationResult(Termination.gone, "the group ended before it was signaled"),
    _Escalation.ended: TerminationResult(Termination.terminated, "ended within the grace", _SENT_TERM),
    _Escalation.kill_refused: TerminationResult(
        Termination.unverifiable,
        "after SIGTERM the leader was gone and the group held a process younger than it",
        _SENT_TERM,
    ),
    _Escalation.gone_before_kill: TerminationResult(
        Termination.terminated, "ended just after the grace", _SENT_TERM
    ),
    _Escalation.killed: TerminationResult(Termination.killed, "killed after the grace", _SENT_BOTH),
    _Escalation.survived: TerminationResult(
        Termination.survived, "members outlived SIGKILL (uninterruptible?)", _SENT_BOTH
    ),
}


def terminate_group(
    pgid: int, leader_pid: int, leader_start_time: str, grace_seconds: float, clock: Clock | None = None
) -> TerminationResult:
    """End the recorded worker's process group: SIGTERM, the grace, SIGKILL, each provably ours."""
    checked = _check_leader(pgid, leader_pid, leader_start_time)
    if isinstance(checked, TerminationResult):
        return checked

    def may_signal(number: signal.Signals) -> bool:
        # SIGTERM follows the check just made; SIGKILL, after the grace, checks again.
        return number == signal.SIGTERM or _provably_ours(pgid, leader_pid, leader_start_time, checked)

    return _TERMINATIONS[_escalate(pgid, grace_seconds, clock or SystemClock(), POLL_SECONDS, may_signal)]


def _check_leader(pgid: int, leader_pid: int, leader_start_time: str) -> TerminationResult | int:
    """The clock ticks at which the recorded leader was last seen to be itself, or why nothing
    may be signaled."""
    if pgid <= 1 or leader_pid <= 1:
        return TerminationResult(Termination.unverifiable, "no process was recorded")
    if not leader_start_time:
        return TerminationResult(Termination.unverifiable, "no start time was recorded")
    current = process_start_time(leader_pid)
    if current is not None and current != leader_start_time:
        # The number is another process's now. Linux frees a number only when no process has
        # it as pid, group or session, so the recorded group ended before this one began.
        return TerminationResult(Termination.gone, "the recorded leader's pid is another process now")
    if current is None:
        if not group_members(pgid):
            return TerminationResult(Termination.gone, "the recorded leader and its group are gone")
        return TerminationResult(
            Termination.unverifiable, "the recorded leader is gone but its group number is in use"
        )
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


def end_child_group(
    pid: int, process_started: str, grace_seconds: float, clock: Clock, poll: float
) -> tuple[tuple[str, ...], bool]:
    """End the group our child ``pid`` leads, each signal only while the child is unreaped or
    provably the recorded process: the signals sent, and whether members survived them all."""
    if pid <= 1 or not group_members(pid):
        return (), False

    def may_signal(_: signal.Signals) -> bool:
        return _unreaped_child(pid) or is_same_process(pid, process_started)

    step = _escalate(pid, grace_seconds, clock, poll, may_signal)
    if step == _Escalation.not_sent:
        return (), bool(group_members(pid))
    if step == _Escalation.ended:
        return ("SIGTERM",), False
    if step in (_Escalation.kill_refused, _Escalation.gone_before_kill):
        return ("SIGTERM",), not _wait_for_members(pid, KILL_WAIT_SECONDS, clock, poll)
    return ("SIGTERM", "SIGKILL"), step == _Escalation.survived


def signal_child(process: subprocess.Popen[bytes], number: signal.Signals) -> None:
    """Signal a child this process started and has not reaped (``Popen.send_signal`` sends
    nothing to one already reaped, so its number is never someone else's)."""
    process.send_signal(number)


def stop_child(
    process: subprocess.Popen[bytes], grace_seconds: float, last_words: signal.Signals | None = None
) -> int | None:
    """SIGTERM to a child this process started, the grace, then SIGKILL: its exit code, or None
    when it had to be killed. ``last_words``: a signal sent before the SIGKILL, with a moment to
    answer it (the connector writes its stacks on SIGUSR1), so a child says where it was."""
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
    """Whether a process has number ``pid`` now (``kill(pid, 0)``): None when it is someone
    else's, present but not provably ours. A liveness probe only: nothing is signaled."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return None
    return True
