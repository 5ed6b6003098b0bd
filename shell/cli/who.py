"""Who decided: the name a person's decision is recorded under, for both command lines.

``bin/connect redispatch`` and ``discard`` and ``bin/outbox-resolve``'s decisions record who
decided; this is the one place that name is made.

Rules:
1. ``--by`` as given, or ``local:<user name>`` from the system; refused (EXIT_USAGE) when the
   system cannot tell, when it is empty, or longer than ``MAX_BY_LENGTH``.
2. It is one line: control and format characters become spaces, runs of space one.
"""

from __future__ import annotations

import getpass
import unicodedata

from shell.errors import EXIT_USAGE, UserError

MAX_BY_LENGTH = 200


def one_line(text: str) -> str:
    """``text`` as one line: control and format characters become spaces, runs of space one."""
    spaced = "".join(" " if unicodedata.category(char).startswith("C") else char for char in text)
    return " ".join(spaced.split())


def deciding_person(given: str | None) -> str:
    """Who decides: ``--by`` as given, or ``local:<user name>``; one line, never empty."""
    if given is None:
        try:
            user = one_line(getpass.getuser())
        except (OSError, KeyError, ImportError):
            user = ""
        if not user:
            raise UserError("cannot tell who you are from the system; name yourself with --by WHO",
                            EXIT_USAGE)
        return f"local:{user}"
    person = one_line(given)
    if not person:
        raise UserError("--by names who decided; it may not be empty", EXIT_USAGE)
    if len(person) > MAX_BY_LENGTH:
        raise UserError(f"--by is at most {MAX_BY_LENGTH} characters", EXIT_USAGE)
    return person
