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
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from shell.errors import EXIT_BROKEN_PIPE, UserError


@dataclass(frozen=True, slots=True)
class OwnWords:
    """A command line's own line for one kind of error, and the exit code it answers with."""

    kind: type[Exception]
    line: Callable[[Exception], str]
    exit_code: int


def answer(run: Callable[[], int], own_words: Sequence[OwnWords] = ()) -> int:
    """``run()``'s exit code, or the one line and exit code its error calls for (rules 1-3)."""
    kinds = tuple(words.kind for words in own_words)
    try:
        code = run()
    except kinds as error:
        words = next(words for words in own_words if isinstance(error, words.kind))
        print(f"error: {words.line(error)}", file=sys.stderr)
        return words.exit_code
    except UserError as error:
        print(f"error: {error}", file=sys.stderr)
        return error.exit_code
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
