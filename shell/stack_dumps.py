"""Every thread's stack on SIGUSR1, written by a thread of its own: the one home of SIGUSR1.

Rules:
1. ``faulthandler``'s dump is not used: its signal handler walks every thread's frames without
   the GIL, and in CPython 3.11 a thread that starts or ends meanwhile makes it read freed memory,
   so the process dies of SIGSEGV (python/cpython#116008). A connector starts and ends threads all
   the time, and a stack dump must never be the thing that kills it.
2. SIGUSR1's Python handler does nothing (``shell.cli.run`` rule 7: a handler only notes). The
   C-level handler writes the signal's number to the wakeup pipe (``signal.set_wakeup_fd``), so
   the dump never waits for the main thread to reach Python code: a main thread blocked in a
   join, a sleep or a call into C still gets its stack written.
3. The dumping thread reads the pipe and, for each SIGUSR1, writes every other thread's stack
   (``sys._current_frames``, read under the GIL, so no frame changes while it is read), most
   recent call first, at most ``FRAMES_PER_THREAD`` frames a thread, and no source lines (no file
   is read). Another signal's number in the pipe is ignored.
4. A dump is written to the file descriptor itself (2 by default) in ``os.write`` calls, never
   through ``sys.stderr``'s buffer, which the interrupted thread may be in the middle of. A
   failure to write it is dropped: the connector goes on.
5. ``on_sigusr1`` installs all of this for the length of its block and then puts back the
   handler and the wakeup descriptor it found; the pipe is closed and the thread ends. Off the
   main thread (a test's run in process) it installs nothing: only the main thread may set a
   handler.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
import traceback
from collections.abc import Iterator
from types import FrameType

FRAMES_PER_THREAD = 100
"""Rule 3, as ``faulthandler`` had it."""


def _ignore(signum: int, frame: FrameType | None) -> None:
    """Rule 2: the Python handler notes nothing; the wakeup pipe carries the signal."""


@contextlib.contextmanager
def on_sigusr1(fd: int = 2) -> Iterator[None]:
    """Rule 5: SIGUSR1 writes every thread's stack to ``fd`` while the block runs."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    readable, writable = os.pipe2(os.O_CLOEXEC)
    os.set_blocking(writable, False)  # set_wakeup_fd's condition: a signal handler never blocks
    dumper = threading.Thread(target=_dump_on_each, args=(readable, fd), name="stack-dumps", daemon=True)
    dumper.start()
    earlier_handler = signal.signal(signal.SIGUSR1, _ignore)
    earlier_wakeup = signal.set_wakeup_fd(writable, warn_on_full_buffer=False)
    try:
        yield
    finally:
        signal.set_wakeup_fd(earlier_wakeup)
        signal.signal(signal.SIGUSR1, earlier_handler)
        os.close(writable)  # the dumper reads the end of the pipe and ends
        dumper.join()
        os.close(readable)


def _dump_on_each(readable: int, fd: int) -> None:
    """Rule 3: one dump for each SIGUSR1 in the pipe, until it is closed."""
    while chunk := os.read(readable, 64):
        for _ in range(chunk.count(signal.SIGUSR1)):
            _write(fd, stacks(threading.get_ident()))


def stacks(leave_out: int) -> str:
    """Every thread's stack but ``leave_out``'s, most recent call first, in faulthandler's form."""
    names = {thread.ident: thread.name for thread in threading.enumerate()}
    frames = {ident: frame for ident, frame in sys._current_frames().items() if ident != leave_out}
    count = f"{len(frames)} thread" if len(frames) == 1 else f"{len(frames)} threads"
    lines = [f"the stacks of {count} (SIGUSR1; the connector goes on)\n"]
    for ident, frame in frames.items():
        lines.append(f"Thread 0x{ident:016x} {names.get(ident, '(unnamed)')!r} (most recent call first):\n")
        walked = traceback.StackSummary.extract(
            traceback.walk_stack(frame), limit=FRAMES_PER_THREAD, lookup_lines=False
        )
        lines.extend(f'  File "{entry.filename}", line {entry.lineno} in {entry.name}\n' for entry in walked)
        lines.append("\n")
    return "".join(lines)


def _write(fd: int, text: str) -> None:
    """Rule 4: the whole text to ``fd`` with ``os.write``; a failure is dropped."""
    data = memoryview(text.encode("utf-8", "backslashreplace"))
    with contextlib.suppress(OSError):
        while data:
            data = data[os.write(fd, data) :]
