"""``bin/connect import``: a reconciliation file read (``parse``) and planned against the ledger
(``plan``: what the one transaction writes, or the first entry it cannot apply, and why).

A file is at most ``MAX_BYTES`` of JSON, ``{"version": 1, "entries": [{"event_id", "decision":
"done" | "held"}, ...]}``. ``done`` closes a record as ``discarded(imported_done)``: one the ledger
never saw gets a tombstone, so intake never admits it; one waiting, blocked or held, or completed
``unknown`` or ``failed`` with no task carrying it, is discarded; one discarded or succeeded is left
as it is. Every other record not terminal is tagged for review, keeping its state (``held`` names
such records). The plan is all or nothing.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from returns.result import Failure, Result, Success

from core.edges import RECORD_EDGES, Actor, RecordState
from core.ids import MAX_ID
from core.json_input import JsonRefused, decode_json
from core.states import EventOutcome

MAX_BYTES = 16 * 1024 * 1024
VERSION = 1

_R = RecordState
_SETTLED_BADLY = frozenset({EventOutcome.unknown, EventOutcome.failed})


class Decision(StrEnum):
    done = "done"
    held = "held"


_DECISIONS = {str(decision): decision for decision in Decision}


@dataclass(frozen=True, slots=True)
class Entry:
    index: int
    event_id: int
    decision: Decision


@dataclass(frozen=True, slots=True)
class NotAFile:
    why: str


@dataclass(frozen=True, slots=True)
class Unappliable:
    index: int
    event_id: int | None
    why: str

    def __str__(self) -> str:
        event = "" if self.event_id is None else f" (event {self.event_id})"
        return f"entry {self.index}{event}: {self.why}"


@dataclass(frozen=True, slots=True)
class RecordNow:
    """What the ledger holds about one named record; ``carried``: a live task row still carries it."""
    event_id: int
    state: RecordState
    reason: str
    outcome: str
    revision: int
    carried: bool


@dataclass(frozen=True, slots=True)
class ImportPlan:
    entries: int
    discard: tuple[RecordNow, ...]  # discarded(imported_done), each under a decision row
    tombstones: tuple[int, ...]  # never seen: a tombstone row each
    review: tuple[int, ...]  # tagged for review
    already: tuple[int, ...]  # done already: nothing changes
    unknown_held: tuple[int, ...]  # held entries the ledger never saw: nothing changes

    @property
    def summary(self) -> str:
        return (f"Imported {self.entries} entries: {len(self.discard)} tombstoned, "
                f"{len(self.tombstones)} tombstones added, {len(self.review)} records tagged for review")


def parse(raw: bytes) -> Result[tuple[Entry, ...], NotAFile | Unappliable]:
    if len(raw) > MAX_BYTES:
        return Failure(NotAFile(f"larger than {MAX_BYTES // (1024 * 1024)} MB"))
    decoded = decode_json(raw, max_bytes=MAX_BYTES)
    if isinstance(decoded, JsonRefused):
        return Failure(NotAFile(decoded.reason))
    document: Any = decoded.value
    if not isinstance(document, dict):
        return Failure(NotAFile("not a JSON object with a version and entries"))
    version = document.get("version")
    if type(version) is not int or version != VERSION:
        return Failure(NotAFile(f"version {json.dumps(version)}: this program reads version {VERSION}"))
    entries = document.get("entries")
    if not isinstance(entries, list):
        return Failure(NotAFile("its entries are not a list"))
    read: list[Entry] = []
    first_at: dict[int, int] = {}
    for index, entry in enumerate(entries):
        match _entry(index, entry):
            case Success(found):
                if found.event_id in first_at:
                    again = f"named again (first at entry {first_at[found.event_id]})"
                    return Failure(Unappliable(index, found.event_id, again))
                first_at[found.event_id] = index
                read.append(found)
            case Failure(bad):
                return Failure(bad)
    return Success(tuple(read))


def _entry(index: int, entry: Any) -> Result[Entry, Unappliable]:
    if not isinstance(entry, dict):
        return Failure(Unappliable(index, None, "not an object with an event_id and a decision"))
    event_id = entry.get("event_id")
    if type(event_id) is not int or not 0 < event_id <= MAX_ID:
        return Failure(Unappliable(index, None, f"event_id {json.dumps(event_id)} is not a positive id"))
    decision = entry.get("decision")
    if not isinstance(decision, str) or decision not in _DECISIONS:
        why = f"decision {json.dumps(decision)} is neither done nor held"
        return Failure(Unappliable(index, event_id, why))
    return Success(Entry(index, event_id, _DECISIONS[decision]))


def plan(
    entries: Sequence[Entry], known: Mapping[int, RecordNow], open_ids: Sequence[int]
) -> Result[ImportPlan, Unappliable]:
    """``known``: the named records the ledger holds; ``open_ids``: every record not terminal."""
    discard: list[RecordNow] = []
    tombstones: list[int] = []
    already: list[int] = []
    unknown_held: list[int] = []
    for entry in entries:
        record = known.get(entry.event_id)
        if record is None:
            (tombstones if entry.decision is Decision.done else unknown_held).append(entry.event_id)
            continue
        if entry.decision is Decision.held:
            continue
        match _done(record):
            case Success(True):
                discard.append(record)
            case Success(False):
                already.append(record.event_id)
            case Failure(why):
                return Failure(Unappliable(entry.index, entry.event_id, why))
    closed = {record.event_id for record in discard}
    return Success(ImportPlan(
        entries=len(entries), discard=tuple(discard), tombstones=tuple(tombstones),
        review=tuple(event_id for event_id in open_ids if event_id not in closed),
        already=tuple(already), unknown_held=tuple(unknown_held),
    ))  # fmt: skip


def _done(record: RecordNow) -> Result[bool, str]:
    """Whether a ``done`` entry discards ``record`` (True) or finds it done already (False)."""
    state = record.state
    if state is _R.discarded or (state is _R.completed and record.outcome == EventOutcome.succeeded):
        return Success(False)
    if record.carried or state is _R.dispatched:
        return Failure("a task still carries it; start the connector once so it settles the task, "
                       "stop it, and import again")
    if state is _R.completed:
        if record.outcome in _SETTLED_BADLY:
            return Success(True)
        return Failure(f"completed with outcome {record.outcome or 'none'}; only unknown or failed is closed")
    if isinstance(RECORD_EDGES.step(state, _R.discarded, Actor.operator), Failure):
        return Failure(f"it is {state}: waiting for its verdict; start the connector once so admission "
                       "decides it, stop it, and import again")
    return Success(True)
