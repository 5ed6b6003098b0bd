"""What keeps a secret this process holds from being read outside it: no core dump, and no copy left
in the initial environment block (the one home of ``RLIMIT_CORE`` and ``/proc/self/mem``).
``forbid_core_dumps`` sets ``RLIMIT_CORE`` to 0, soft and hard, for this process and the children it
starts afterwards (a core of the connector holds its token, one of the MCP server its task token);
``bin/connect run`` and the MCP server call it before a secret is read. It never fails.

``/proc/PID/environ`` shows the block copied at ``exec`` whatever ``unsetenv`` did, so
``erase_environment`` overwrites with NUL bytes every ``NAME=...`` string of it through
``/proc/self/mem``, writing nothing outside the block's bounds nor but those strings. It answers
True only when every write was whole and a second read finds neither a ``NAME=`` string nor the
secret; every failure answers False, never raises. It is called before any thread or child starts,
after the names left ``os.environ``, so nothing reads what it erases.

``hold`` names a secret this process holds for good (the agent's token, the stand-in's secret),
``holding`` one it holds for a while (a task's token, while its worker runs); ``held`` answers every
one, for the log lines to redact (``shell.log_format``)."""

from __future__ import annotations

import contextlib
import resource
import threading
from collections import Counter
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # a token file's reader is imported only where one is read
    from core.oauth import Credentials

_STAT = "/proc/self/stat"
_MEMORY = "/proc/self/mem"
_ENVIRONMENT = "/proc/self/environ"
_ENV_START_FIELD = 50  # proc(5): fields are counted from 1; env_start, then env_end (Linux 3.5)


class _Held:
    """Each secret held, and how many hold it; ``secrets`` a snapshot a reader never sees change."""

    def __init__(self) -> None:
        self._counts: Counter[str] = Counter()
        self._lock = threading.Lock()
        self.secrets: tuple[str, ...] = ()

    def add(self, secret: str, by: int) -> None:
        with self._lock:
            self._counts[secret] += by
            self._counts = +self._counts  # those no longer held go
            self.secrets = tuple(self._counts)


_HELD = _Held()


def hold(secret: str) -> None:
    _HELD.add(secret, 1)


@contextlib.contextmanager
def holding(secret: str) -> Iterator[None]:
    _HELD.add(secret, 1)
    try:
        yield
    finally:
        _HELD.add(secret, -1)


def hold_token(found: str | Credentials) -> None:
    """The agent's token, or each secret of a login's credentials."""
    if isinstance(found, str):
        hold(found)
        return
    for secret in (found.access_token, found.refresh_token, found.client_secret):
        hold(secret)


def held() -> tuple[str, ...]:
    return _HELD.secrets


def forbid_core_dumps() -> None:
    with contextlib.suppress(OSError, ValueError):
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def erase_environment(names: Iterable[str], secret: bytes) -> bool:
    prefixes = tuple(name.encode("utf-8", "surrogateescape") + b"=" for name in names)
    try:
        start, end = _bounds()
        with open(_MEMORY, "r+b", buffering=0) as memory:
            memory.seek(start)
            block = memory.read(end - start)
            for offset, length in _strings_named(block, prefixes):
                memory.seek(start + offset)
                if memory.write(bytes(length)) != length:
                    return False
        with open(_ENVIRONMENT, "rb") as environment:
            left = environment.read()
    except (OSError, ValueError):
        return False
    return not _strings_named(left, prefixes) and secret not in left


def _bounds() -> tuple[int, int]:
    """``env_start`` and ``env_end``; ValueError when the line has no such fields or no block."""
    with open(_STAT, "rb") as stat:
        line = stat.read()
    fields = line[line.rindex(b")") + 2 :].split()  # after "pid (comm) "; comm may hold ")"
    first = _ENV_START_FIELD - 3
    if len(fields) <= first + 1:
        raise ValueError("no env_start and env_end in /proc/self/stat (Linux before 3.5)")
    start, end = int(fields[first]), int(fields[first + 1])
    if not 0 < start < end:
        raise ValueError("no environment block")
    return start, end


def _strings_named(block: bytes, prefixes: tuple[bytes, ...]) -> list[tuple[int, int]]:
    """(offset, length) of each NUL-terminated string of ``block`` that begins with a prefix."""
    found: list[tuple[int, int]] = []
    offset = 0
    for string in block.split(b"\0"):
        if string.startswith(prefixes):
            found.append((offset, len(string)))
        offset += len(string) + 1
    return found
