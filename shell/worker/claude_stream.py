"""The connector's side of Claude Code's stream-json: the prompt in, the worker's lines read out.

Rules:
1. ``write_prompt`` writes the prompt as one user message and flushes; a worker that closed its
   end is no error here (its output says why it ended).
2. ``StreamWatch`` reads the stdout file as it grows, whole lines only, into
   ``core.worker_stream.StreamFacts``: at most ``MAX_READ_BYTES`` a poll, and a line over
   ``MAX_LINE_BYTES`` dropped whole, so a worker cannot make the connector hold its output.
3. Once a ``result`` answers every message given (``core.worker_stream`` rule 3), the work is
   over: ``Turns.close_if_answered`` closes stdin, and Claude Code exits.
4. ``Turns`` gives a running worker its turns, one user message each (the first prompt, then a
   follow-up per joining event), only while the input is open: once closed ``give`` answers False
   and the event waits for a task of its own. Giving and closing share one lock."""

from __future__ import annotations

import contextlib
import json
import threading
from pathlib import Path
from typing import IO

from core.worker_stream import StreamFacts, fold

MAX_READ_BYTES = 1 << 20
MAX_LINE_BYTES = 4 << 20


def user_message(text: str) -> bytes:
    """One stream-json user message: a turn of the conversation."""
    message = {"type": "user", "message": {"role": "user", "content": text}}
    return (json.dumps(message) + "\n").encode()


def write_prompt(stdin: IO[bytes] | None, prompt: str) -> None:
    """Rule 1."""
    if stdin is None:
        return
    try:
        stdin.write(user_message(prompt))
        stdin.flush()
    except (BrokenPipeError, ValueError, OSError):
        pass


def close_input(stdin: IO[bytes] | None) -> None:
    """Rule 3: no further turn."""
    if stdin is None or stdin.closed:
        return
    with contextlib.suppress(OSError):
        stdin.close()


class Turns:
    """The turns given to one stream-json worker on its stdin (rule 4)."""

    def __init__(self, stdin: IO[bytes] | None) -> None:
        self._stdin = stdin
        self._lock = threading.Lock()
        self.given = 0
        self.closed = stdin is None

    def give(self, text: str) -> bool:
        """Write one turn; False when the input is already closed (nothing written)."""
        with self._lock:
            if self.closed:
                return False
            write_prompt(self._stdin, text)
            self.given += 1
            return True

    def close_if_answered(self, answered: int) -> bool:
        """Close the input once ``answered`` messages cover every one given (rule 3); True once closed."""
        with self._lock:
            if not self.closed and answered >= self.given:
                close_input(self._stdin)
                self.closed = True
            return self.closed

    def close(self) -> None:
        with self._lock:
            close_input(self._stdin)
            self.closed = True


class StreamWatch:
    """The facts of one worker's stream, read from its stdout file as it grows (rule 2)."""

    def __init__(self, stdout: Path) -> None:
        self._path = stdout
        self._offset = 0
        self._partial = b""
        self._dropping = False
        self.facts = StreamFacts()

    def poll(self) -> StreamFacts:
        """Read what the worker wrote since the last poll; the facts so far."""
        try:
            with self._path.open("rb") as file:
                file.seek(self._offset)
                chunk = file.read(MAX_READ_BYTES)
        except OSError:
            return self.facts
        self._offset += len(chunk)
        data = self._partial + chunk
        *lines, self._partial = data.split(b"\n")
        for line in lines:
            if self._dropping:  # the rest of a line too long to keep
                self._dropping = False
                continue
            self.facts = fold(self.facts, line.decode("utf-8", "replace"))
        if len(self._partial) > MAX_LINE_BYTES:
            self._partial, self._dropping = b"", True
        return self.facts
