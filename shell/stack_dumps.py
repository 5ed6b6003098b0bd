"""Every thread's stack on SIGUSR1, written by a thread of its own: the one home of SIGUSR1's
handler.

Not ``faulthandler``'s dump: its handler walks every thread's frames without the GIL, and in CPython
3.11 a thread that starts or ends meanwhile makes it read freed memory and die of SIGSEGV
(python/cpython#116008); a connector starts and ends threads all the time. Here SIGUSR1's Python
handler does nothing and interrupts no system call (SA_RESTART); the C-level handler writes the
signal's number to the wakeup pipe, so a main thread blocked in a join, a sleep or C code that lets
the GIL go still gets its stack written (one holding the GIL in C, once it lets go). What the
dumping thread reads at once is one dump if a SIGUSR1 is among it (signals that queued meanwhile are
one; another signal's number is ignored): every other thread, by name, most recent call first, no
source lines, each walked under the GIL from a list taken under it, so no frame is read freed. It
goes to the descriptor in ``os.write`` calls, never through ``sys.stderr``'s buffer (the interrupted
thread may be in it); a failed write is dropped. With ``run --log-format json`` a dump is one object.

``on_sigusr1`` installs this for its block (off the main thread, nothing), then puts back the
handler and wakeup descriptor it found; its end waits ``JOIN_SECONDS`` for a dump under way, no
longer (one stuck on a stderr nobody reads would hold a stop). Once it stands SIGUSR1 is unblocked:
``bin/connect`` starts with it blocked, so one sent while the interpreter started is dumped now."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
import traceback
from collections.abc import Iterator
from types import FrameType

from shell import log_format

FRAMES_PER_THREAD = 100  # as faulthandler had it
JOIN_SECONDS = 2.0  # how long the block's end waits for a dump under way


def _ignore(signum: int, frame: FrameType | None) -> None:
    """The Python handler notes nothing; the wakeup pipe carries the signal."""


@contextlib.contextmanager
def on_sigusr1(fd: int = 2) -> Iterator[None]:
    """SIGUSR1 writes every thread's stack to ``fd`` while the block runs."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    readable, writable = os.pipe2(os.O_CLOEXEC)
    os.set_blocking(writable, False)  # set_wakeup_fd's condition: a signal handler never blocks
    dumper = threading.Thread(target=_dump_when_asked, args=(readable, fd), name="stack-dumps", daemon=True)
    earlier_handler = signal.getsignal(signal.SIGUSR1)
    earlier_wakeup: int | None = None
    try:
        dumper.start()
        signal.signal(signal.SIGUSR1, _ignore)
        signal.siginterrupt(signal.SIGUSR1, False)  # SA_RESTART
        earlier_wakeup = signal.set_wakeup_fd(writable, warn_on_full_buffer=False)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGUSR1})  # one pending is dumped now
        yield
    finally:
        if earlier_wakeup is not None:
            signal.set_wakeup_fd(earlier_wakeup)
        signal.signal(signal.SIGUSR1, signal.SIG_DFL if earlier_handler is None else earlier_handler)
        os.close(writable)  # the dumper reads the end of the pipe, closes its own end and ends
        if dumper.ident is None:  # it never started: its end is this block's to close
            os.close(readable)
        else:
            dumper.join(JOIN_SECONDS)


def _dump_when_asked(readable: int, fd: int) -> None:
    try:
        while chunk := os.read(readable, 4096):
            if signal.SIGUSR1 in chunk:
                head, _, rest = stacks(threading.get_ident()).partition("\n")
                said = log_format.line(head, level="warning", logger="connector.stacks", detail=rest)
                _write(fd, said if said.endswith("\n") else f"{said}\n")  # one object a line with json
    finally:
        os.close(readable)


def stacks(leave_out: int) -> str:
    """Every thread's stack but ``leave_out``'s, most recent call first: faulthandler's lines, and names."""
    names = {thread.ident: thread.name for thread in threading.enumerate()}
    frames = {ident: frame for ident, frame in sys._current_frames().items() if ident != leave_out}
    count = f"{len(frames)} thread" if len(frames) == 1 else f"{len(frames)} threads"
    lines = [f"the stacks of {count} (SIGUSR1; the connector goes on)\n"]
    for ident, frame in frames.items():
        lines.append(f"Thread 0x{ident:016x} {names.get(ident, '(unnamed)')!r} (most recent call first):\n")
        walked = traceback.StackSummary.extract(traceback.walk_stack(frame), limit=FRAMES_PER_THREAD,
                                                lookup_lines=False)
        lines.extend(f'  File "{entry.filename}", line {entry.lineno} in {entry.name}\n' for entry in walked)
        lines.append("\n")
    return "".join(lines)


def _write(fd: int, text: str) -> None:
    data = memoryview(text.encode("utf-8", "backslashreplace"))
    with contextlib.suppress(OSError):
        while data:
            data = data[os.write(fd, data) :]
