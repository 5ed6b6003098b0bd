"""The standard streams of both command lines, made safe before a command runs.

Rules:
1. ``guard`` is among the first things each entry does (``shell.cli.__main__``,
   ``shell.cli.resolve.__main__``). A closed standard descriptor is opened anew (stdout on
   ``/dev/full``, the others on ``/dev/null``), so no file a command opens can take number 1 or
   2, and an answer with nowhere to go is said as such (rule 3).
2. Both encode what their encoding cannot hold as ``\\uXXXX`` (``ESCAPE``): an ascii or C locale
   turns ``·`` into ``\\u00b7``, never a traceback, and inside ``--json`` that is JSON's own escape.
3. A failed write to stdout is ``StdoutUnwritable``, a ``UserError`` (exit 3), not an
   ``OSError`` that a disk's handler could take for its own. A reader gone away stays
   ``BrokenPipeError`` (``shell.cli.seam`` rule 3).
4. A failed write to stderr is dropped: there is nowhere left to say it; the exit code does.
5. ``flush_answer`` flushes stdout where the seam can still say a failure; ``stop_writing`` then
   points stdout at ``/dev/null``, so the flush at exit cannot fail again."""

from __future__ import annotations

import codecs
import contextlib
import io
import os
import sys
from typing import BinaryIO, cast

from shell.errors import EXIT_CONFIG, UserError

ESCAPE = "connector-json-escape"
"""The codec error handler of rule 2."""
_REOPENED = {0: ("/dev/null", os.O_RDONLY), 1: ("/dev/full", os.O_WRONLY), 2: ("/dev/null", os.O_WRONLY)}
_closed: set[int] = set()


class StdoutUnwritable(UserError):
    """Rule 3."""

    exit_code = EXIT_CONFIG


class _Stdout(io.TextIOWrapper):
    def write(self, text: str) -> int:
        try:
            return super().write(text)
        except BrokenPipeError:
            raise
        except OSError as error:
            raise _unwritable(error) from error

    def flush(self) -> None:
        try:
            super().flush()
        except BrokenPipeError:
            raise
        except OSError as error:
            raise _unwritable(error) from error


class _Stderr(io.TextIOWrapper):
    def write(self, text: str) -> int:
        try:
            return super().write(text)
        except OSError:  # rule 4
            return len(text)

    def flush(self) -> None:
        with contextlib.suppress(OSError):  # rule 4
            super().flush()


def _json_escape(error: UnicodeError) -> tuple[str, int]:
    """Rule 2: each character the encoding cannot hold as JSON's ``\\uXXXX`` (a surrogate pair
    past U+FFFF)."""
    if not isinstance(error, UnicodeEncodeError):
        raise error
    units = error.object[error.start : error.end].encode("utf-16-be")
    escaped = "".join(f"\\u{int.from_bytes(units[at : at + 2], 'big'):04x}" for at in range(0, len(units), 2))
    return escaped, error.end


codecs.register_error(ESCAPE, _json_escape)


def _unwritable(error: OSError) -> StdoutUnwritable:
    why = "it was closed" if 1 in _closed else (error.strerror or str(error))
    return StdoutUnwritable(f"standard output cannot be written ({why})")


def guard() -> None:
    """Rules 1 and 2."""
    for descriptor, (device, flags) in _REOPENED.items():
        try:
            os.fstat(descriptor)
        except OSError:
            opened = os.open(device, flags)
            if opened != descriptor:
                os.dup2(opened, descriptor)
                os.close(opened)
            _closed.add(descriptor)
    sys.stdout = _Stdout(_buffer(sys.stdout, 1), encoding=_encoding(sys.stdout), errors=ESCAPE,
                         line_buffering=_line_buffered(sys.stdout))  # fmt: skip
    sys.stderr = _Stderr(_buffer(sys.stderr, 2), encoding=_encoding(sys.stderr), errors=ESCAPE,
                         line_buffering=True)  # fmt: skip


def _buffer(stream: object, descriptor: int) -> BinaryIO:
    if isinstance(stream, io.TextIOWrapper):
        return cast(BinaryIO, stream.detach())  # detached, the old wrapper never closes it
    return cast(BinaryIO, io.BufferedWriter(io.FileIO(descriptor, "w", closefd=False)))


def _encoding(stream: object) -> str:
    return getattr(stream, "encoding", None) or "utf-8"


def _line_buffered(stream: object) -> bool:
    return bool(getattr(stream, "line_buffering", False)) or os.isatty(1)


def flush_answer() -> None:
    """Rule 5: raises ``StdoutUnwritable`` where the answer could not be written."""
    sys.stdout.flush()


def stop_writing() -> None:
    """Rule 5: stdout on ``/dev/null`` from here on (after a failure was said, or a reader left)."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
