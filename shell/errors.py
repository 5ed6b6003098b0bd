"""Typed errors, and the exit codes a person sees. A ``UserError`` becomes one line on stderr and
its documented exit code at one seam (``shell.cli.seam``), never a traceback, and no message carries
a token, a message body or a feed position. A supervisor restarts ``run`` on 1 (a bug) and 6 (passes
by itself), never on 2 or 3 (a person must act first)."""

from __future__ import annotations

EXIT_OK = 0
EXIT_FAILURE = 1  # the program ran and found something wrong (e.g. a doubled message)
EXIT_USAGE = 2  # argparse's own code for bad arguments
EXIT_CONFIG = 3  # missing, unreadable or wrong configuration, ledger, disk or environment
EXIT_NOT_FOUND = 4  # an id that names nothing
EXIT_REFUSED = 5  # a move the rules do not allow
EXIT_UNAVAILABLE = 6  # Basecamp or the ledger could not be reached or locked
EXIT_BROKEN_PIPE = 141  # the reader of our output went away (head, a closed pager): 128 + SIGPIPE
NO_RESTART = (EXIT_USAGE, EXIT_CONFIG)  # a supervisor's restart cannot mend these: a person must act


class UserError(Exception):
    """Something a person can fix; carries its exit code."""

    exit_code = EXIT_CONFIG

    def __init__(self, message: str, exit_code: int | None = None) -> None:
        super().__init__(message)
        if exit_code is not None:
            self.exit_code = exit_code
