"""The connector's metrics in Prometheus's text format: gathered for ``status --prometheus`` (the
ledger opened read-only, the heartbeats while a connector runs), and the file ``run
--metrics-file`` keeps for node_exporter's textfile collector.

The file's directory is checked before the connector starts, by making a file in it (missing, not
a directory, not writable: ``UserError``, exit 3). Then a thread of its own rewrites the file every
``WRITE_EVERY``: a new file beside it (``.NAME.PID.tmp``, which the collector skips), fsynced,
renamed over it, readable by others (the collector runs as its own user; no figure is a secret);
the running connector's figures besides the ledger's: its loops' beats in memory, its client's
answers and its pacer's budget. A write that fails is warned of once, until one succeeds again, and
never stops the connector. Its stop writes the file once more, saying it no longer runs."""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta
from pathlib import Path

from core import metrics
from core.heartbeats import Beats
from core.metrics import Labels, ProcessFigures
from core.presentation.prometheus_text import exposition
from shell import private_files
from shell.clock import Clock
from shell.errors import EXIT_CONFIG, UserError
from shell.ledger.connection import Ledger, open_ledger_read_only
from shell.ledger.metrics import read_figures

log = logging.getLogger("connector.run")

WRITE_EVERY = timedelta(seconds=15)


def pair_labels(account_id: int, agent_id: int, *, shadow: bool = False) -> Labels:
    """A shadow run's are its own: beside the connector's file, its series would be the same ones."""
    pair = (("account", str(account_id)), ("agent", str(agent_id)))
    return (*pair, ("shadow", "true")) if shadow else pair


def metrics_text(ledger: Ledger, pair: Labels, now: datetime, *, running: bool, beats: Beats | None,
                 process: ProcessFigures | None = None) -> str:
    figures = read_figures(ledger)
    families = (metrics.running_family(running, pair), *metrics.ledger_families(figures, pair, now),
                *metrics.loop_families(beats, pair, now))
    if process is not None:
        families += metrics.process_families(process, pair)
    return exposition(families)


def check_metrics_path(path: Path) -> None:
    """Refuse, before the start, a metrics file the connector could never write."""
    directory = path.parent
    if not directory.exists():
        raise UserError(f"--metrics-file {path}: its directory {directory} does not exist: not started",
                        EXIT_CONFIG)
    if not directory.is_dir():
        raise UserError(f"--metrics-file {path}: {directory} is not a directory: not started", EXIT_CONFIG)
    if path.is_dir():
        raise UserError(f"--metrics-file {path} is a directory: name a file in it: not started", EXIT_CONFIG)
    probe = directory / f".{path.name}.{os.getpid()}.probe"
    try:
        private_files.write_new_file(probe, b"")
        probe.unlink()
    except OSError as error:
        why = f"its directory {directory} is not writable ({error.strerror})"
        raise UserError(f"--metrics-file {path}: {why}: not started", EXIT_CONFIG) from error


class MetricsFile:
    """``text(running)``: the whole file's text, from the running connector's figures."""

    def __init__(self, path: Path, text: Callable[[bool], str]) -> None:
        self._path = path
        self._text = text
        self._stop = threading.Event()
        self._failing = False
        self._thread = threading.Thread(target=self._run, name="metrics", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()
        self.write(running=False)

    def _run(self) -> None:
        while True:
            self.write(running=True)
            if self._stop.wait(WRITE_EVERY.total_seconds()):
                return

    def write(self, *, running: bool) -> None:
        try:
            private_files.write_shared_atomically(self._path, self._text(running).encode())
        except Exception as error:  # a broken metrics file never stops the connector
            if not self._failing:
                log.warning("metrics: %s could not be written (%s); the connector goes on, and says so once "
                            "it is written again", self._path, getattr(error, "strerror", None) or error)
            self._failing = True
            return
        if self._failing:
            log.warning("metrics: %s is written again", self._path)
        self._failing = False


@contextmanager
def kept_in(path: Path | None, ledger_path: Path, pair: Labels, clock: Clock, *,
            loops: Callable[[], dict[str, datetime]],
            process: Callable[[], ProcessFigures]) -> Iterator[None]:
    """While it stands, ``path`` is rewritten every ``WRITE_EVERY`` (nothing without a path), from a
    read-only connection of its own (a reader never waits on the connector's writes)."""
    if path is None:
        yield
        return
    with open_ledger_read_only(ledger_path, clock=clock) as ledger:
        def text(running: bool) -> str:
            now = clock.now()
            beats = Beats(now, loops())
            return metrics_text(ledger, pair, now, running=running, beats=beats, process=process())

        written = MetricsFile(path, text)
        written.start()
        try:
            yield
        finally:
            written.stop()
