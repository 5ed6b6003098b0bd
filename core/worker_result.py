"""Claude Code's ``result``, as the connector keeps it on an attempt: a value with no behaviour,
apart so that what shows it (``bin/connect status``) imports nothing else of the worker's stream
(``core.worker_stream`` reads it)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class WorkerResult:
    """Claude Code's ``result``: how its turn ended."""

    is_error: bool
    turns: int = 0
    cost_usd: float = 0.0
    duration_ms: int = 0
    denials: tuple[str, ...] = ()  # the tools refused, by name, in order
    error: str = ""  # the result's text when is_error: bounded, no secrets
    terminal_reason: str = ""
