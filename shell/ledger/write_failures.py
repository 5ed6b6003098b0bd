"""The running connector's failed ledger writes, kept where ``status`` can read them.

A full disk, a read-only remount or a damaged ledger would otherwise show only in the log while
``status`` said all was well.

Rules:
1. The record is one owner-only file beside the ledger, ``SLOT_BYTES`` filled when made and
   written over in place: recording needs no new block and no write to the ledger or directory.
2. A write counts when the storage failed (``errors.is_storage_failure``); a refused move, a busy
   lock or a bug does not. It records when, why (cut to ``WHY_CHARS``; never a body or token) and
   which process.
3. The next committed write clears it, written only when a record is there: healthy writes cost
   nothing here.
4. Recording and clearing never raise (the caller raises; an unwritable record is logged), and
   take turns under one lock, so a failure recorded during a clear comes after it and stays.
5. ``watch(ledger)`` keeps the record for ``run``'s ledger; one that cannot be made (a full disk
   at start) is logged, and status falls back to measuring free space.
6. ``read_write_failure`` is status's reading: None for no file, a blank or unreadable one; a
   loose or irregular file is refused as every private file. It imports ``WriteFailure`` when
   called: every ledger-opening process imports this module, and only status reads a record.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from core.json_input import json_or_none
from core.timestamps import format_timestamp, parse_timestamp
from shell import private_files

if TYPE_CHECKING:  # connection keeps a WriteFailures
    from core.presentation.status_values import WriteFailure
    from shell.ledger.connection import Ledger

log = logging.getLogger("connector.ledger")

FILE_NAME = "write-failure"
SLOT_BYTES = 1024
WHY_CHARS = 400
_BLANK = b" " * (SLOT_BYTES - 1) + b"\n"
WHAT = "write-failure file"


def path_beside(ledger_path: Path) -> Path:
    """Where the record of ``ledger_path``'s failed writes lives."""
    return ledger_path.parent / FILE_NAME


@dataclass
class WriteFailures:
    """The open record of one ledger's failed writes (rules 1-4)."""

    path: Path
    _descriptor: int
    _recorded: bool
    _turn: threading.Lock = field(default_factory=threading.Lock)  # the slot and the flag move together

    @classmethod
    def beside(cls, ledger_path: Path) -> WriteFailures:
        """Open (or make, filled with real bytes) the record beside ``ledger_path``."""
        path = path_beside(ledger_path)
        descriptor = private_files.open_or_create(path, WHAT)
        try:
            held = os.pread(descriptor, SLOT_BYTES, 0)
            if len(held) < SLOT_BYTES:
                _write_slot(descriptor, _BLANK)
                held = _BLANK
        except BaseException:
            os.close(descriptor)
            raise
        return cls(path, descriptor, bool(held.strip()))

    def failed(self, error: BaseException, now: datetime) -> None:
        """Rule 2: record ``error`` as the last failed write, at ``now``."""
        why = " ".join(str(error).split())[:WHY_CHARS] or type(error).__name__
        text = json.dumps({"at": format_timestamp(now), "why": why, "pid": os.getpid()}, ensure_ascii=True)
        slot = text.encode("ascii")[: SLOT_BYTES - 1].ljust(SLOT_BYTES - 1) + b"\n"
        try:
            with self._turn:
                _write_slot(self._descriptor, slot)
                self._recorded = True
        except OSError as failure:
            log.error(
                "ledger: a write failed (%s), and so did recording it in %s: %s", why, self.path, failure
            )

    def succeeded(self) -> None:
        """Rule 3: a write committed; clear the record if one is there."""
        try:
            with self._turn:
                if not self._recorded:
                    return
                _write_slot(self._descriptor, _BLANK)
                self._recorded = False
        except OSError as failure:
            log.error("ledger: could not clear %s: %s", self.path, failure)

    def close(self) -> None:
        os.close(self._descriptor)


def watch(ledger: Ledger) -> None:
    """Rule 5: record ``ledger``'s failed writes beside it from now on."""
    try:
        ledger.write_failures = WriteFailures.beside(ledger.path)
    except OSError as error:
        log.warning("ledger: %s cannot be kept (%s): status will not show failed writes", FILE_NAME, error)


def _write_slot(descriptor: int, slot: bytes) -> None:
    written = os.pwrite(descriptor, slot, 0)
    if written != len(slot):
        raise OSError(f"wrote {written} of {len(slot)} bytes")
    os.fsync(descriptor)


def read_write_failure(ledger_path: Path) -> WriteFailure | None:
    """Rule 6: the last failed write recorded beside ``ledger_path``, or None."""
    from core.presentation.status_values import WriteFailure  # noqa: PLC0415 -- rule 6: status's alone

    path = path_beside(ledger_path)
    try:
        private_files.check_file(path, WHAT)
        raw = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as error:  # readable by its owner, but not now: status says nothing of it
        log.info("status: %s could not be read: %s", path, error)
        return None
    try:
        found = json_or_none(raw) if raw.strip() else None
        if not isinstance(found, dict):
            return None
        at = str(found["at"])
        parse_timestamp(at)  # a record's time is the ledger's text, or it is no record
        return WriteFailure(at, str(found["why"]), int(found["pid"]))
    except (KeyError, TypeError, ValueError):
        return None
