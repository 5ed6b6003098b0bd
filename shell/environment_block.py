"""The process's initial environment block: erasing a variable from what ``/proc/PID/environ``
shows, in place.

``os.environ.pop`` (``unsetenv``) removes a variable from the environment this process passes
on, but ``/proc/PID/environ`` shows the block the kernel copied onto the stack at ``exec``, and
that block keeps it. This module overwrites it there, so a secret given in the environment (a
task token) is gone from ``/proc/PID/environ`` without starting the process again.

Rules:
1. ``erase(names)`` overwrites with NUL bytes every ``NAME=...`` string of the block (each
   string that begins with one of the names and ``=`` at a string boundary), through
   ``/proc/self/mem``, writing nothing outside the block's bounds (``/proc/self/stat``'s
   ``env_start`` and ``env_end``) and nothing but those strings.
2. It answers True only when it has read the block again (``/proc/self/environ``) and found
   none of those strings in it; every failure (no ``/proc``, a block it cannot write or read)
   answers False and raises nothing, and the caller then keeps the secret out another way
   (``shell.worker.mcp_entry`` and ``shell.cli.mcp`` exec the process again).
3. It is called before the process starts a thread or a child: nothing else reads the block
   while it is written.
"""

from __future__ import annotations

from collections.abc import Iterable

_STAT = "/proc/self/stat"
_MEMORY = "/proc/self/mem"
_ENVIRONMENT = "/proc/self/environ"
_ENV_START_FIELD = 50  # proc(5): fields are counted from 1; env_start, then env_end (Linux 3.5)


def erase(names: Iterable[str]) -> bool:
    """Rules 1-2: every ``NAME=...`` of ``names`` overwritten in the initial environment block;
    True only when a second read finds none left."""
    prefixes = tuple(name.encode("utf-8", "surrogateescape") + b"=" for name in names)
    try:
        start, end = _bounds()
        with open(_MEMORY, "r+b", buffering=0) as memory:
            memory.seek(start)
            block = memory.read(end - start)
            for offset, length in _strings_named(block, prefixes):
                memory.seek(start + offset)
                memory.write(bytes(length))
        with open(_ENVIRONMENT, "rb") as environment:
            left = environment.read()
    except (OSError, ValueError):
        return False
    return not _strings_named(left, prefixes)


def _bounds() -> tuple[int, int]:
    with open(_STAT, "rb") as stat:
        line = stat.read()
    fields = line[line.rindex(b")") + 2 :].split()  # after "pid (comm) "; comm may hold ")"
    first = _ENV_START_FIELD - 3
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
