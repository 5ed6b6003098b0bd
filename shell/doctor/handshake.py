"""``doctor --deep``'s probe, both ends: the worker spawned as the dispatcher spawns it, but with
a probe token, and the MCP server's answer to that token.

A probe token names no task and grants nothing: the server opens no ledger, answers the
handshake and refuses every tool, telling the worker to stop. On ``notifications/initialized``
it creates an owner-only marker beside the ledger, named from the token's hash (one it cannot
write is logged: the handshake is then not seen). Doctor waits for the marker, then ends the
worker's group; a worker that ends first, or time running out, is a handshake not seen, with the
worker's last stderr line. Whatever it started outside its group is ended by the supervision as
the connector's would be (doctor is its subreaper), and counted. The worker
runs in a scratch directory, never a route's, and never reaches the model: a stream-json worker is
given no message."""

from __future__ import annotations

import logging
import secrets
import tempfile
from datetime import timedelta
from pathlib import Path
from typing import IO, Any

from returns.result import Failure, Result

from core.dispatch_tools import RefusalKind, ToolRefusal, refuse
from core.doctor import Handshake
from core.task_token import PROBE_PREFIX, probe_marker_name
from core.worker_stream import Ending, Exited, Signaled, StopRequest, Vanished
from shell import private_files, processes
from shell.clock import Clock
from shell.worker.command import WorkerCommand
from shell.worker.driver import SessionSetupError, SpawnFailed, release, spawn, supervise
from shell.worker.mcp import McpServer, serve

log = logging.getLogger(__name__)

PROMPT = ("bin/connect doctor is checking that you start with the Basecamp connector's MCP server. "
          "There is no dispatch and nothing to do: stop now.")
NO_DISPATCH = ("this is bin/connect doctor checking that you start with the connector's MCP server: "
               "there is no dispatch; stop now")
ATTEMPT = "doctor_probe"
GRACE_SECONDS = 2.0
STDERR_TAIL = 300


class _Seen:
    """The supervision's stop signal: set once the probe's marker exists."""

    def __init__(self, marker: Path, clock: Clock) -> None:
        self._marker = marker
        self._clock = clock
        self._started = clock.monotonic()
        self.after: float | None = None

    def is_set(self) -> bool:
        if self.after is None and self._marker.exists():
            self.after = self._clock.monotonic() - self._started
        return self.after is not None


def probe(command: WorkerCommand, *, ledger: Path, agent_id: int, seconds: float, clock: Clock) -> Handshake:
    token = PROBE_PREFIX + secrets.token_hex(16)
    marker = marker_path(ledger, token)
    with tempfile.TemporaryDirectory(prefix="connector-doctor-") as scratch, processes.subreaper():
        work = Path(scratch) / "work"
        work.mkdir()
        try:
            started = spawn(command, attempt_id=ATTEMPT, prompt=PROMPT, work_dir=work,
                            private_dir=Path(scratch) / "sessions", ledger_path=ledger, token=token,
                            agent_id=agent_id, send_prompt=False)
        except SessionSetupError as error:
            return Handshake(False, 0.0, spawn_failed=str(error))
        if isinstance(started, SpawnFailed):
            return Handshake(False, 0.0, spawn_failed=started.detail)
        seen = _Seen(marker, clock)
        try:
            supervision = supervise(started, deadline_at=clock.now() + timedelta(seconds=seconds),
                                    stop_event=seen, clock=clock, still_running_every=seconds + 1,
                                    grace_seconds=GRACE_SECONDS)
            seen.is_set()  # it may have completed the handshake just before it ended by itself
            tail = _last_line(started.stderr)
        finally:
            marker.unlink(missing_ok=True)
            release(started)
    end = supervision.end
    return Handshake(initialized=seen.after is not None,
                     seconds=seconds if seen.after is None else seen.after,
                     timed_out=end.stop_requested == StopRequest.deadline,
                     ended="" if end.stop_requested is not None else _ended(end.ending),
                     stderr_tail=tail, signals=supervision.signals, survivors=supervision.survivors,
                     strays=supervision.strays, strays_survived=supervision.strays_survived)


def _ended(ending: Ending) -> str:
    match ending:
        case Exited(status):
            return f"exited {status}"
        case Signaled(number):
            return f"was ended by signal {number}"
        case Vanished():
            return "vanished"
    return "ended"


def _last_line(path: Path) -> str:
    try:
        text = path.read_bytes()[-4096:].decode("utf-8", "replace")
    except OSError:
        return ""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1][:STDERR_TAIL] if lines else ""


class ProbeTools:
    def _refuse(self, request: object) -> Result[Any, ToolRefusal]:
        return Failure(refuse(RefusalKind.task_token_refused, NO_DISPATCH))

    get_dispatch = ack_dispatch = complete_dispatch = reply_dispatch = _refuse


def marker_path(ledger: str | Path, token: str) -> Path:
    return Path(ledger).parent / probe_marker_name(token)


def serve_probe(ledger: str, token: str, reader: IO[bytes], writer: IO[bytes], version: str) -> None:
    marker = marker_path(ledger, token)

    def mark() -> None:
        try:
            private_files.write_new_file(marker, b"")
        except OSError as error:
            log.warning("doctor's probe: the handshake's marker could not be written: %s", error.strerror)

    log.info("doctor's probe: serving the handshake only")
    serve(reader, writer, McpServer(ProbeTools(), version=version, on_initialized=mark))
