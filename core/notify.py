"""systemd's notify protocol as values: where ``NOTIFY_SOCKET`` points, how often the service
manager's watchdog wants a ping, whether the loops allow one, and the messages.

An address is a path (``/run/...``) or an abstract name (``@name``, sent with a leading NUL);
anything else is refused with what was given, escaped. The watchdog's interval is ``WATCHDOG_USEC``
microseconds, for this process alone when ``WATCHDOG_PID`` names it; a value that is not a
positive integer is no watchdog, as ``sd_watchdog_enabled`` has it. A ping is due every half
interval, and only while every loop has beaten and none is older than the stall bound
(``core.heartbeats``): a loop that stopped turning silences the pings, so the manager restarts
the service."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta

from core.heartbeats import STALL_AFTER, Beats, not_turning
from core.text import printable

SOCKET_VARIABLE = "NOTIFY_SOCKET"
WATCHDOG_VARIABLE = "WATCHDOG_USEC"
WATCHDOG_PID_VARIABLE = "WATCHDOG_PID"

READY = "READY=1"
STOPPING = "STOPPING=1"
WATCHDOG = "WATCHDOG=1"


@dataclass(frozen=True, slots=True)
class NotifyAddress:
    address: str  # as socket.sendto takes it: a path, or NUL and the abstract name
    shown: str  # as NOTIFY_SOCKET gave it


def notify_address(value: str) -> NotifyAddress | str:
    """The socket's address, or why ``value`` names none."""
    if value.startswith("@") and len(value) > 1:
        return NotifyAddress("\0" + value[1:], value)
    if value.startswith("/"):
        return NotifyAddress(value, value)
    shown = printable(value)
    return f"{SOCKET_VARIABLE}='{shown}' is not a socket: neither a path (/...) nor an abstract name (@...)"


def watchdog_interval(environ: Mapping[str, str], own_pid: int) -> timedelta | None:
    usec = environ.get(WATCHDOG_VARIABLE, "")
    if not (usec.isascii() and usec.isdigit()) or int(usec) == 0:
        return None
    pid = environ.get(WATCHDOG_PID_VARIABLE, "")
    if pid and pid != str(own_pid):
        return None
    return timedelta(microseconds=int(usec))


def ping_every(interval: timedelta) -> float:
    return interval.total_seconds() / 2


def ping_due(loops: Mapping[str, datetime], now: datetime, stall_after: timedelta = STALL_AFTER) -> bool:
    return bool(loops) and not stalled(loops, now, stall_after)


def stalled(loops: Mapping[str, datetime], now: datetime,
            stall_after: timedelta = STALL_AFTER) -> tuple[str, ...]:
    return not_turning(Beats(now, loops), now, stall_after)


def status(text: str) -> str:
    """One ``STATUS=`` line: a newline in ``text`` would start another assignment."""
    return "STATUS=" + " ".join(text.split())


def watch_status(stalled_loops: tuple[str, ...], running: str) -> str:
    """What the manager shows while the loops are watched."""
    if not stalled_loops:
        return status(f"running {running}")
    return status(f"running {running}; NOT TURNING: {', '.join(stalled_loops)} (no watchdog ping)")
