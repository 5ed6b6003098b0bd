"""How a worker ended: the driver's facts turned into the attempt's stop reason, and what Claude
Code said on its stream-json output, read as the connector's facts.

A worker that could not be started ended ``failed`` and spawn-failed: no process existed, so it
cannot have acted. A stop the dispatcher asked for is named for its cause whatever the exit.
Otherwise exit 0 is ``finished``, any other exit or a signal the dispatcher did not send
``failed``, and a worker gone with no exit status to read ``lost``: it may have acted. A stop of
the connector within a bound gives its workers ``WORKERS_SHARE`` of it to be settled, and each a
grace before SIGKILL of half that share at most (``stop_shares``): the SIGKILL comes, and the
attempt is settled, while the connector still waits, so no worker outlives it.

Claude Code writes one JSON object a line (an ``init``, the turn's messages, a ``result``); a
result answers every message replayed before it. The worker never began its work only when its
output proves it (``not_started``), never when the dispatcher stopped it. A result's error text is
bounded and anything shaped like a secret ``[redacted]``. A later task resumes the conversation's
session only after an attempt that ended ``finished``, began its work and left nothing ``unknown``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from enum import StrEnum

from core.dispatch_prompt import DISPATCH_TOOLS, tool_name
from core.snapshots import StopReason, WorkerResult
from core.worker_allowances import MCP_SERVER_NAME

GRACE_SECONDS = 30.0  # SIGTERM to SIGKILL, when no stop's bound asks for less
WORKERS_SHARE = 0.6  # of a stop's bound, for settling its workers; the rest flushes their notices


@dataclass(frozen=True, slots=True)
class StopShares:
    workers: float  # seconds the stop waits for every worker to be settled
    grace: float  # seconds from a worker's SIGTERM to its SIGKILL


def stop_shares(bound_seconds: float) -> StopShares:
    workers = max(0.0, bound_seconds) * WORKERS_SHARE
    return StopShares(workers, min(GRACE_SECONDS, workers / 2))


class StopRequest(StrEnum):
    """A stop the dispatcher asked for: the signals it sent were its own."""
    deadline = "deadline"
    shutdown = "shutdown"
    not_started = "not_started"  # its init proved it never began its work: failed
    after_result = "after_result"  # it outlived its own result: finished
    output_cap = "output_cap"  # its output passed the cap kept on disk: failed


@dataclass(frozen=True, slots=True)
class Exited:
    status: int


@dataclass(frozen=True, slots=True)
class Signaled:
    signal: int


@dataclass(frozen=True, slots=True)
class NeverStarted:
    reason: str


@dataclass(frozen=True, slots=True)
class Vanished:
    """The worker is gone, with no exit status the driver could read (not its child, or reaped)."""


Ending = Exited | Signaled | NeverStarted | Vanished


@dataclass(frozen=True, slots=True)
class WorkerEnd:
    ending: Ending
    stop_requested: StopRequest | None = None


def stop_reason(end: WorkerEnd) -> StopReason:
    match end:
        case WorkerEnd(ending=NeverStarted()):
            return StopReason.failed
        case WorkerEnd(stop_requested=StopRequest.deadline):
            return StopReason.deadline
        case WorkerEnd(stop_requested=StopRequest.shutdown):
            return StopReason.shutdown
        case WorkerEnd(stop_requested=StopRequest.not_started | StopRequest.output_cap):
            return StopReason.failed
        case WorkerEnd(stop_requested=StopRequest.after_result):
            return StopReason.finished
        case WorkerEnd(ending=Exited(status=0)):
            return StopReason.finished
        case WorkerEnd(ending=Exited() | Signaled()):
            return StopReason.failed
        case _:
            return StopReason.lost


def spawn_failed(end: WorkerEnd) -> bool:
    return isinstance(end.ending, NeverStarted)


MAX_ERROR_TEXT = 300
REDACTED = "[redacted]"
# An API key (sk-ant-..., sk-...), a bearer token, and any run of 32 or more token characters (a
# task token is 43 URL-safe characters; a hash, 64 hex digits).
_SECRET = re.compile(r"sk-[A-Za-z0-9_\-]{6,}|(?i:bearer)\s+\S{8,}|[A-Za-z0-9_\-]{32,}")


@dataclass(frozen=True, slots=True)
class StreamFacts:
    init: Mapping[str, object] | None = None
    result: WorkerResult | None = None
    connector_called: bool = False
    results: int = 0  # one a turn
    replays: int = 0  # the connector's user messages Claude Code has taken
    answered: int = 0  # replays before the latest result

    @property
    def session_id(self) -> str:
        """The Claude Code session the init names ("" before it, or when it names none)."""
        named = self.init.get("session_id") if self.init is not None else None
        return named if isinstance(named, str) else ""


def bounded(text: str, limit: int = MAX_ERROR_TEXT) -> str:
    clean = _SECRET.sub(REDACTED, " ".join(text.split()))
    return clean if len(clean) <= limit else clean[: limit - 1] + "…"


def init_problem(
    init: Mapping[str, object], *, permission_mode: str, tools: Sequence[str] = DISPATCH_TOOLS,
    server: str = MCP_SERVER_NAME,
) -> str | None:
    """Why ``init`` is not what the connector asked for (its server connected, every dispatch tool
    listed, the permission mode asked), or None: the first thing missing is the reason."""
    servers = init.get("mcp_servers")
    status = ""
    if isinstance(servers, list):
        for entry in servers:
            if isinstance(entry, Mapping) and entry.get("name") == server:
                status = str(entry.get("status", ""))
    if status != "connected":
        return f"the {server} MCP server is {status or 'not listed'}, not connected"
    listed = init.get("tools")
    names = set(listed) if isinstance(listed, list) else set()
    missing = [tool_name(tool) for tool in tools if tool_name(tool) not in names]
    if missing:
        return f"the {server} MCP server's tools are not listed: {', '.join(missing)}"
    mode = init.get("permissionMode")
    if mode != permission_mode:
        return f"the permission mode is {mode!r}, not {permission_mode!r}"
    return None


def _number(value: object, kind: type[int] | type[float]) -> int | float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return kind(0)
    return kind(value)


def read_result(message: Mapping[str, object]) -> WorkerResult:
    is_error = message.get("is_error") is True
    denials = message.get("permission_denials")
    entries = denials if isinstance(denials, list) else []
    names = tuple(str(entry.get("tool_name", "")) for entry in entries if isinstance(entry, Mapping))
    text = message.get("result")
    errors = message.get("errors")
    if not isinstance(text, str) and isinstance(errors, list) and errors:
        text = "; ".join(str(error) for error in errors)
    return WorkerResult(
        is_error=is_error,
        turns=int(_number(message.get("num_turns"), int)),
        cost_usd=float(_number(message.get("total_cost_usd"), float)),
        duration_ms=int(_number(message.get("duration_ms"), int)),
        denials=names,
        error=bounded(text if isinstance(text, str) else str(message.get("subtype", ""))) if is_error else "",
        terminal_reason=str(message.get("terminal_reason") or ""),
    )


def _calls_connector(message: Mapping[str, object]) -> bool:
    inner = message.get("message")
    content = inner.get("content") if isinstance(inner, Mapping) else None
    prefix = f"mcp__{MCP_SERVER_NAME}__"
    return isinstance(content, list) and any(
        isinstance(part, Mapping) and part.get("type") == "tool_use"
        and str(part.get("name", "")).startswith(prefix) for part in content
    )


def fold(facts: StreamFacts, line: str) -> StreamFacts:
    try:
        message = json.loads(line)
    except ValueError:
        return facts
    if not isinstance(message, dict):
        return facts
    kind = message.get("type")
    if kind == "system" and message.get("subtype") == "init" and facts.init is None:
        return replace(facts, init=message)
    if kind == "result":
        return replace(facts, result=read_result(message), results=facts.results + 1, answered=facts.replays)
    if kind == "user" and message.get("isReplay") is True:
        return replace(facts, replays=facts.replays + 1)
    if kind == "assistant" and not facts.connector_called and _calls_connector(message):
        return replace(facts, connector_called=True)
    return facts


def not_started(facts: StreamFacts, *, permission_mode: str) -> str | None:
    """Why the worker provably never began its work, or None. Read once it has ended."""
    if facts.init is None:
        return "Claude Code ended before its init message"
    problem = init_problem(facts.init, permission_mode=permission_mode)
    if problem is not None:
        return problem
    result = facts.result
    unanswered = result is not None and (result.terminal_reason == "api_error" or result.cost_usd == 0)
    if result is not None and result.is_error and unanswered and not facts.connector_called:
        return f"the worker could not reach its model: {result.error or 'no answer'}"
    if not facts.connector_called:
        return "the worker ended without pulling its dispatch"
    return None


@dataclass(frozen=True, slots=True)
class WorkerAccount:
    """How an attempt's worker ended, as its driver tells it."""
    stop_reason: StopReason
    not_started: str = ""
    result: WorkerResult | None = None
    session_id: str = ""  # the Claude Code session it ran in
    ended_because: str = ""  # why the driver ended a worker that had begun, beyond its stop reason


def account(
    stop_reason: StopReason, facts: StreamFacts | None, *, permission_mode: str, cut_short: bool,
    ended_because: str = "",
) -> WorkerAccount:
    """``cut_short`` when the dispatcher asked the worker to stop (deadline, shutdown, its output)."""
    if facts is None:
        return WorkerAccount(stop_reason, ended_because=ended_because)
    reason = None if cut_short else not_started(facts, permission_mode=permission_mode)
    ended = StopReason.failed if reason else stop_reason
    return WorkerAccount(ended, reason or "", facts.result, facts.session_id, ended_because)


@dataclass(frozen=True, slots=True)
class LatestAttempt:
    stop_reason: str
    not_started: str
    session_id: str
    left_unknown: bool  # a row of its task settled unknown


_SESSION = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def resumable(latest: LatestAttempt | None) -> str:
    if latest is None or latest.not_started or latest.left_unknown:
        return ""
    finished = latest.stop_reason == StopReason.finished
    return latest.session_id if finished and _SESSION.fullmatch(latest.session_id) else ""
