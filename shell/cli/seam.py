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
3), never an ``OSError`` a disk's handler could take for its own; one to stderr is dropped."""

from __future__ import annotations

import argparse
import codecs
import contextlib
import io
import json
import logging
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import BinaryIO, NoReturn, TypeVar, cast

from core.text import printable as escaped
from shell.errors import EXIT_BROKEN_PIPE, EXIT_CONFIG, EXIT_USAGE, UserError

JSON_FLAG = "--json"
ESCAPE = "connector-json-escape"
_LINES = "\nerror: "  # between the lines of one error (a ConfigurationInvalid's)
_REOPENED = {0: ("/dev/null", os.O_RDONLY), 1: ("/dev/full", os.O_WRONLY), 2: ("/dev/null", os.O_WRONLY)}
_closed: set[int] = set()
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
        print(f"error: {error}", file=sys.stderr)
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


def log_to_stderr(verbose: bool) -> None:
    logging.basicConfig(level=logging.INFO if verbose else logging.WARNING,
                        format="%(asctime)s %(name)s %(message)s", stream=sys.stderr)  # fmt: skip


def bad_usage(message: str, *, as_json: bool) -> int:
    return _say(message, EXIT_USAGE, as_json)


def _say(message: str, exit_code: int, as_json: bool) -> int:
    """Each of an error's own lines (a ``ConfigurationInvalid`` joins them with ``\\nerror: ``)
    escaped, a newline too, whatever text (a path, a name) it carries."""
    lines = [escaped(line) for line in message.split(_LINES)]
    print(f"error: {_LINES.join(lines)}", file=sys.stderr)
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


def guard() -> None:
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
    sys.stdout = _Stdout(*_unwrapped(sys.stdout, 1), errors=ESCAPE, line_buffering=line_buffered)
    sys.stderr = _Stderr(*_unwrapped(sys.stderr, 2), errors=ESCAPE, line_buffering=True)


def _unwrapped(stream: object, descriptor: int) -> tuple[BinaryIO, str]:
    encoding = getattr(stream, "encoding", None) or "utf-8"
    if isinstance(stream, io.TextIOWrapper):
        return cast(BinaryIO, stream.detach()), encoding  # detached, the old wrapper never closes it
    return cast(BinaryIO, io.BufferedWriter(io.FileIO(descriptor, "w", closefd=False))), encoding


def stop_writing() -> None:
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
