"""Where a secret comes into a process it is held for the log lines to redact: the agent's token as
its file is read, the credentials Launchpad answers, the stand-in's secrets in ``bin/connect
standin``; and the lines ``run`` prints, its errors and the note of writes it dropped, in the chosen
format."""

from __future__ import annotations

import json
import logging
import os
import secrets
import signal
import subprocess
import sys
import threading
import time
from functools import partial
from pathlib import Path

import pytest
import urllib3

from shell import log_format, process_secrets
from shell.basecamp.standin.server import StandIn
from shell.cli import seam
from shell.errors import EXIT_CONFIG
from shell.state.config import read_token_file
from tests.support.launchpad import obtain

REPOSITORY = Path(__file__).resolve().parents[2]


def shown(text: str) -> str:
    """``text`` as the text format writes it in a log line."""
    return log_format.TextFormatter().format(logging.LogRecord("connector.test", logging.WARNING, __file__, 1,
                                                               text, (), None))


def test_the_agents_token_is_held_once_its_file_is_read(tmp_path: Path) -> None:
    token = secrets.token_urlsafe(24)
    token_file = tmp_path / "token"
    token_file.write_text(token + "\n")
    token_file.chmod(0o600)
    assert read_token_file(token_file) == token
    assert token not in shown(f"the token {token}")


def test_the_credentials_launchpad_answers_are_held() -> None:
    with StandIn(world="demo") as standin:
        credentials = obtain(standin)
    for secret in (credentials.access_token, credentials.refresh_token, credentials.client_secret):
        assert secret not in shown(f"answered {secret}")


def test_a_line_run_prints_holds_no_secret_in_the_text_format() -> None:
    token = secrets.token_urlsafe(32)
    with process_secrets.holding(token):
        assert log_format.line(f"seen {token}") == "seen [redacted]"


def test_the_standin_command_logs_no_secret_of_its_own(tmp_path: Path) -> None:
    process = subprocess.Popen(
        [str(REPOSITORY / "bin" / "connect"), "-v", "standin", "--json"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert process.stdout is not None
        first = json.loads(process.stdout.readline())
        for secret in (first["control_secret"], first["token"]):  # a path holding it is logged with -v
            answer = urllib3.request("GET", f"{first['base_url']}/{secret}", headers={"User-Agent": "t (t@e.com)"})
            assert answer.status == 401  # no token given
    finally:
        time.sleep(0.3)
        process.send_signal(signal.SIGTERM)
        _, err = process.communicate(timeout=30)
    assert "GET /[redacted] -> 401" in err, err[-2000:]
    assert first["control_secret"] not in err
    assert first["token"] not in err


def _connect(*argv: str, code: str | None = None) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ, "PYTHONPATH": str(REPOSITORY)}
    command = [sys.executable, "-c", code] if code is not None else [str(REPOSITORY / "bin" / "connect"), *argv]
    return subprocess.run(command, capture_output=True, text=True, env=environment, timeout=60, check=False)


def test_an_error_of_a_json_run_is_one_object_on_stderr(tmp_path: Path) -> None:
    done = _connect("run", "--state-dir", str(tmp_path / "nowhere"), "--log-format", "json")
    assert done.returncode == EXIT_CONFIG
    [said] = [json.loads(line) for line in done.stderr.splitlines()]
    assert said["level"] == "error"
    assert said["message"].startswith("error: ")


def test_with_json_an_uncaught_exception_and_a_warning_are_objects_too() -> None:
    code = ("import warnings\nfrom shell import log_format\nlog_format.configure(False, 'json')\n"
            "warnings.warn('careful')\nraise ValueError('a bug')\n")
    done = _connect(code=code)
    assert done.returncode == 1
    said = [json.loads(line) for line in done.stderr.splitlines()]
    assert [shown["level"] for shown in said] == ["warning", "critical"], done.stderr
    assert "careful" in said[0]["message"]
    assert "ValueError: a bug" in said[1]["exception"]



def test_a_json_runs_note_of_writes_it_dropped_is_an_object_too(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(log_format, "_CHOSEN", [log_format.JSON])
    read_end, write_end = os.pipe()
    spool = seam._Spool(write_end)
    line = b"x" * 1023 + b"\n"
    for _ in range(seam.SPOOL_BYTES // len(line) + 100):  # nobody reads: past the bound, writes are dropped
        spool.write(line)
    taken: list[bytes] = []
    reader = threading.Thread(target=lambda: taken.extend(iter(partial(os.read, read_end, 1 << 16), b"")),
                              daemon=True)
    reader.start()
    spool.drain(time.monotonic() + 30)
    spool.write(b"last\n")
    spool.drain(time.monotonic() + 30)
    os.close(write_end)
    reader.join(timeout=30)
    lines = b"".join(taken).decode().splitlines()
    [note] = [said for said in lines if "writes dropped here" in said]
    assert json.loads(note)["level"] == "warning"
    assert lines[-1] == "last"
