"""``doctor --deep``: the worker command spawned as the dispatcher spawns it, until its MCP
server (``bin/connect mcp``, as the session config names it) has completed the handshake.

Rules:
1. One home: ``shell.worker.spawn`` starts it and ``shell.worker.supervision`` ends it; only the
   token differs, a probe token (``core.task_token.PROBE_PREFIX``) that grants nothing
   (``shell.worker.probe``).
2. It runs in a scratch owner-only directory, removed after, never a route's.
3. The handshake is seen when the probe's marker appears beside the ledger; the worker is then
   stopped. A worker that ends first, or time running out, is a handshake not seen; the worker's
   last stderr line says why, when it said.
4. The probe never reaches the model: a stream-json worker gets no message, so it connects its
   servers and asks nothing; a command taking its prompt in argv is told to stop."""

from __future__ import annotations

import secrets
import tempfile
from datetime import timedelta
from pathlib import Path

from core.doctor import Handshake
from core.task_token import PROBE_PREFIX
from core.worker_stream import Ending, Exited, Signaled, StopRequest, Vanished
from shell.clock import Clock
from shell.worker.command import WorkerCommand
from shell.worker.probe import marker_path
from shell.worker.sessions import SessionSetupError, remove_session
from shell.worker.spawn import SpawnFailed, spawn
from shell.worker.supervision import supervise

PROMPT = (
    "bin/connect doctor is checking that you start with the Basecamp connector's MCP server. "
    "There is no dispatch and nothing to do: stop now."
)
ATTEMPT = "doctor_probe"
GRACE_SECONDS = 2.0
POLL_SECONDS = 0.05
STDERR_TAIL = 300


class _Seen:
    """The supervision's stop signal: set once the probe's marker exists (rule 3)."""

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
    """Spawn the worker with a probe token and wait for its MCP handshake (rules 1-3)."""
    token = PROBE_PREFIX + secrets.token_hex(16)
    marker = marker_path(ledger, token)
    with tempfile.TemporaryDirectory(prefix="connector-doctor-") as scratch:
        work = Path(scratch) / "work"
        work.mkdir()
        try:
            started = spawn(
                command, attempt_id=ATTEMPT, prompt=PROMPT, work_dir=work,
                private_dir=Path(scratch) / "sessions", ledger_path=ledger, token=token, agent_id=agent_id,
                send_prompt=False,
            )  # fmt: skip
        except SessionSetupError as error:
            return Handshake(False, 0.0, spawn_failed=str(error))
        if isinstance(started, SpawnFailed):
            return Handshake(False, 0.0, spawn_failed=started.detail)
        seen = _Seen(marker, clock)
        try:
            supervision = supervise(
                started, deadline_at=clock.now() + timedelta(seconds=seconds), stop_event=seen, clock=clock,
                still_running_every=seconds + 1, grace_seconds=GRACE_SECONDS, poll_seconds=POLL_SECONDS,
            )  # fmt: skip
            seen.is_set()  # it may have completed the handshake just before it ended by itself
            tail = _last_line(started.stderr)
        finally:
            marker.unlink(missing_ok=True)
            remove_session(started.session_dir)
    end = supervision.end
    return Handshake(
        initialized=seen.after is not None,
        seconds=seconds if seen.after is None else seen.after,
        timed_out=end.stop_requested == StopRequest.deadline,
        ended="" if end.stop_requested is not None else _ended(end.ending),
        stderr_tail=tail,
        signals=supervision.signals,
        survivors=supervision.survivors,
    )


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
