"""`bin/connect run` with bad input, as a real process: one clear line on stderr, starting
``error:``, and a documented non-zero exit; nothing started, nothing read from the feed,
nothing posted.

The cases: no configuration; a configuration that cannot be read (a directory where the file
should be -- these tests may run as root, whom ``chmod 000`` does not stop, so the mode case
runs only for another user); one that is not JSON; one missing a field; a token that acts as
someone other than the configured agent; a token Basecamp refuses; a Basecamp that cannot be
reached to ask; a ledger written by a newer program, which is left exactly as it was.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

import pytest

from shell.basecamp.standin.server import StandIn
from shell.cli import run as run_command
from shell.cli.main import main as connect_main
from shell.errors import EXIT_CONFIG, EXIT_UNAVAILABLE
from shell.ledger.connection import SCHEMA_VERSION, LedgerError, open_ledger
from shell.outbox import OutboxLedgerError
from tests.support.configured import configure_connector

pytestmark = pytest.mark.slow
REPOSITORY = Path(__file__).resolve().parents[2]
CONNECT = str(REPOSITORY / "bin" / "connect")
REFUSAL_SECONDS = 20  # a refusal takes well under a second; a connector that started runs on


@dataclass(frozen=True, slots=True)
class Ran:
    code: int
    out: str
    err: str

    @property
    def line(self) -> str:
        """The one line on stderr (asserting that there is exactly one, and that it is an error)."""
        lines = self.err.splitlines()
        assert len(lines) == 1, f"one line on stderr, not {lines!r}"
        assert lines[0].startswith("error: "), lines[0]
        return lines[0]


def asked(standin: StandIn) -> list[tuple[str, str]]:
    """What has been asked of the stand-in so far (``setup``'s own check included)."""
    return [(request.method, request.path) for request in standin.requests()]


def run(state: Path | None, environ: dict[str, str] | None = None) -> Ran:
    environment = {key: value for key, value in os.environ.items() if key != "CONNECTOR_PAUSE_AT"}
    environment.update(environ or {})
    where = [] if state is None else ["--state-dir", str(state)]
    try:
        finished = subprocess.run(
            [CONNECT, "run", *where, "--poll-seconds", "0.2"],
            env=environment,
            capture_output=True,
            text=True,
            timeout=REFUSAL_SECONDS,
            check=False,
        )
    except subprocess.TimeoutExpired:  # subprocess.run has killed it
        pytest.fail(f"bin/connect run was still running after {REFUSAL_SECONDS} s: it started")
    return Ran(finished.returncode, finished.stdout, finished.stderr)


@pytest.fixture
def standin() -> Iterator[StandIn]:
    with StandIn(world="demo") as server:
        yield server


def configure(standin: StandIn, tmp_path: Path, *, base_url: str | None = None) -> Path:
    """A configuration ``setup`` wrote and checked: the agent's own token, one route."""
    return configure_connector(standin, tmp_path, worker=("true",), base_url=base_url)


def rewrite(path: Path, text: str) -> None:
    path.write_text(text)  # the file keeps its owner-only mode
    assert path.stat().st_mode & 0o077 == 0


def test_no_configuration_is_one_line_and_exit_3(tmp_path: Path) -> None:
    for state in (tmp_path / "missing", tmp_path):
        ran = run(state)
        assert ran.code == EXIT_CONFIG
        assert ran.line == f"error: no configuration at {state / 'config.json'}: run bin/connect setup"
        assert ran.out == ""
    ran = run(None, {"XDG_STATE_HOME": str(tmp_path / "xdg")})  # found from the ids: none to find
    assert ran.code == EXIT_CONFIG
    root = tmp_path / "xdg" / "basecamp-connector"
    assert ran.line == (f"error: no configuration under {root}: run bin/connect setup (an existing one is "
                        "named by --state-dir, or by --account and --agent)")


def test_a_configuration_that_cannot_be_read_is_one_line_and_exit_3(standin: StandIn, tmp_path: Path) -> None:
    state = configure(standin, tmp_path)
    config = state / "config.json"
    config.unlink()
    config.mkdir(mode=0o700)  # unreadable as a file, whoever runs the test
    before = asked(standin)
    ran = run(state)
    assert ran.code == EXIT_CONFIG
    assert ran.line == f"error: configuration file {config} is not a regular file"
    assert asked(standin) == before, "nothing was asked of Basecamp"


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads a file whatever its mode")
def test_a_configuration_without_read_permission_is_one_line_and_exit_3(
    standin: StandIn, tmp_path: Path
) -> None:
    state = configure(standin, tmp_path)
    config = state / "config.json"
    config.chmod(0o000)
    ran = run(state)
    assert ran.code == EXIT_CONFIG
    assert ran.line == f"error: cannot read {config}: Permission denied"


def test_a_configuration_that_is_not_json_is_one_line_and_exit_3(standin: StandIn, tmp_path: Path) -> None:
    state = configure(standin, tmp_path)
    rewrite(state / "config.json", '{"account_id": 5550001,')
    ran = run(state)
    assert ran.code == EXIT_CONFIG
    assert ran.line.startswith(f"error: {state / 'config.json'}: not valid JSON: ")


@pytest.mark.parametrize(("field", "says"), [("agent_id", "--agent ID"), ("token_file", "--token-file")])
def test_a_configuration_missing_a_field_is_one_line_naming_it_and_exit_3(
    standin: StandIn, tmp_path: Path, field: str, says: str
) -> None:
    state = configure(standin, tmp_path)
    config = state / "config.json"
    written = json.loads(config.read_text())
    del written[field]
    rewrite(config, json.dumps(written))
    before = asked(standin)
    ran = run(state)
    assert ran.code == EXIT_CONFIG
    assert ran.line.startswith(f"error: {config}: {field}: missing")
    assert says in ran.line
    assert asked(standin) == before


def test_a_token_acting_as_someone_else_is_refused_before_anything_starts(
    standin: StandIn, tmp_path: Path
) -> None:
    state = configure(standin, tmp_path)
    someone = standin.world.people[0]
    rewrite(tmp_path / "token", someone.token + "\n")
    before = asked(standin)
    ran = run(state)
    assert ran.code == EXIT_CONFIG
    agent = standin.world.agent.id
    assert ran.line == (
        f"error: the token in {tmp_path / 'token'} acts as person {someone.id} ({someone.name}), "
        f"not the configured agent {agent}: not started (give the agent's own token, or run setup "
        "for that person)"
    )
    assert someone.token not in ran.err
    assert ran.out == "", "it never said it was running"
    profile = ("GET", f"/{standin.world.account_id}/my/profile.json")
    assert asked(standin) == [*before, profile], "the one question; no feed read, no post"


def test_a_token_basecamp_refuses_is_one_line_and_exit_3(standin: StandIn, tmp_path: Path) -> None:
    state = configure(standin, tmp_path)
    rewrite(tmp_path / "token", "not-a-token-anyone-has\n")
    ran = run(state)
    assert ran.code == EXIT_CONFIG
    assert ran.line == f"error: Basecamp refused the token in {tmp_path / 'token'} (401): not started"
    assert "not-a-token-anyone-has" not in ran.err


def test_a_basecamp_that_cannot_be_asked_is_one_line_and_exit_6(standin: StandIn, tmp_path: Path) -> None:
    closed = StandIn(world="demo")  # a port that was bound, then freed: nothing listens there
    nowhere = closed.base_url
    closed.stop()
    state = configure(standin, tmp_path, base_url=nowhere)
    ran = run(state)
    assert ran.code == EXIT_UNAVAILABLE
    assert ran.line.startswith(
        f"error: could not ask {nowhere} who the token in {tmp_path / 'token'} acts as ("
    )
    assert ran.line.endswith("): not started")


def test_a_ledger_from_a_newer_program_is_refused_and_left_as_it_was(
    standin: StandIn, tmp_path: Path
) -> None:
    state = configure(standin, tmp_path)
    ledger_path = state / "ledger.sqlite3"
    with open_ledger(ledger_path) as ledger, ledger.write() as connection:
        connection.execute(
            "INSERT INTO schema_migrations (version, applied_at) VALUES (?, 'later')", (SCHEMA_VERSION + 1,)
        )
    before = ledger_path.read_bytes(), ledger_path.stat().st_mtime_ns, sorted(os.listdir(state))
    questions = asked(standin)
    ran = run(state)
    assert ran.code == EXIT_CONFIG
    assert ran.line == (
        f"error: {ledger_path}: the ledger is at schema {SCHEMA_VERSION + 1}, newer than this "
        f"program's {SCHEMA_VERSION}; run the newer program"
    )
    after = ledger_path.read_bytes(), ledger_path.stat().st_mtime_ns, sorted(os.listdir(state))
    assert after[:2] == before[:2], "the ledger file is unchanged"
    assert [name for name in after[2] if name.startswith("ledger")] == [
        name for name in before[2] if name.startswith("ledger")
    ], "no journal beside it either"
    with sqlite3.connect(f"file:{ledger_path}?mode=ro", uri=True) as connection:
        assert connection.execute("SELECT max(version) FROM schema_migrations").fetchone() == (
            SCHEMA_VERSION + 1,
        )
    assert asked(standin) == questions, "refused before anything was asked of Basecamp"


def test_a_worker_program_that_is_not_there_is_one_line_before_anything_starts(
    standin: StandIn, tmp_path: Path
) -> None:
    state = configure_connector(standin, tmp_path, worker=("no-such-worker-program", "{prompt}"))
    before = asked(standin)
    ran = run(state)
    assert ran.code == EXIT_CONFIG
    assert ran.line == (
        "error: worker: the program 'no-such-worker-program' is not found on PATH; install it, "
        "or name another with setup --worker-command: not started"
    )
    assert asked(standin) == before, "nothing asked of Basecamp, nothing posted"
    assert not (state / "ledger.sqlite3").exists()


def test_run_refuses_a_feed_interval_below_its_floor_without_the_unsafe_option(
    standin: StandIn, tmp_path: Path
) -> None:
    state = configure(standin, tmp_path)
    assert connect_main(["setup", "--state-dir", str(state), "--no-unsafe-test-timings", "--no-check"]) == 0
    ran = run(state)  # --poll-seconds 0.2
    assert ran.code == EXIT_CONFIG
    assert ran.line.startswith("error: --poll-seconds: at least 1s (the reference's floor), not 200ms")


def test_a_ledger_damaged_in_the_middle_is_one_line_and_exit_3(standin: StandIn, tmp_path: Path) -> None:
    from tests.ledger.test_ledger_bad_disk import damage_the_middle

    state = configure(standin, tmp_path)
    ledger_path = state / "ledger.sqlite3"
    damage_the_middle(ledger_path)
    questions = asked(standin)
    ran = run(state)
    assert ran.code == EXIT_CONFIG
    assert ran.line.startswith(f"error: {ledger_path}: the ledger is damaged (")
    assert asked(standin) == questions, "refused before anything was asked of Basecamp"


def test_a_ledger_that_fails_while_the_start_settles_is_one_line_and_exit_3(
    standin: StandIn, tmp_path: Path
) -> None:
    state = configure(standin, tmp_path)
    ledger_path = state / "ledger.sqlite3"
    with open_ledger(ledger_path) as ledger, ledger.write() as connection:
        connection.execute("DROP TABLE outbox")  # consistent to quick_check, fatal to the start
    ran = run(state)
    assert ran.code == EXIT_CONFIG
    assert ran.line.startswith(f"error: {ledger_path}: ")
    assert "outbox" in ran.line
    assert ran.out == "", "it never said it was running"


class _StartFailsInTheOutbox:
    """A connector whose start fails where the outbox settles: what ``_serve`` must turn into
    the one-line ledger error (a broken table now fails at open, before the start)."""

    stopped_in = None

    def start(self, within: object, requested: object) -> object:
        raise OutboxLedgerError("the ledger could not claim: disk I/O error")

    def run(self, requested: object, within: object) -> None:
        raise AssertionError("a start that failed never runs")


def test_an_outbox_failure_during_the_start_is_the_ledger_error_naming_the_outbox(tmp_path: Path) -> None:
    ledger_path = tmp_path / "ledger.sqlite3"
    with pytest.raises(LedgerError) as raised:
        run_command._serve(_StartFailsInTheOutbox(), ledger_path, timedelta(seconds=1), "x")  # type: ignore[arg-type]
    assert str(raised.value) == (
        f"{ledger_path}: the start could not settle the outbox: the ledger could not claim: disk I/O error"
    )
