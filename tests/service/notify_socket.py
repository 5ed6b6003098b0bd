"""A service manager's end of the notify protocol: a real AF_UNIX datagram socket, bound at a path
or an abstract name, and every datagram it receives with when it came, read by a thread of its own."""

from __future__ import annotations

import socket
import threading
import time
from dataclasses import dataclass
from types import TracebackType


@dataclass(frozen=True, slots=True)
class Datagram:
    at: float  # time.monotonic()
    text: str

    @property
    def assignments(self) -> list[str]:
        return self.text.split("\n")


class NotifySocket:
    """``address``: a path, or ``@name`` for the abstract namespace; ``variable``: NOTIFY_SOCKET's value."""

    def __init__(self, address: str) -> None:
        self.variable = address
        self._socket = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self._socket.bind("\0" + address[1:] if address.startswith("@") else address)
        self._socket.settimeout(0.05)
        self._lock = threading.Lock()
        self._received: list[Datagram] = []
        self._over = threading.Event()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        while not self._over.is_set():
            try:
                data = self._socket.recv(65536)
            except TimeoutError:
                continue
            with self._lock:
                self._received.append(Datagram(time.monotonic(), data.decode()))

    def received(self) -> list[Datagram]:
        with self._lock:
            return list(self._received)

    def with_assignment(self, assignment: str) -> list[Datagram]:
        return [datagram for datagram in self.received() if assignment in datagram.assignments]

    def first_with(self, assignment: str, timeout: float = 60) -> Datagram:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = self.with_assignment(assignment)
            if found:
                return found[0]
            time.sleep(0.05)
        raise AssertionError(f"no {assignment} within {timeout} s; received {[d.text for d in self.received()]}")

    def __enter__(self) -> NotifySocket:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 traceback: TracebackType | None) -> None:
        self._over.set()
        self._reader.join()
        self._socket.close()
