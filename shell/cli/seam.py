"""The one error seam of both command lines, and the standard streams it speaks on.

A person never sees a traceback for something they can fix: a ``UserError`` is one line on stderr,
``error: <what is wrong>``, every control character escaped, and its exit code (``shell.errors``);
a command line may word some kinds of error itself first (``OwnWords``). Ctrl-C is 130, quietly; a
reader that goes away (``| head``) ends the command as SIGPIPE would, 141, saying nothing. Anything
else is a bug, its traceback for a developer. With ``--json`` an error is also one object on
stdout, ``{"error", "errors", "exit_code"}``, so a machine never reads an empty answer as success.
Bad usage is such an error too, exit 2: every parser is a ``CommandParser``, its help as wide as
the terminal (``_columns``: argparse would import ``shutil``, and with it compression modules).

``guard`` comes first in each entry: a closed standard descriptor is opened anew (stdout on
``/dev/full``), so no file a command opens takes number 1 or 2, and both streams write what their
encoding cannot hold as JSON's ``\\uXXXX``. A failed write to stdout is ``StdoutUnwritable`` (exit
3), never an ``OSError`` a disk's handler could take for its own; one to stderr is dropped. For
``run`` (``spooled``) each stream is written by a thread of its own (``_Spool``), so no write --
a log line, a transition, the stop's last words -- ever waits on a reader: past ``SPOOL_BYTES``
waiting, a write is dropped and counted (the count said once the reader takes more), and at exit
what waits gets ``DRAIN_SECONDS``, no longer."""

from __future__ import annotations

import argparse
import atexit
import codecs
import contextlib
import io
import json
import os
import select
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import BinaryIO, NoReturn, TypeVar, cast

from core.text import printable as escaped
from shell import log_format
from shell.errors import EXIT_BROKEN_PIPE, EXIT_CONFIG, EXIT_USAGE, UserError

JSON_FLAG = "--json"
ESCAPE = "connector-json-escape"
_LINES = "\nerror: "  # between the lines of one error (a ConfigurationInvalid's)
_REOPENED = {0: ("/dev/null", os.O_RDONLY), 1: ("/dev/full", os.O_WRONLY), 2: ("/dev/null", os.O_WRONLY)}
_closed: set[int] = set()
SPOOL_BYTES = 1 << 20  # what may wait for a stream's reader before a write is dropped
DRAIN_SECONDS = 2.0  # how long the exit waits for what is still waiting to be written
_spools: list[_Spool] = []
T = TypeVar("T")


class BadUsage(SystemExit):
    """What argparse would have printed in two lines and exited 2 for: a ``SystemExit`` with
    argparse's code, so a caller of ``parse_args`` itself sees what it always saw."""

    def __init__(self, message: str) -> None:
        super().__init__(EXIT_USAGE)
        self.message = message


class CommandParser(argparse.ArgumentParser):
    def _get_formatter(self) -> argparse.HelpFormatter:
        return self.formatter_class(prog=self.prog, width=_columns() - 2)  # type: ignore[call-arg]

    def error(self, message: str) -> NoReturn:
        raise BadUsage(f"{self.prog}: {message} (see `{self.prog} --help`)")  # escaped where said (_say)


@dataclass(frozen=True, slots=True)
class OwnWords:
    """A command line's own line for one kind of error, and the exit code it answers with."""

    kind: type[Exception]
    line: Callable[[Exception], str]
    exit_code: int


class StdoutUnwritable(UserError):
    exit_code = EXIT_CONFIG


def answer(run: Callable[[], int], own_words: Sequence[OwnWords] = (), *, as_json: bool = False) -> int:
    """``run()``'s exit code, or the one line and exit code its error calls for."""
    kinds = tuple(words.kind for words in own_words)
    try:
        code = run()
        sys.stdout.flush()  # here, where a failure can still be said
    except StdoutUnwritable as error:
        print(log_format.line(f"error: {error}", level="error"), file=sys.stderr)
        stop_writing()
        return error.exit_code
    except kinds as error:
        words = next(words for words in own_words if isinstance(error, words.kind))
        return _say(words.line(error), words.exit_code, as_json)
    except UserError as error:
        return _say(str(error), error.exit_code, as_json)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # stop writing there, so the flush at exit cannot fail again
        stop_writing()
        return EXIT_BROKEN_PIPE
    return code


def _columns() -> int:
    """What ``shutil.get_terminal_size().columns`` answers: ``$COLUMNS``, else the terminal's, else 80."""
    columns = int(os.environ["COLUMNS"]) if os.environ.get("COLUMNS", "").isdigit() else 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns or 80


def parse_arguments(parser: argparse.ArgumentParser, argv: Sequence[str] | None) -> argparse.Namespace:
    """``parser.parse_args(argv)``; bad usage is said as every error is, then ``SystemExit(EXIT_USAGE)``."""
    arguments = list(sys.argv[1:] if argv is None else argv)
    try:
        return parser.parse_args(arguments)
    except BadUsage as bad:
        raise SystemExit(bad_usage(bad.message, as_json=JSON_FLAG in arguments)) from None


def log_to_stderr(verbose: bool, chosen: str = log_format.TEXT) -> None:
    log_format.configure(verbose, chosen)


def bad_usage(message: str, *, as_json: bool) -> int:
    return _say(message, EXIT_USAGE, as_json)


def _say(message: str, exit_code: int, as_json: bool) -> int:
    """Each of an error's own lines (a ``ConfigurationInvalid`` joins them with ``\\nerror: ``)
    escaped, a newline too, whatever text (a path, a name) it carries."""
    lines = [escaped(line) for line in message.split(_LINES)]
    print(log_format.line(f"error: {_LINES.join(lines)}", level="error"), file=sys.stderr)
    if as_json:
        said = {"error": lines[0], "errors": lines, "exit_code": exit_code}
        try:
            print(json.dumps(said, ensure_ascii=False), flush=True)
        except StdoutUnwritable:
            stop_writing()  # said on stderr already; the exit code stands
    return exit_code


class _Stdout(io.TextIOWrapper):
    def write(self, text: str) -> int:
        return _or_unwritable(super().write, text)

    def flush(self) -> None:
        _or_unwritable(super().flush)


class _Stderr(io.TextIOWrapper):
    def write(self, text: str) -> int:
        try:
            return super().write(text)
        except OSError:  # nowhere left to say it
            return len(text)

    def flush(self) -> None:
        with contextlib.suppress(OSError):
            super().flush()


def _json_escape(error: UnicodeError) -> tuple[str, int]:
    """Each character the encoding cannot hold as JSON's ``\\uXXXX`` (a surrogate pair past U+FFFF)."""
    if not isinstance(error, UnicodeEncodeError):
        raise error
    units = error.object[error.start : error.end].encode("utf-16-be")
    escaped = "".join(f"\\u{int.from_bytes(units[at : at + 2], 'big'):04x}" for at in range(0, len(units), 2))
    return escaped, error.end


codecs.register_error(ESCAPE, _json_escape)


def _or_unwritable(call: Callable[..., T], *args: str) -> T:
    try:
        return call(*args)
    except BrokenPipeError:
        raise
    except OSError as error:
        why = "it was closed" if 1 in _closed else (error.strerror or str(error))
        raise StdoutUnwritable(f"standard output cannot be written ({why})") from error


class _Spool(io.RawIOBase):
    """A descriptor written by a thread of its own: ``write`` queues and returns at once."""

    def __init__(self, descriptor: int) -> None:
        super().__init__()
        self._descriptor = descriptor
        self._waiting: deque[bytes] = deque()
        self._queued = 0
        self._dropped = 0
        self._failure: OSError | None = None  # the writer's, raised once to the next write
        self._failed = False
        self._changed = threading.Condition()
        threading.Thread(target=self._write_out, name=f"output-{descriptor}", daemon=True).start()

    def writable(self) -> bool:
        return True

    def fileno(self) -> int:
        return self._descriptor

    def write(self, data: bytes | bytearray | memoryview) -> int:  # type: ignore[override]
        size = len(data)
        with self._changed:
            failure, self._failure = self._failure, None
            if failure is not None:
                raise failure
            if self._failed:
                return size
            if self._queued + size > SPOOL_BYTES:
                self._dropped += 1
                return size
            if self._dropped:  # where the gap is
                gap = f"({self._dropped} writes dropped here: nobody was reading)"
                self._waiting.append(f"{log_format.line(gap, level='warning')}\n".encode())
                self._queued += len(self._waiting[-1])
                self._dropped = 0
            self._waiting.append(bytes(data))
            self._queued += size
            self._changed.notify_all()
        return size

    def raise_failure(self) -> None:
        with self._changed:
            failure, self._failure = self._failure, None
        if failure is not None:
            raise failure

    def drain(self, until: float) -> None:
        """Wait until everything queued is written, or the monotonic time ``until``."""
        with self._changed:
            while self._queued and not self._failed and (left := until - time.monotonic()) > 0:
                self._changed.wait(left)

    def _write_out(self) -> None:
        while True:
            with self._changed:
                while not self._waiting:
                    self._changed.wait()
                chunk = self._waiting.popleft()
            try:
                self._write_all(memoryview(chunk))
            except OSError as error:
                with self._changed:
                    self._failure, self._failed = error, True
                    self._waiting.clear()
            with self._changed:
                self._queued = 0 if self._failed else self._queued - len(chunk)
                self._changed.notify_all()

    def _write_all(self, data: memoryview) -> None:
        while data:
            try:
                data = data[os.write(self._descriptor, data) :]
            except BlockingIOError:  # a descriptor someone else made non-blocking
                select.select([], [self._descriptor], [], 1.0)


def stdout_written(within: float = DRAIN_SECONDS) -> None:
    """Wait, ``within`` seconds at most, for what stdout holds to be written; a failure to write it
    raised as a write's would be (``StdoutUnwritable``). A reader that is not reading fails nothing."""
    sys.stdout.flush()
    spool = next((spool for spool in _spools if spool.fileno() == 1), None)
    if spool is not None:
        spool.drain(time.monotonic() + within)
        _or_unwritable(spool.raise_failure)


def drain(within: float = DRAIN_SECONDS) -> None:
    """Wait, ``within`` seconds at most, for the spooled streams to be written."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    until = time.monotonic() + within
    for spool in _spools:
        spool.drain(until)


def guard(*, spooled: bool = False) -> None:
    for descriptor, (device, flags) in _REOPENED.items():
        try:
            os.fstat(descriptor)
        except OSError:
            opened = os.open(device, flags)
            if opened != descriptor:
                os.dup2(opened, descriptor)
                os.close(opened)
            _closed.add(descriptor)
    line_buffered = bool(getattr(sys.stdout, "line_buffering", False)) or os.isatty(1)
    sys.stdout = _Stdout(*_unwrapped(sys.stdout, 1, spooled), errors=ESCAPE, line_buffering=line_buffered)
    sys.stderr = _Stderr(*_unwrapped(sys.stderr, 2, spooled), errors=ESCAPE, line_buffering=True)
    if spooled:
        atexit.register(drain)


def _unwrapped(stream: object, descriptor: int, spooled: bool) -> tuple[BinaryIO, str]:
    encoding = getattr(stream, "encoding", None) or "utf-8"
    if spooled:
        if isinstance(stream, io.TextIOWrapper):
            stream.flush()
        _spools.append(_Spool(descriptor))
        return cast(BinaryIO, io.BufferedWriter(_spools[-1])), encoding
    if isinstance(stream, io.TextIOWrapper):
        return cast(BinaryIO, stream.detach()), encoding  # detached, the old wrapper never closes it
    return cast(BinaryIO, io.BufferedWriter(io.FileIO(descriptor, "w", closefd=False))), encoding


def stop_writing() -> None:
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
