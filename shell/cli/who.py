"""Who decided: the name a person's decision is recorded under, for both command lines.

``bin/connect redispatch`` and ``discard`` and ``bin/outbox-resolve``'s decisions record who
decided; this is the one place that name is made.

Rules:
1. ``--by`` as given, or ``local:<user name>`` from the system; refused (EXIT_USAGE) when the
   system cannot tell, when it is empty, or longer than ``MAX_BY_LENGTH``.
2. A name the system gives is made one line: control and format characters become spaces,
   runs of space one (``one_line``).
3. Free text a person gives (``--by``, ``hold --reason``: ``person_text``) holding a control or
   format character -- a newline, an ANSI escape, DEL, BEL, a bidirectional override -- is
   refused (EXIT_USAGE), never stored: it would come back to a terminal as it was given.
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


def person_text(given: str, flag: str, says: str, max_length: int) -> str:
    """Free text a person gave with ``flag`` (which ``says`` what), surrounding spaces trimmed;
    refused empty, longer than ``max_length``, or holding a control or format character (rule 3)."""
    for place, char in enumerate(given):
        if unicodedata.category(char)[0] == "C" or unicodedata.category(char) in ("Zl", "Zp"):
            raise UserError(
                f"{flag} may not hold control characters (a newline, an escape, DEL, BEL...): "
                f"U+{ord(char):04X} at character {place + 1}",
                EXIT_USAGE,
            )
    text = given.strip()
    if not text:
        raise UserError(f"{flag} {says}; it may not be empty", EXIT_USAGE)
    if len(text) > max_length:
        raise UserError(f"{flag} is at most {max_length} characters", EXIT_USAGE)
    return text


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
    return person_text(given, "--by", "names who decided", MAX_BY_LENGTH)
