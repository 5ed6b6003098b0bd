"""``bin/connect``'s signals from its first instant: a stop asked for before the connector could
hear it is kept, never lost and never a death.

``bin/connect`` starts with SIGTERM, SIGINT, SIGHUP and SIGUSR1 blocked (GNU ``env
--block-signal``), so one sent before a handler stands waits, pending. ``take_early`` is the first
thing ``shell.cli.__main__`` does. For ``run`` it installs the noting handler and unblocks the first
three, so a pending one is noted at once; SIGUSR1 waits for ``run``'s stack dumps
(``shell.stack_dumps`` unblocks it), so one sent while the interpreter starts is a dump, not a
death. Every other command unblocks all four under the defaults, SIGINT then ``KeyboardInterrupt``
again (130 at the seam). The handler only notes, and the main thread stops the connector: one that
stopped it would run the bounded stop inside the handler, and one that took a lock could deadlock
against the main thread. SIGTERM and SIGINT go in ``STOPS``, read by ``run``'s start and loops;
SIGHUP in ``HANGUPS``, ignored but said on stderr (an ssh hang-up never ends a connector). ``run``'s
first ``note_stops`` after ``take_early`` keeps what was noted since the process began; any other
call starts from nothing, so a run in process (a test's) never inherits an earlier stop."""

from __future__ import annotations

import signal
import sys
from types import FrameType

from shell import log_format

STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)
HANGUP = signal.SIGHUP
BLOCKED_AT_START = {*STOP_SIGNALS, HANGUP, signal.SIGUSR1}
STOPS: list[int] = []
HANGUPS: list[int] = []
_KEPT_FOR_RUN: list[bool] = []  # filled by take_early, emptied by run's first note_stops


def _note(signum: int, frame: FrameType | None) -> None:
    (HANGUPS if signum == HANGUP else STOPS).append(signum)  # only notes


def chosen(argv: list[str] | tuple[str, ...]) -> str | None:
    """The subcommand argparse will take from ``argv``; one starting with ``-`` names none."""
    return next((argument for argument in argv if not argument.startswith("-")), None)


def runs(argv: list[str]) -> bool:
    return chosen(argv) == "run"


def take_early(argv: list[str]) -> None:
    if runs(argv):
        note_stops()
        _KEPT_FOR_RUN.append(True)
        return
    signal.signal(signal.SIGINT, signal.SIG_DFL)  # a pending Ctrl-C ends it as it would have
    signal.pthread_sigmask(signal.SIG_UNBLOCK, BLOCKED_AT_START)
    signal.signal(signal.SIGINT, signal.default_int_handler)


def note_stops() -> None:
    if not _KEPT_FOR_RUN:
        STOPS.clear()
        HANGUPS.clear()
    _KEPT_FOR_RUN.clear()
    for signum in (*STOP_SIGNALS, HANGUP):
        signal.signal(signum, _note)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {*STOP_SIGNALS, HANGUP})


def stop_asked() -> bool:
    return bool(STOPS)


def stop_name() -> str:
    return signal.Signals(STOPS[0]).name if STOPS else ""


def said_hangups() -> None:
    while HANGUPS:
        HANGUPS.pop()
        said = ("SIGHUP ignored: the connector goes on (its configuration is re-read every 2 s on its own;"
                " stop it with SIGTERM)")
        print(log_format.line(said, level="warning"), file=sys.stderr, flush=True)
