"""The argument types every command shares, so one kind of value is read one way everywhere.

A bad value is argparse's own usage error (exit 2) naming the value, or for the words a person
gives, a ``UserError`` with ``EXIT_USAGE``; nothing here reads a file or a clock. A value too large
to store or to wait for is a bad value: an id is at most ``MAX_ID`` (SQLite's INTEGER), a time at
most ``MAX_DURATION`` (a year). Who decided (``--by``) is the name given, or ``local:<user name>``
from the system made one line; free text a person gives (``--by``, ``--reason``) holding a control
or format character -- a newline, an ANSI escape, DEL, BEL, a bidirectional override -- is refused,
never stored: it would come back to a terminal as it was given."""

from __future__ import annotations

import argparse
import getpass
import math
import unicodedata

from core import ids
from core.ids import MAX_ID
from core.timestamps import MAX_DURATION, parse_duration
from shell.errors import EXIT_USAGE, UserError

MAX_PORT = 65_535
MAX_DESCRIPTOR = 2**31 - 1
MAX_BY_LENGTH = 200
MAX_REASON_LENGTH = 500


def positive_integer(text: str) -> int:
    """An id or a count: a whole number above zero, in ASCII digits alone (``core.ids.id_digits``)."""
    value = ids.id_digits(text)
    if value is None and not (text.startswith("-") and ids.id_digits(text[1:]) is not None):
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number in ASCII digits 0-9 alone")
    if value is None or value <= 0:  # -3 and 0 alike
        raise argparse.ArgumentTypeError(f"{text} is not a positive number")
    if value > MAX_ID:
        raise argparse.ArgumentTypeError(f"{text} is larger than any id ({MAX_ID})")
    return value


def descriptor(text: str) -> int:
    """An inherited file descriptor's number: a whole number the system can take (0 to 2^31-1)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a descriptor number") from None
    if not 0 <= value <= MAX_DESCRIPTOR:
        raise argparse.ArgumentTypeError(f"{text} is not a descriptor number: 0 to {MAX_DESCRIPTOR}")
    return value


def port(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number") from None
    if not 0 <= value <= MAX_PORT:
        raise argparse.ArgumentTypeError(f"{value} is not a port: 0 (any free port) to {MAX_PORT}")
    return value


def positive_seconds(text: str) -> float:
    """A time in seconds, finite and above zero: ``2.5``, or a duration like ``30s`` or ``1m``."""
    try:
        value = float(text)
    except ValueError:
        duration = parse_duration(text)
        if duration is None:
            raise argparse.ArgumentTypeError(f"{text!r} is not a time: seconds (2.5), or 30s, 1m") from None
        value = duration.total_seconds()
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"{text} is not a time above zero")
    if value > MAX_DURATION.total_seconds():
        raise argparse.ArgumentTypeError(f"{text} is longer than a year")
    return value


def add_state_arguments(parser: argparse.ArgumentParser) -> None:
    """How a command that works on one connector's state finds it (``shell.state.config.locate_state``)."""
    parser.add_argument("--state-dir", metavar="DIR",
                        help="the state directory `setup` wrote (default: found from the ids)")
    parser.add_argument("--account", metavar="ID", type=positive_integer,
                        help="the account id (with --agent) to find it")
    parser.add_argument("--agent", metavar="ID", type=positive_integer,
                        help="the agent's person id (with --account)")


def add_person_arguments(parser: argparse.ArgumentParser, by_help: str) -> None:
    """A person's command: the state options, ``--by`` (``by_help`` says what it records), ``--json``."""
    add_state_arguments(parser)
    parser.add_argument("--by", help=by_help)
    parser.add_argument("--json", action="store_true", help="print the result as JSON on stdout")


def one_line(text: str) -> str:
    """``text`` as one line: control and format characters become spaces, runs of space one."""
    spaced = "".join(" " if unicodedata.category(char).startswith("C") else char for char in text)
    return " ".join(spaced.split())


def person_text(given: str, flag: str, says: str, max_length: int) -> str:
    """Free text a person gave with ``flag`` (which ``says`` what), surrounding spaces trimmed;
    refused empty, longer than ``max_length``, or holding a control or format character."""
    for place, char in enumerate(given):
        if unicodedata.category(char)[0] == "C" or unicodedata.category(char) in ("Zl", "Zp"):
            raise UserError(f"{flag} may not hold control characters (a newline, an escape, DEL, BEL...): "
                            f"U+{ord(char):04X} at character {place + 1}", EXIT_USAGE)
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


def reason_of(text: str) -> str:
    return person_text(text, "--reason", "says why the connector is held", MAX_REASON_LENGTH)
