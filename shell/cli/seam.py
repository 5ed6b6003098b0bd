"""The one error seam of both command lines, ``bin/connect`` and ``bin/outbox-resolve``.

Rules:
1. A person never sees a traceback for something they can fix: a ``UserError`` becomes one
   line on stderr, ``error: <what is wrong>``, and its exit code (``shell.errors`` documents
   the codes: 0 done, 1 found wrong, 2 usage, 3 configuration or ledger, 4 not found,
   5 refused, 6 unavailable, 141 the reader went away).
2. A command line may say some errors in its own words first (``OwnWords``): outbox-resolve
   says a busy ledger changed nothing, and an unreadable ledger is EXIT_CONFIG there. They are
   checked before the plain ``UserError`` line, in the order given.
3. Ctrl-C is 130, quietly. A reader that goes away (``| head``) ends the command as SIGPIPE
   would, 141, with nothing on stderr.
4. Nothing else is caught here: anything else is a bug, and its traceback is for a developer.
5. With ``--json`` an error is also one JSON object on stdout, ``{"error": <the first line>,
   "errors": [<every line>], "exit_code": N}``, so a machine reading stdout never reads an
   empty answer as success; bad usage too (``parse_arguments``). stderr says what it always says.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from shell.errors import EXIT_BROKEN_PIPE, EXIT_USAGE, UserError

JSON_FLAG = "--json"


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


def reader_went_away() -> int:
    """After a ``BrokenPipeError`` on stdout: stop writing there (so the interpreter's own flush
    at exit cannot fail again) and answer as a process killed by SIGPIPE would."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
    return EXIT_BROKEN_PIPE


def parse_arguments(parser: argparse.ArgumentParser, argv: Sequence[str] | None) -> argparse.Namespace:
    """``parser.parse_args(argv)``; with ``--json`` among the arguments, bad usage is also one JSON
    object on stdout (rule 5) before argparse's own exit."""
    arguments = list(sys.argv[1:] if argv is None else argv)
    if JSON_FLAG not in arguments:
        return parser.parse_args(arguments)
    said = io.StringIO()
    try:
        with contextlib.redirect_stderr(said):
            return parser.parse_args(arguments)
    except SystemExit as done:
        if done.code == EXIT_USAGE:
            lines = [line for line in said.getvalue().splitlines() if line.strip()]
            _print_json(lines[-1].partition("error: ")[2] or lines[-1] if lines else "bad usage", EXIT_USAGE)
        raise
    finally:
        sys.stderr.write(said.getvalue())


def _say(message: str, exit_code: int, as_json: bool) -> int:
    print(f"error: {message}", file=sys.stderr)
    if as_json:
        _print_json(message, exit_code)
    return exit_code


def _print_json(message: str, exit_code: int) -> None:
    lines = message.split("\nerror: ")  # a ConfigurationInvalid's further lines
    print(json.dumps({"error": lines[0], "errors": lines, "exit_code": exit_code}, ensure_ascii=False))
