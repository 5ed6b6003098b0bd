"""The process's initial environment block: erasing a variable from what ``/proc/PID/environ``
shows, in place.

``os.environ.pop`` (``unsetenv``) removes a variable from the environment this process passes
on, but ``/proc/PID/environ`` shows the block the kernel copied onto the stack at ``exec``, and
that block keeps it. This module overwrites it there, so a secret given in the environment (a
task token) is gone from ``/proc/PID/environ`` without starting the process again.

Rules:
1. ``erase(names, secret)`` overwrites with NUL bytes every ``NAME=...`` string of the block
   (each string that begins with one of the names and ``=`` at a string boundary), through
   ``/proc/self/mem``, writing nothing outside the block's bounds (``/proc/self/stat``'s
   ``env_start`` and ``env_end``) and nothing but those strings.
2. It answers True only when every write wrote all it was given and a second read of the block
   (``/proc/self/environ``) finds neither a ``NAME=`` string nor ``secret`` anywhere in it (a
   copy under another name is no erasure). Every failure (no ``/proc``, a ``stat`` line it
   cannot read, a block it cannot write or read, a short write) answers False and raises
   nothing, and the server then refuses to start (``shell.cli.mcp`` rule 6; the lean entry,
   ``shell.worker.mcp_entry``, puts the token back for the server to find and refuse).
3. It is called before the process starts a thread or a child: nothing else reads the block
   while it is written; and after the caller has removed the names from ``os.environ``
   (``unsetenv``), so nothing this process starts inherits them and libc's ``environ`` no
   longer points at the strings it erases.
"""

from __future__ import annotations

from collections.abc import Iterable

_STAT = "/proc/self/stat"
_MEMORY = "/proc/self/mem"
_ENVIRONMENT = "/proc/self/environ"
_ENV_START_FIELD = 50  # proc(5): fields are counted from 1; env_start, then env_end (Linux 3.5)


def erase(names: Iterable[str], secret: bytes) -> bool:
    """Rules 1-2: every ``NAME=...`` of ``names`` overwritten in the initial environment block;
    True only when a second read finds none of them, and not ``secret``, left."""
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
