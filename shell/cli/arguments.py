"""The argument types every command shares, so one kind of value is read one way everywhere.

Rules: a bad value is argparse's own usage error (exit 2) naming the value; nothing here reads
a file or a clock. A value too large to store or to wait for is a bad value: an id is at most
``MAX_ID`` (SQLite's INTEGER), a time at most ``MAX_DURATION`` (a year).
"""

from __future__ import annotations

import argparse
import math

from core import ids
from core.ids import MAX_ID
from core.timestamps import MAX_DURATION, parse_duration

MAX_PORT = 65_535


def positive_integer(text: str) -> int:
    """An id or a count: a whole number above zero, in ASCII digits alone (``core.ids`` rule 2)."""
    value = ids.id_digits(text)
    if value is None:
        if text.startswith("-") and ids.id_digits(text[1:]) is not None:
            raise argparse.ArgumentTypeError(f"{text} is not a positive number")
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number in ASCII digits 0-9 alone")
    if value <= 0:
        raise argparse.ArgumentTypeError(f"{text} is not a positive number")
    if value > MAX_ID:
        raise argparse.ArgumentTypeError(f"{text} is larger than any id ({MAX_ID})")
    return value


MAX_DESCRIPTOR = 2**31 - 1


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
    """A TCP port, or 0 for any free one."""
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
    parser.add_argument(
        "--state-dir", metavar="DIR", help="the state directory `setup` wrote (default: found from the ids)"
    )
    parser.add_argument(
        "--account", metavar="ID", type=positive_integer, help="the account id (with --agent) to find it"
    )
    parser.add_argument(
        "--agent", metavar="ID", type=positive_integer, help="the agent's person id (with --account)"
    )
