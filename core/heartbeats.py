"""The loops' heartbeats, judged: which loop of a running connector is not turning.

Each loop of ``run`` (intake, dispatch, outbox, live, config) beats as it starts a turn; the
connector writes every loop's last beat beside the ledger at most every ``WRITE_EVERY``, for
``status`` to read. A loop whose last beat is older than ``STALL_AFTER`` is not turning: longer
than any one turn's bounds (a poll, a repair walk, a membership read and a reconnect's backoff are
each within 30 s); a thread that died or hangs beats no more. While the start runs, the record names
its step and since when, and a step older than ``STALL_AFTER`` is a start that never finished. A
file that is not the record is no record (None), never an error.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta

from core.json_input import JsonRefused, decode_json
from core.timestamps import format_timestamp, parse_timestamp

WRITE_EVERY = timedelta(seconds=5)
STALL_AFTER = timedelta(minutes=3)


@dataclass(frozen=True, slots=True)
class StartStep:
    """The start's step under way (``shell.connector.START_STEPS``, then ``admit`` and ``feed``)."""

    step: str
    since: datetime


@dataclass(frozen=True, slots=True)
class Beats:
    written_at: datetime
    loops: Mapping[str, datetime]
    start: StartStep | None = None  # None: the start is over (or the record is a loop's)


def beats_text(loops: Mapping[str, datetime], written_at: datetime, start: StartStep | None = None) -> str:
    named = {name: format_timestamp(at) for name, at in sorted(loops.items())}
    shown: dict[str, object] = {"written_at": format_timestamp(written_at), "loops": named}
    if start is not None:
        shown["start"] = {"step": start.step, "since": format_timestamp(start.since)}
    return json.dumps(shown, sort_keys=True)


def read_beats(text: bytes | str) -> Beats | None:
    decoded = decode_json(text, max_bytes=64 * 1024)
    if isinstance(decoded, JsonRefused):
        return None
    value = decoded.value
    if not isinstance(value, dict) or not isinstance(value.get("loops"), dict):
        return None
    start = value.get("start")
    try:
        loops = {str(name): parse_timestamp(str(at)) for name, at in value["loops"].items()}
        step = None if not isinstance(start, dict) else StartStep(str(start.get("step")),
                                                                  parse_timestamp(str(start.get("since"))))
        return Beats(parse_timestamp(str(value.get("written_at"))), loops, step)
    except ValueError:
        return None


def not_turning(beats: Beats, now: datetime, stall_after: timedelta = STALL_AFTER) -> tuple[str, ...]:
    return tuple(name for name, at in sorted(beats.loops.items()) if now - at > stall_after)


def beats_report(beats: Beats, now: datetime) -> dict[str, object]:
    stalled = set(not_turning(beats, now))
    return {name: {"last_turn": format_timestamp(at), "turning": name not in stalled}
            for name, at in sorted(beats.loops.items())}


def beats_line(beats: Beats, now: datetime) -> str:
    stalled = not_turning(beats, now)
    turning = [name for name in sorted(beats.loops) if name not in stalled]
    if not stalled:
        return f"loops: all turning ({', '.join(turning)})"
    parts = [f"{name} (last turned {format_timestamp(beats.loops[name])[:19]}Z)" for name in stalled]
    return f"loops: NOT TURNING: {', '.join(parts)}; turning: {', '.join(turning) or 'none'}"


def start_stuck(beats: Beats, now: datetime) -> bool:
    return beats.start is not None and now - beats.start.since > STALL_AFTER


def start_line(beats: Beats, now: datetime) -> str | None:
    """None once the start is over."""
    if beats.start is None:
        return None
    at = f"in its {beats.start.step} step since {format_timestamp(beats.start.since)[:19]}Z"
    if start_stuck(beats, now):
        return f"start: NEVER FINISHED: {at}, longer than {STALL_AFTER.total_seconds():g} s (see its log)"
    return f"start: under way, {at}"


def start_report(beats: Beats, now: datetime) -> dict[str, object] | None:
    if beats.start is None:
        return None
    return {"step": beats.start.step, "since": format_timestamp(beats.start.since),
            "finishing": not start_stuck(beats, now)}
