"""systemd's notify protocol, spoken when ``NOTIFY_SOCKET`` is set (``core.notify`` has its values):
one datagram per message, from a socket of its own, as ``sd_notify`` sends it.

The first message is the check: a ``NOTIFY_SOCKET`` no datagram can be sent to (not a socket,
nobody bound there, neither a path nor an ``@`` name) refuses ``run`` with one line and exit 3,
before any lock is taken, Basecamp asked or the ledger opened: a manager that waits for ``READY=1``
would end the connector at its start timeout, start after start. A send that fails later is logged
once and never stops the connector. ``watching`` pings the watchdog from a thread of its own while
every loop's heartbeat is fresh, and says in ``STATUS=`` which loop is not. ``CONNECTOR_STALL_AFTER``
(seconds; tests only, read at import as ``shell.crashpoints`` reads its variables) shortens the
stall bound."""

from __future__ import annotations

import logging
import os
import socket
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from datetime import datetime, timedelta

from core import notify
from core.heartbeats import STALL_AFTER
from core.notify import NotifyAddress
from shell.errors import EXIT_CONFIG, UserError

log = logging.getLogger("connector.run")

STALL_VARIABLE = "CONNECTOR_STALL_AFTER"


def _stall_after() -> timedelta:
    try:
        return timedelta(seconds=float(os.environ.get(STALL_VARIABLE, "")))
    except ValueError:
        return STALL_AFTER


_STALL_AFTER = _stall_after()


class Service:
    """The manager's side of ``run``; without ``NOTIFY_SOCKET``, every message is nothing."""

    def __init__(self, address: NotifyAddress | None = None, watchdog: timedelta | None = None) -> None:
        self._address = address
        self._watchdog = watchdog
        self._failing = False
        self._stopping = False

    @classmethod
    def of(cls, environ: Mapping[str, str]) -> Service:
        value = environ.get(notify.SOCKET_VARIABLE, "")
        if not value:
            return cls()
        address = notify.notify_address(value)
        if isinstance(address, str):
            raise UserError(f"{address}: not started", EXIT_CONFIG)
        service = cls(address, notify.watchdog_interval(environ, os.getpid()))
        try:
            service._send(notify.status("starting"))
        except OSError as error:
            raise UserError(
                f"{notify.SOCKET_VARIABLE}={address.shown} is not a socket a notification can be sent to"
                f" ({error.strerror or error}): not started; start it as systemd's Type=notify does, or"
                f" without {notify.SOCKET_VARIABLE}", EXIT_CONFIG,
            ) from None
        return service

    def _send(self, *messages: str) -> None:
        assert self._address is not None
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
            sock.sendto("\n".join(messages).encode(), self._address.address)

    def send(self, *messages: str) -> None:
        if self._address is None:
            return
        try:
            self._send(*messages)
        except OSError as error:
            if not self._failing:
                log.warning("notify: %s=%s could not be sent to (%s); the service manager hears nothing",
                            notify.SOCKET_VARIABLE, self._address.shown, error.strerror or error)  # fmt: skip
            self._failing = True
            return
        self._failing = False

    def starting(self, step: str) -> None:
        self.send(notify.status(f"starting: {step}"))

    def ready(self, running: str) -> None:
        self.send(notify.READY, notify.status(f"running {running}"))

    def stopping(self) -> None:
        if not self._stopping:
            self._stopping = True
            self.send(notify.STOPPING, notify.status("stopping"))

    @contextmanager
    def watching(self, loops: Callable[[], Mapping[str, datetime]], now: Callable[[], datetime],
                 running: str) -> Iterator[None]:
        """Ping the watchdog while every loop's beat is fresh, until the block ends."""
        interval = self._watchdog
        if self._address is None or interval is None:
            yield
            return
        over = threading.Event()

        def watch() -> None:
            shown: tuple[str, ...] = ()
            while not over.wait(notify.ping_every(interval)):
                beats, at = loops(), now()
                stuck = notify.stalled(beats, at, _STALL_AFTER)
                messages = [notify.WATCHDOG] if notify.ping_due(beats, at, _STALL_AFTER) else []
                if stuck != shown:
                    shown = stuck
                    messages.append(notify.watch_status(stuck, running))
                if messages:
                    self.send(*messages)

        watcher = threading.Thread(target=watch, name="watchdog", daemon=True)
        watcher.start()
        try:
            yield
        finally:
            over.set()
            watcher.join()
