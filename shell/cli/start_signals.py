"""``bin/connect run``'s signals from its first instant: a stop asked for before the connector
could hear it is kept, never lost and never a death.

Rules:
1. ``bin/connect`` traps SIGTERM and SIGINT for ``run`` in its own shell (a stop there is one
   line, ``stopped before the start (SIGTERM): nothing was started``, and exit 0) and ignores
   SIGHUP, then starts the interpreter with the three blocked (``env --block-signal``): one sent
   while the interpreter starts waits, pending, for the handler.
2. ``take_early`` is the first thing ``shell.cli.__main__`` does, before any import that takes
   time: for ``run`` it installs the handler (``note_stops``) and unblocks the three, so a pending
   one is noted at once. Every other command keeps the interpreter's defaults.
3. The handler only notes (a list append: no lock, nothing that can block, as ``shell.cli.run``
   rule 7 says): SIGTERM and SIGINT in ``STOPS``, which ``run`` reads before each step of its
   start (``stop_asked``) and the connector's start and loops read after; SIGHUP in
   ``HANGUPS``, which is ignored -- an ssh hang-up or a habitual ``kill -HUP`` never ends a
   running connector -- and said once on stderr (``said_hangups``): the configuration is re-read
   every 2 s on its own, so a SIGHUP has nothing left to ask for.
4. ``note_stops`` called again keeps what was noted while its handler stood; one called after
   another handler replaced it (a test's, in process) starts from nothing.
"""

from __future__ import annotations

import signal
import sys
from types import FrameType

STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)
HANGUP = signal.SIGHUP
STOPS: list[int] = []
HANGUPS: list[int] = []


def _note(signum: int, frame: FrameType | None) -> None:
    (HANGUPS if signum == HANGUP else STOPS).append(signum)  # rule 3: only notes


def take_early(argv: list[str]) -> None:
    """Rule 2: ``run``'s handler before anything else runs."""
    if next((argument for argument in argv if not argument.startswith("-")), None) == "run":
        note_stops()


def note_stops() -> None:
    """Install the noting handler for SIGTERM, SIGINT and SIGHUP (rule 4), then unblock them."""
    if signal.getsignal(signal.SIGTERM) is not _note:
        STOPS.clear()
        HANGUPS.clear()
        for signum in (*STOP_SIGNALS, HANGUP):
            signal.signal(signum, _note)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {*STOP_SIGNALS, HANGUP})


def stop_asked() -> bool:
    """Whether SIGTERM or SIGINT has been noted (rule 3)."""
    return bool(STOPS)


def stop_name() -> str:
    """The first stop noted, by name: ``SIGTERM``."""
    return signal.Signals(STOPS[0]).name if STOPS else ""


def said_hangups() -> None:
    """Each SIGHUP noted since the last call, said on stderr as ignored (rule 3)."""
    while HANGUPS:
        HANGUPS.pop()
        print(
            "SIGHUP ignored: the connector goes on (its configuration is re-read every 2 s on its own;"
            " stop it with SIGTERM)",
            file=sys.stderr,
            flush=True,
        )
