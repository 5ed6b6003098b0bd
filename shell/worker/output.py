"""A worker's stdout and stderr, from its pipes to its session's files.

The connector reads both and writes what ``core.worker_output`` keeps, so what a worker writes
never fills the ledger's disk.
Past the cap, and after a failed write, the rest is read and dropped: the worker never blocks on
a full pipe while the driver ends it."""

from __future__ import annotations

import contextlib
import logging
import os
import threading
from typing import IO

from core.worker_output import keep

log = logging.getLogger("connector.worker")

READ_BYTES = 1 << 16


class Pump:
    """One stream: ``source`` (the pipe) into the descriptor ``file``, which it closes at the end."""

    def __init__(self, source: IO[bytes], file: int, cap: int, name: str) -> None:
        self._source = source
        self._file = file
        self._cap = cap
        self.written = 0
        self.passed = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"output-{name}", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        writing = True
        try:
            while chunk := os.read(self._source.fileno(), READ_BYTES):
                kept = keep(self.written, chunk, self._cap)
                if writing and kept.data:
                    writing = self._write(kept.data)
                if kept.passed:
                    self.passed.set()
        except OSError as error:
            log.warning("worker output: its pipe could not be read: %s", error.strerror)
        finally:
            os.close(self._file)
            with contextlib.suppress(OSError):
                self._source.close()

    def _write(self, data: bytes) -> bool:
        view = memoryview(data)
        try:
            while view:
                done = os.write(self._file, view)
                self.written += done
                view = view[done:]
        except OSError as error:
            log.warning("worker output: its file could not be written (%s); the rest is dropped",
                        error.strerror)
            return False
        return True

    def join(self, seconds: float) -> bool:
        """Wait up to ``seconds`` for the pipe's end (every writer gone); True once it ended."""
        self._thread.join(seconds)
        return not self._thread.is_alive()
