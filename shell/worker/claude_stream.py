"""The connector's side of Claude Code's stream-json: the prompt in, the worker's lines read out.

Rules:
1. ``write_prompt`` writes the prompt as one stream-json user message and flushes it; a worker
   that already closed its end is no error here (its output says why it ended).
2. ``StreamWatch`` reads the worker's stdout file as it grows, whole lines only (a line still
   being written waits for its newline), and folds them into ``core.worker_stream.StreamFacts``.
   It never reads more than ``MAX_READ_BYTES`` a poll, and a line longer than
   ``MAX_LINE_BYTES`` is dropped whole, so a worker cannot make the connector hold its output.
3. Once the facts hold a ``result``, the turn is over: ``close_input`` closes the worker's stdin,
   which tells Claude Code there is no further turn, and it exits.
"""

from __future__ import annotations

import contextlib
import json
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
