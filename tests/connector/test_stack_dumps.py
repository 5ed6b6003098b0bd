"""``shell.stack_dumps``: SIGUSR1 writes every thread's stack from a thread of its own, and never
kills the process it asks about. Each child here is a real interpreter, signaled by its test."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

from shell import stack_dumps
from tests.support.child import REPOSITORY, wait_until

DUMP_HEADER = "(SIGUSR1; the connector goes on)"

CHURN = """
import sys, threading
from shell import stack_dumps
stop = threading.Event()
threading.Thread(target=lambda: (sys.stdin.read(), stop.set()), daemon=True).start()
with stack_dumps.on_sigusr1():
    print("ready", flush=True)
    while not stop.is_set():
        started = [threading.Thread(target=sum, args=(range(100),)) for _ in range(8)]
        for thread in started:
            thread.start()
        for thread in started:
            thread.join()
print("done", flush=True)
"""

BLOCKED_ON_THE_LEDGER = """
import sqlite3, sys
from shell import stack_dumps
def blocked_on_the_ledger(connection):
    connection.execute("INSERT INTO t VALUES (1)")
with stack_dumps.on_sigusr1():
    connection = sqlite3.connect(sys.argv[1], timeout=20, isolation_level=None)
    print("ready", flush=True)
    blocked_on_the_ledger(connection)
print("done", flush=True)
"""

INTO_A_BROKEN_PIPE = """
import os, signal, threading, time
from shell import stack_dumps
readable, writable = os.pipe()
os.close(readable)
with stack_dumps.on_sigusr1(writable):
    for _ in range(3):
        os.kill(os.getpid(), signal.SIGUSR1)
        time.sleep(0.2)
    print("dumper alive" if any(t.name == "stack-dumps" for t in threading.enumerate()) else "dumper gone")
"""

PUT_BACK = """
import signal, threading
from shell import stack_dumps
noted = []
signal.signal(signal.SIGUSR1, lambda *_: noted.append(1))
earlier = signal.getsignal(signal.SIGUSR1)
with stack_dumps.on_sigusr1():
    inside = signal.getsignal(signal.SIGUSR1)
print("handler put back" if signal.getsignal(signal.SIGUSR1) is earlier and inside is not earlier else "handler lost")
print("wakeup put back" if signal.set_wakeup_fd(-1) == -1 else "wakeup left")
print("dumper ended" if all(t.name != "stack-dumps" for t in threading.enumerate()) else "dumper left")
"""

A_FLOOD = """
import os, signal, time
from shell import stack_dumps
with stack_dumps.on_sigusr1():
    for _ in range(3000):
        os.kill(os.getpid(), signal.SIGUSR1)
    time.sleep(0.5)
"""

INTO_A_PIPE_NOBODY_READS = """
import fcntl, os, signal, threading, time
from shell import stack_dumps
readable, writable = os.pipe()
fcntl.fcntl(writable, fcntl.F_SETPIPE_SZ, 4096)
release = threading.Event()
for _ in range(40):
    threading.Thread(target=release.wait, daemon=True).start()
began = time.monotonic()
with stack_dumps.on_sigusr1(writable):
    os.kill(os.getpid(), signal.SIGUSR1)
    time.sleep(0.5)
    began = time.monotonic()
print(f"{time.monotonic() - began:.1f}", flush=True)
"""

SYSTEM_CALL = """
import ctypes, os, signal, threading, time
from shell import stack_dumps
libc = ctypes.CDLL(None, use_errno=True)
readable, writable = os.pipe()
main = threading.get_ident()
def later():
    time.sleep(0.3)
    signal.pthread_kill(main, signal.SIGUSR1)
    time.sleep(0.3)
    os.write(writable, b"x")
with stack_dumps.on_sigusr1():
    threading.Thread(target=later).start()
    buffer = ctypes.create_string_buffer(1)
    got = libc.read(readable, buffer, 1)
    print(got, "read" if got == 1 else os.strerror(ctypes.get_errno()))
"""

OTHER_SIGNALS = """
import os, signal, time
from shell import stack_dumps
with stack_dumps.on_sigusr1():
    signal.signal(signal.SIGHUP, lambda *_: None)
    for _ in range(3):
        os.kill(os.getpid(), signal.SIGHUP)
        time.sleep(0.1)
    print("hung up", flush=True)
    os.kill(os.getpid(), signal.SIGUSR1)
    time.sleep(0.3)
"""


def _child(script: str, *arguments: str, errors: Path) -> subprocess.Popen[str]:
    environment = {**os.environ, "PYTHONPATH": str(REPOSITORY)}
    with errors.open("w") as stderr:
        return subprocess.Popen(
            [sys.executable, "-c", script, *arguments],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr, env=environment, text=True,
        )  # fmt: skip


def _ran(script: str, tmp_path: Path) -> tuple[int, str, str]:
    """A child run to its end: its exit code, stdout and stderr."""
    errors = tmp_path / "stderr.txt"
    child = _child(script, errors=errors)
    try:
        out, _ = child.communicate("", timeout=30)
    finally:
        if child.poll() is None:  # it hung: the test fails, the child is not left behind
            child.kill()
            child.wait()
    return child.returncode, out, errors.read_text()


def test_a_process_starting_and_ending_threads_lives_through_hundreds_of_dumps(tmp_path: Path) -> None:
    errors = tmp_path / "stderr.txt"
    child = _child(CHURN, errors=errors)
    try:
        assert child.stdout is not None
        assert child.stdout.readline() == "ready\n"
        for _ in range(300):  # faulthandler's handler died of SIGSEGV within a hundred of these
            assert child.poll() is None, f"the child died of {child.returncode} under a dump"
            child.send_signal(signal.SIGUSR1)
            time.sleep(0.005)
        out, _ = child.communicate("", timeout=30)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert (child.returncode, out) == (0, "done\n")
    assert errors.read_text().count(DUMP_HEADER) >= 10


def test_a_main_thread_waiting_in_c_on_a_locked_ledger_gets_its_stack_written_at_once(tmp_path: Path) -> None:
    database = tmp_path / "ledger.sqlite3"
    holder = sqlite3.connect(database, isolation_level=None)
    holder.execute("CREATE TABLE t (x)")
    holder.execute("BEGIN EXCLUSIVE")
    errors = tmp_path / "stderr.txt"
    child = _child(BLOCKED_ON_THE_LEDGER, str(database), errors=errors)
    try:
        assert child.stdout is not None
        assert child.stdout.readline() == "ready\n"
        time.sleep(0.5)  # into sqlite's busy wait, which runs no Python handler for 20 s
        child.send_signal(signal.SIGUSR1)
        wait_until(lambda: "blocked_on_the_ledger" in errors.read_text(), timeout=5)
        holder.execute("ROLLBACK")
        out, _ = child.communicate("", timeout=30)
    finally:
        holder.close()
        if child.poll() is None:
            child.kill()
            child.wait()
    assert (child.returncode, out) == (0, "done\n")


def test_a_dump_that_cannot_be_written_is_dropped_and_the_dumper_goes_on(tmp_path: Path) -> None:
    code, out, errors = _ran(INTO_A_BROKEN_PIPE, tmp_path)
    assert (code, out) == (0, "dumper alive\n")
    assert "Traceback" not in errors


def test_the_block_puts_back_the_handler_and_the_wakeup_it_found_and_its_thread_ends(tmp_path: Path) -> None:
    assert _ran(PUT_BACK, tmp_path)[:2] == (0, "handler put back\nwakeup put back\ndumper ended\n")


def test_another_signal_in_the_wakeup_pipe_writes_no_stacks(tmp_path: Path) -> None:
    code, out, errors = _ran(OTHER_SIGNALS, tmp_path)
    assert (code, out) == (0, "hung up\n")
    assert errors.count(DUMP_HEADER) == 1


def test_signals_that_queue_while_a_dump_is_written_are_one_dump(tmp_path: Path) -> None:
    code, _, errors = _ran(A_FLOOD, tmp_path)
    assert code == 0
    assert 1 <= errors.count(DUMP_HEADER) < 1000, "3,000 signals sent at once"


def test_the_blocks_end_waits_for_a_dump_stuck_on_a_full_pipe_no_longer_than_its_bound(tmp_path: Path) -> None:
    code, out, _ = _ran(INTO_A_PIPE_NOBODY_READS, tmp_path)
    assert code == 0
    assert float(out) <= stack_dumps.JOIN_SECONDS + 1


def test_sigusr1_interrupts_no_system_call_in_c(tmp_path: Path) -> None:
    assert _ran(SYSTEM_CALL, tmp_path)[:2] == (0, "1 read\n")


def test_off_the_main_thread_nothing_is_installed() -> None:
    seen: list[object] = []
    earlier = signal.getsignal(signal.SIGUSR1)

    def inside_a_thread() -> None:
        with stack_dumps.on_sigusr1():
            seen.append(signal.getsignal(signal.SIGUSR1))

    thread = threading.Thread(target=inside_a_thread)
    thread.start()
    thread.join()
    assert seen == [earlier]


def test_the_stacks_name_each_thread_and_its_calls_most_recent_first_and_leave_out_the_asker() -> None:
    release = threading.Event()

    def waits_here() -> None:
        release.wait(30)

    waiting = threading.Thread(target=waits_here, name="waiting-one")
    waiting.start()
    try:
        wait_until(lambda: "waits_here" in stack_dumps.stacks(threading.get_ident()))
        text = stack_dumps.stacks(threading.get_ident())
    finally:
        release.set()
        waiting.join()
    section = text.split(f"Thread 0x{waiting.ident:016x} 'waiting-one' (most recent call first):\n")[1]
    calls = [line.split(" in ")[-1] for line in section.split("\n\n")[0].splitlines()]
    assert calls.index("wait") < calls.index("waits_here") < calls.index("run")
    assert f"0x{threading.get_ident():016x}" not in text
    assert "release.wait(30)" not in text  # no source line is read
