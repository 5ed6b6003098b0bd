"""The one error seam of both command lines, ``bin/connect`` and ``bin/outbox-resolve``.

Rules:
1. A person never sees a traceback for something they can fix: a ``UserError`` is one line on
   stderr, ``error: <what is wrong>``, and its exit code (``shell.errors``).
2. A command line may word some errors itself first (``OwnWords``, checked in order): for
   outbox-resolve a busy ledger changed nothing, and an unreadable one is EXIT_CONFIG.
3. Ctrl-C is 130, quietly. A reader that goes away (``| head``) ends the command as SIGPIPE
   would, 141, with nothing on stderr.
4. Nothing else is caught here: anything else is a bug, and its traceback is for a developer.
5. With ``--json`` an error is also one object on stdout, ``{"error", "errors", "exit_code"}``,
   so a machine never reads an empty answer as success; bad usage too.
6. Bad usage is one ``error:`` line naming the command and its ``--help``, exit 2
   (``EXIT_USAGE``), never argparse's two lines: every parser is a ``CommandParser``, whose
   ``error`` raises ``BadUsage``. What a person typed is shown escaped (``core.text.printable``),
   so the line stays one line and a terminal never obeys it.
7. An answer that cannot be written to stdout (``shell.cli.streams`` rule 3) is said on stderr,
   exit 3, no JSON; stdout is flushed inside the seam, so a buffered answer fails where it can
   be said.
8. A parser's help is as wide as the terminal, read as ``shutil`` would, without importing it
   (argparse would, with its compression modules: milliseconds of every start)."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import NoReturn

from core.text import printable as escaped
from shell.cli import streams
from shell.cli.streams import StdoutUnwritable
from shell.errors import EXIT_BROKEN_PIPE, EXIT_USAGE, UserError

JSON_FLAG = "--json"
_LINES = "\nerror: "  # between the lines of one error (a ConfigurationInvalid's)


class BadUsage(SystemExit):
    """What argparse would have printed in two lines and exited 2 for (rule 6): a ``SystemExit``
    with argparse's code, so a caller of ``parse_args`` itself sees what it always saw."""

    def __init__(self, message: str) -> None:
        super().__init__(EXIT_USAGE)
        self.message = message


class CommandParser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose usage errors are ``BadUsage`` (rule 6), not its own exit."""

    def _get_formatter(self) -> argparse.HelpFormatter:
        """argparse's formatter, the terminal's width read here (rule 8)."""
        return self.formatter_class(prog=self.prog, width=_columns() - 2)  # type: ignore[call-arg]

    def error(self, message: str) -> NoReturn:
        raise BadUsage(f"{self.prog}: {message} (see `{self.prog} --help`)")  # escaped where said (_say)


@dataclass(frozen=True, slots=True)
class OwnWords:
    """A command line's own line for one kind of error, and the exit code it answers with."""

    kind: type[Exception]
    line: Callable[[Exception], str]
    exit_code: int


def answer(run: Callable[[], int], own_words: Sequence[OwnWords] = (), *, as_json: bool = False) -> int:
    """``run()``'s exit code, or the one line and exit code its error calls for (rules 1-3, 5)."""
    kinds = tuple(words.kind for words in own_words)
    try:
        code = run()
        streams.flush_answer()  # rule 7: said here, while it can be
    except StdoutUnwritable as error:
        print(f"error: {error}", file=sys.stderr)
        streams.stop_writing()
        return error.exit_code
    except kinds as error:
        words = next(words for words in own_words if isinstance(error, words.kind))
        return _say(words.line(error), words.exit_code, as_json)
    except UserError as error:
        return _say(str(error), error.exit_code, as_json)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return reader_went_away()
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


def reader_went_away() -> int:
    """After a ``BrokenPipeError`` on stdout: stop writing there (so the interpreter's own flush
    at exit cannot fail again) and answer as a process killed by SIGPIPE would."""
    streams.stop_writing()
    return EXIT_BROKEN_PIPE


def parse_arguments(parser: argparse.ArgumentParser, argv: Sequence[str] | None) -> argparse.Namespace:
    """``parser.parse_args(argv)``; bad usage is one ``error:`` line (with ``--json`` among the
    arguments, also one JSON object on stdout) and ``SystemExit(EXIT_USAGE)`` (rules 5, 6)."""
    arguments = list(sys.argv[1:] if argv is None else argv)
    try:
        return parser.parse_args(arguments)
    except BadUsage as bad:
        raise SystemExit(bad_usage(bad.message, as_json=JSON_FLAG in arguments)) from None


def bad_usage(message: str, *, as_json: bool) -> int:
    """Bad usage said as every error is (rule 6): one line, and the JSON object with ``--json``."""
    return _say(message, EXIT_USAGE, as_json)


def _say(message: str, exit_code: int, as_json: bool) -> int:
    """Rule 1's line(s): each of an error's own lines (a ``ConfigurationInvalid`` joins them with
    ``\nerror: ``) with every control character escaped, a newline too, whatever text (a path, a
    name) it carries."""
    message = _LINES.join(escaped(line) for line in message.split(_LINES))
    print(f"error: {message}", file=sys.stderr)
    if as_json:
        _print_json(message, exit_code)
    return exit_code


def _print_json(message: str, exit_code: int) -> None:
    lines = message.split(_LINES)  # a ConfigurationInvalid's further lines
    try:
        said = {"error": lines[0], "errors": lines, "exit_code": exit_code}
        print(json.dumps(said, ensure_ascii=False), flush=True)
    except StdoutUnwritable:
        streams.stop_writing()  # said on stderr already; the exit code stands
