"""``shell.log_format``'s formatters over real log records: no secret the process holds (the agent's
token, a task's token, the stand-in's control secret) in any line of either format, wherever the
record carries it; the text format as it always was otherwise; the ids a call site gives as fields;
and a task's token held while its worker runs."""

from __future__ import annotations

import io
import json
import logging
import secrets
import sys
import threading
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.log_lines import MIN_SECRET
from core.snapshots import StopReason
from shell import log_format, process_secrets
from shell.dispatcher import Dispatcher, DispatchOptions, WorkerProcess
from shell.ledger import tasks
from shell.ledger.connection import Ledger
from shell.worker.driver import SpawnFailed
from tests.support.ledger_world import PROJECT, LedgerWorld

URLSAFE = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
BASE64 = URLSAFE + "+/="
agent_tokens = st.one_of(  # the stand-in's (token_urlsafe(24)), or Basecamp's: base64, then -- and hex
    st.text(URLSAFE, min_size=32, max_size=32),
    st.builds(lambda head, tail: f"{head}--{tail}", st.text(BASE64, min_size=40, max_size=120),
              st.text("0123456789abcdef", min_size=40, max_size=40)),
)
task_tokens = st.text(URLSAFE, min_size=43, max_size=43)  # token_urlsafe(32)
control_secrets = st.text(URLSAFE, min_size=32, max_size=32)  # token_urlsafe(24)
FORMATTERS = (log_format.TextFormatter(), log_format.JsonFormatter())


def record(message: str, args: tuple[object, ...], extra: dict[str, object], failure: str | None = None,
           level: int = logging.WARNING) -> logging.LogRecord:
    """A record as ``logging.getLogger("connector.test").log(level, message, *args, extra=extra)``
    makes it, with ``failure`` the message of the exception being handled."""
    exc_info = None
    if failure is not None:
        try:
            raise RuntimeError(failure)
        except RuntimeError:
            exc_info = sys.exc_info()
    return logging.getLogger("connector.test").makeRecord(
        "connector.test", level, __file__, 1, message, args, exc_info, extra=extra)


@settings(max_examples=150, deadline=None)
@given(agent_tokens, task_tokens, control_secrets, st.text(max_size=20), st.data())
def test_no_secret_the_process_holds_is_in_any_line_of_either_format(
    agent_token: str, task_token: str, control_secret: str, words: str, data: st.DataObject
) -> None:
    held = (agent_token, task_token, control_secret)
    secret = data.draw(st.sampled_from(held))
    where = data.draw(st.sets(st.sampled_from(["message", "args", "extra", "exception"]), min_size=1))
    words = words.replace("%", "%%")
    message = f"{words} {secret} %s" if "message" in where else f"{words} %s"
    args = (f"Bearer {secret}" if "args" in where else "nothing",)
    extra = log_format.ids(attempt=f"att_{secret}", kind=secret) if "extra" in where else {}
    failure = f"the token {secret!r} was refused" if "exception" in where else None
    with process_secrets.holding(agent_token), process_secrets.holding(task_token), \
            process_secrets.holding(control_secret):
        lines = [formatter.format(record(message, args, extra, failure)) for formatter in FORMATTERS]
    for line in lines:
        assert not [found for found in held if found in line], line
    assert json.loads(lines[1])["level"] == "warning"


def test_a_secret_no_longer_held_is_no_longer_redacted() -> None:
    token = secrets.token_urlsafe(32)
    with process_secrets.holding(token):
        assert token not in log_format.TextFormatter().format(record(token, (), {}))
    assert token in log_format.TextFormatter().format(record(token, (), {}))


@given(st.text(max_size=60).filter(lambda text: "%" not in text), st.integers())
def test_the_text_format_is_the_line_it_always_was(words: str, number: int) -> None:
    made = record(f"{words} %d", (number,), log_format.ids(event_id=number), failure=words or None)
    before = logging.Formatter("%(asctime)s %(name)s %(message)s")
    assert log_format.TextFormatter().format(made) == before.format(made)


def test_a_json_line_carries_the_ids_its_call_site_gave() -> None:
    made = record("dispatch task=%d attempt=%s", (3, "att_1"), log_format.ids(task=3, attempt="att_1", event_id=None))
    said = json.loads(log_format.JsonFormatter().format(made))
    assert said["message"] == "dispatch task=3 attempt=att_1"
    assert (said["task"], said["attempt"], said["logger"]) == (3, "att_1", "connector.test")
    assert "event_id" not in said, "an id not given is no field"


@pytest.fixture
def json_stderr() -> Iterator[io.StringIO]:
    """The root logger's lines in JSON, written to a buffer in place of stderr."""
    buffer = io.StringIO()
    handler = logging.StreamHandler(buffer)
    handler.setFormatter(log_format.JsonFormatter())
    root = logging.getLogger()
    level = root.level
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    try:
        yield buffer
    finally:
        root.removeHandler(handler)
        root.setLevel(level)


class TellingDriver:
    """A worker that finishes at once; its spawn logs its task's token, as a careless line might."""

    def __init__(self, seen: Callable[[str], None]) -> None:
        self.seen = seen

    def spawn(self, launch: tasks.Launch, work_dir: Path) -> WorkerProcess | SpawnFailed:
        self.seen(launch.token)
        logging.getLogger("connector.worker").warning("spawning with %s", launch.token)
        return SpawnFailed(launch.attempt_id, f"the config named {launch.token}")

    def supervise(self, started: WorkerProcess, deadline_at: datetime, stop: threading.Event,
                  on_tick: Callable[[], None]) -> StopReason | None:
        return StopReason.finished

    def release(self, started: WorkerProcess) -> None:
        pass

    def follow_up(self, started: WorkerProcess, event_ids: tuple[int, ...]) -> tuple[int, ...]:
        return ()


class NoRecovery:
    def end_recorded_group(self, pid: int, pgid: int, process_started: str) -> bool:
        return True


def test_a_task_token_is_in_no_log_line_while_its_worker_runs(
    world: LedgerWorld, ledger: Ledger, json_stderr: io.StringIO
) -> None:
    world.request(101, recording_id=101)
    tokens: list[str] = []
    running = Dispatcher(ledger, {PROJECT: Path("/srv/project")}, TellingDriver(tokens.append), NoRecovery(),
                         options=DispatchOptions(concurrency=1))
    assert len(running.tick()) == 1
    assert running.stop(timeout=10)
    said = json_stderr.getvalue()
    assert len(tokens) == 1
    assert len(tokens[0]) >= MIN_SECRET
    assert "spawning with [redacted]" in said
    assert "could not start its worker" in said
    assert tokens[0] not in said
    assert tokens[0] not in process_secrets.held(), "held while its worker ran, and no longer"
