"""``python -m shell.cli``: ``bin/connect``, and ``installed``, the installed package's
``basecamp-connect``: the same command under its installed name. ``run``'s signal handler comes
first, before any import that takes time (``shell.cli.start_signals``); then the standard streams
are made safe (for ``run``, each written by a thread of its own: a reader that stalls never holds
its stop)."""

import sys

from shell.cli.start_signals import runs, take_early

INSTALLED_PROG = "basecamp-connect"  # pyproject.toml's [project.scripts] names it too


def start(prog: str | None = None) -> int:
    take_early(sys.argv[1:])
    from shell.cli.seam import guard  # noqa: PLC0415  (after the handler, which comes first)

    guard(spooled=runs(sys.argv[1:]))
    from shell.cli.main import PROG, main  # noqa: PLC0415

    return main(prog=prog or PROG)


def installed() -> int:
    return start(INSTALLED_PROG)


if __name__ == "__main__":
    sys.exit(start())
