"""``shadow promote`` on disk: its durable marker, what the state directory holds, and each step.
Which step comes next is ``core.promotion.next_step``'s decision alone.

``promote`` runs holding both instance locks (the connector's and the shadow's): it observes, asks
core, takes the step, observes again, until finished or stuck; every step boundary is a crash point
a test SIGKILLs at. The marker (``promote.json``) is written whole and removed last; while it stands
``run`` refuses to start, so no new ledger appears before promote finishes. The hold is
``set_hold``'s one transaction with the marker's cause, so a ledger held by this promote is known by
its cause. A rename is of one sealed file within one file system, then an fsync of the directory:
the file is in one place or the other, whole."""
from __future__ import annotations

import json
import os
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from core import promotion
from core.json_input import JsonRefused, decode_json
from core.promotion import Finished, Marker, OnDisk, Step, Stuck
from core.timestamps import format_timestamp
from shell import private_files
from shell.clock import Clock
from shell.crashpoints import pause_at
from shell.errors import EXIT_CONFIG, UserError
from shell.ledger import promotion as ledgers
from shell.ledger.connection import open_ledger
from shell.ledger.hold import set_hold
from shell.state.config import StatePaths

MARKER_NAME = "promote.json"


class PromoteUnfinished(UserError):
    """A promote began and has not finished: nothing may run until it does."""

    exit_code = EXIT_CONFIG


@dataclass(frozen=True, slots=True)
class Promoted:
    """How promote ended: ``already`` when an earlier run had finished it."""

    already: bool
    tagged: int
    held: int
    aside: str | None
    steps: tuple[Step, ...]

    @property
    def summary(self) -> str:
        if self.already:
            return "Already promoted; the ledger is held"
        kept = f"; the old ledger is kept as {self.aside}" if self.aside else ""
        return (
            f"Promoted under the hold: {self.tagged} records tagged for review, {self.held} held{kept}. "
            "Start the connector; nothing dispatches until `bin/connect release`"
        )


def marker_path(state: Path) -> Path:
    return state / MARKER_NAME


def unless_promoting(state: Path, ledger: Path) -> Path:
    """``ledger``, unless a promote is unfinished in ``state``: ``run`` asks this once it holds its
    lock, before it opens (and might create) its ledger."""
    if marker_path(state).exists():
        raise PromoteUnfinished(
            f"{marker_path(state)}: a shadow promote began and has not finished; "
            "run `bin/connect shadow promote` again to finish it"
        )
    return ledger


def read_marker(state: Path) -> Marker | None:
    try:
        decoded = decode_json(marker_path(state).read_bytes())
        if isinstance(decoded, JsonRefused):
            raise ValueError(decoded.reason)
        raw: Any = decoded.value
        aside = raw["aside"]
        return Marker(str(raw["cause"]), None if aside is None else str(aside))
    except FileNotFoundError:
        return None
    except (ValueError, KeyError, TypeError) as error:
        raise UserError(
            f"{marker_path(state)}: not promote's marker ({error}); move it away and run promote again",
            EXIT_CONFIG,
        ) from error


def observe(state: Path, shadow: Path) -> OnDisk:
    marker = read_marker(state)
    ledger, shadow_ledger = StatePaths.at(state).ledger, StatePaths.at(shadow).ledger
    return OnDisk(
        marker=marker, shadow_ledger=shadow_ledger.exists(), shadow_hold=ledgers.hold_cause(shadow_ledger),
        ledger=ledger.exists(), ledger_hold=ledgers.hold_cause(ledger),
        aside=marker is not None and marker.aside is not None and (state / marker.aside).exists(),
        ledger_unsettled=ledgers.unsettled(ledger),
    )


def promote(state: Path, shadow: Path, by: str, clock: Clock) -> Promoted:
    """Take each step core names until it is finished; ``Stuck`` is a ``UserError``."""
    taken: list[Step] = []
    aside: str | None = None
    while True:
        disk = observe(state, shadow)
        aside = aside if disk.marker is None else disk.marker.aside
        match promotion.next_step(disk):
            case Finished(already=already):
                tagged, held = ledgers.counts(StatePaths.at(state).ledger)
                return Promoted(already and not taken, tagged, held, aside, tuple(taken))
            case Stuck(why=why):
                raise UserError(why, EXIT_CONFIG)
            case Step() as step:
                _take(step, disk, (state, shadow), by, clock.now())
                taken.append(step)
                pause_at(f"promote_{step}")  # a crash test kills the process here, the step done


def _take(step: Step, disk: OnDisk, places: tuple[Path, Path], by: str, now: datetime) -> None:
    """Take ``step``; ``places``: the state directory and the shadow's."""
    state, shadow = places
    ledger, shadow_ledger = StatePaths.at(state).ledger, StatePaths.at(shadow).ledger
    marker = disk.marker
    if step is Step.begin:
        made = promotion.marker_for(disk.ledger, format_timestamp(now))
        content = json.dumps({"cause": made.cause, "aside": made.aside}).encode()
        private_files.write_atomically(marker_path(state), content)
        return
    assert marker is not None  # core names no later step without one
    if step is Step.hold:
        with open_ledger(shadow_ledger) as opened:
            set_hold(opened, by, marker.cause, now)
    elif step is Step.set_aside:
        assert marker.aside is not None
        ledgers.seal(ledger)
        _rename(ledger, state / marker.aside)
    elif step is Step.move:
        ledgers.seal(shadow_ledger)
        pause_at("promote_sealed")
        _rename(shadow_ledger, ledger)
    else:
        marker_path(state).unlink()
        private_files.sync_directory(state)


def _rename(source: Path, target: Path) -> None:
    os.rename(source, target)
    private_files.sync_directory(target.parent)
    if source.parent != target.parent:
        private_files.sync_directory(source.parent)
