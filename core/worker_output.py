"""How much of a worker's output the connector keeps: of its stdout and of its stderr, each, the
first ``OUTPUT_CAP_BYTES`` at most; a stream that would pass the cap keeps what fits, and its
worker is to be ended, its attempt saying why."""

from __future__ import annotations

from dataclasses import dataclass

OUTPUT_CAP_BYTES = 64 << 20


@dataclass(frozen=True, slots=True)
class Kept:
    data: bytes  # what of the chunk is written
    passed: bool  # the stream passed the cap with this chunk (or before it)


def keep(written: int, chunk: bytes, cap: int) -> Kept:
    """What of ``chunk`` a stream that has kept ``written`` bytes keeps under ``cap``."""
    room = max(0, cap - written)
    return Kept(chunk[:room], len(chunk) > room)


def passed_cap(cap: int) -> str:
    """The attempt's words for a worker ended because its output passed ``cap`` bytes."""
    size = f"{cap / (1 << 20):g} MiB" if cap >= 1 << 20 else f"{cap} bytes"
    return f"its output passed {size}: the worker was ended"
