"""`bin/connect run` as a real process against the stand-in: a mention in the feed becomes a
worker's answer, with the connector saying nothing of its own; SIGTERM stops it cleanly."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from shell.basecamp.standin.faults import Fault, FaultAction
from shell.basecamp.standin.server import StandIn
from shell.cli.main import main as connect
from shell.errors import EXIT_UNAVAILABLE
from shell.ledger.connection import open_ledger_read_only
from tests.support.child import wait_until
from tests.support.configured import POLL_SECONDS, configure_connector

pytestmark = pytest.mark.slow
REPOSITORY = Path(__file__).resolve().parents[2]


@pytest.fixture
def standin() -> Iterator[StandIn]:
    with StandIn(world="demo") as server:
        yield server


def configure(standin: StandIn, tmp_path: Path, *more: str) -> Path:
    return configure_connector(standin, tmp_path, *more)


def test_a_mention_is_answered_by_the_worker_and_sigterm_stops_the_connector(
    standin: StandIn, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = configure(standin, tmp_path)
    leftover = state / "sessions" / "att_0123456789abcdef01234567"  # a crashed run's session: it held a token
    leftover.parent.mkdir(mode=0o700)  # as the connector made it: owner-only, or it is refused
    leftover.mkdir(mode=0o700)
    (leftover / "mcp.json").write_text('{"mcpServers": {}}')
    environment = {key: value for key, value in os.environ.items() if key != "CONNECTOR_PAUSE_AT"}
    process = subprocess.Popen(
        [str(REPOSITORY / "bin" / "connect"), "run", "--state-dir", str(state), "--poll-seconds", str(POLL_SECONDS)],
        env=environment,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        assert process.stdout.readline().startswith("running account="), "it says it is running"
        assert not leftover.exists(), "the start removed what a previous process left"
        card = standin.world.projects[0].recording_ids[0]
        standin.mention(standin.world.people[0], card, "please take a look")
        agent = standin.world.agent.id
        wait_until(
            lambda: any(message["creator"]["id"] == agent for message in standin.messages("comment", card))
        )
        assert connect(["run", "--state-dir", str(state)]) == EXIT_UNAVAILABLE  # one per account and agent
        assert "a connector already serves account" in capsys.readouterr().err
    finally:
        process.send_signal(signal.SIGTERM)
        output, errors = process.communicate(timeout=90)
        print(output, errors[-4000:], sep="\n")
    assert process.returncode == 0
    replies = [m["content"] for m in standin.messages("comment", card) if m["creator"]["id"] == agent]
    assert len(replies) == 1
    assert replies[0].startswith("<div>Done with event")
    (asking,) = [m["id"] for m in standin.messages("comment", card) if m["creator"]["id"] != agent]
    acknowledgements = [b["content"] for b in standin.messages("boost", asking)]
    assert acknowledgements == ["on it"], "the worker's own, on the comment that asked; no guard"
    with open_ledger_read_only(state / "ledger.sqlite3") as ledger, ledger.read() as connection:
        assert connection.execute("SELECT kind, state FROM outbox").fetchall() == [
            ("guard_ack", "canceled"), ("worker_ack", "sent"), ("worker_reply", "sent"),  # the worker's words
        ]
        assert connection.execute("SELECT state FROM events").fetchall() == [("completed",)]


def test_sigterm_with_a_notice_in_flight_stops_within_its_bound_and_the_restart_adopts_it(
    standin: StandIn, tmp_path: Path
) -> None:
    state = configure(standin, tmp_path, "--reconcile-after", "1s")
    unrouted = standin.world.projects[1].recording_ids[0]
    path = f"/recordings/{unrouted}/comments"
    standin.add_fault(Fault(FaultAction.create_then_delay, method="POST", path_contains=path, delay=120))
    environment = {key: value for key, value in os.environ.items() if key != "CONNECTOR_PAUSE_AT"}
    command = [str(REPOSITORY / "bin" / "connect"), "run", "--state-dir", str(state), "--poll-seconds", str(POLL_SECONDS)]

    def start() -> subprocess.Popen[str]:
        process = subprocess.Popen(
            [*command, "--shutdown-seconds", "2"], env=environment,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        assert process.stdout is not None
        assert process.stdout.readline().startswith("running account=")
        return process

    process = start()
    try:
        standin.mention(standin.world.people[0], unrouted, "can you look at this?")
        wait_until(lambda: any(r.method == "POST" and path in r.path for r in standin.requests()))
    finally:
        process.send_signal(signal.SIGTERM)
        _, errors = process.communicate(timeout=20)  # the POST's answer is 120 s away
    assert process.returncode == 0, errors[-2000:]
    restarted = start()
    try:
        wait_until(lambda: _outbox_states(state) == [("holding_reply", "sent")], timeout=30)
    finally:
        restarted.send_signal(signal.SIGTERM)
        restarted.communicate(timeout=30)
    agent = standin.world.agent.id
    assert [m["id"] for m in standin.messages("comment", unrouted) if m["creator"]["id"] == agent] != []
    assert sum(1 for r in standin.requests() if r.method == "POST" and path in r.path) == 1, "adopted, not posted again"


def _outbox_states(state: Path) -> list[tuple[str, str]]:
    with open_ledger_read_only(state / "ledger.sqlite3") as ledger, ledger.read() as connection:
        return [tuple(row) for row in connection.execute("SELECT kind, state FROM outbox")]  # type: ignore[misc]


def test_a_shadow_runs_beside_the_connector_on_its_own_state_and_posts_nothing(
    standin: StandIn, tmp_path: Path
) -> None:
    state = configure(standin, tmp_path)
    environment = {key: value for key, value in os.environ.items() if key != "CONNECTOR_PAUSE_AT"}
    command = [str(REPOSITORY / "bin" / "connect"), "run", "--state-dir", str(state), "--poll-seconds", str(POLL_SECONDS)]
    processes = [
        subprocess.Popen([*command, *extra], env=environment, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for extra in ((), ("--shadow",))
    ]
    card = standin.world.projects[0].recording_ids[0]
    agent = standin.world.agent.id
    try:
        for process in processes:
            assert process.stdout is not None
            assert process.stdout.readline().startswith("running account="), "both run: two locks"
        standin.mention(standin.world.people[0], card, "please take a look")
        wait_until(lambda: any(m["creator"]["id"] == agent for m in standin.messages("comment", card)))
        wait_until(lambda: _states(state / "shadow" / "ledger.sqlite3") == [("admitted",)])
    finally:
        for process in processes:
            process.send_signal(signal.SIGTERM)
        for process in processes:
            process.communicate(timeout=60)
    assert [process.returncode for process in processes] == [0, 0]
    assert len([m for m in standin.messages("comment", card) if m["creator"]["id"] == agent]) == 1
    assert _states(state / "ledger.sqlite3") == [("completed",)]
    with open_ledger_read_only(state / "shadow" / "ledger.sqlite3") as ledger, ledger.read() as connection:
        assert connection.execute("SELECT COUNT(*) FROM tasks").fetchone() == (0,), "the shadow dispatches nothing"
        assert connection.execute("SELECT COUNT(*) FROM outbox").fetchone() == (0,), "and writes no notice"


def _states(ledger_path: Path) -> list[tuple[str]]:
    if not ledger_path.exists():
        return []
    with open_ledger_read_only(ledger_path) as ledger, ledger.read() as connection:
        return [tuple(row) for row in connection.execute("SELECT state FROM events")]  # type: ignore[misc]


def test_sigusr1_writes_every_threads_stack_and_the_connector_goes_on(standin: StandIn, tmp_path: Path) -> None:
    errors_path = tmp_path / "stderr.txt"
    process = _run_logging_to(configure(standin, tmp_path), errors_path)
    try:
        assert process.stdout is not None
        assert process.stdout.readline().startswith("running account=")
        wait_until(_dumps_naming("outbox.py", process, errors_path))  # asked again until the loops have started
        assert process.poll() is None, "the stack dump did not stop it"
    finally:
        process.send_signal(signal.SIGTERM)
        process.communicate(timeout=30)
    assert process.returncode == 0
    assert "Thread 0x" in errors_path.read_text()


def test_sigusr1_during_the_start_writes_the_stacks_and_the_start_goes_on(standin: StandIn, tmp_path: Path) -> None:
    state = configure(standin, tmp_path)
    standin.add_fault(Fault(FaultAction.hang, method="GET", path_contains="my/profile.json", delay=3))
    asked_before = _profile_reads(standin)  # setup asked too
    errors_path = tmp_path / "stderr.txt"
    process = _run_logging_to(state, errors_path)
    try:
        wait_until(lambda: _profile_reads(standin) > asked_before)  # the start is in its identity check
        wait_until(_dumps_naming("check_identity", process, errors_path), timeout=2)  # its answer hangs 3 s
        assert process.stdout is not None
        assert process.stdout.readline().startswith("running account="), "the start went on"
    finally:
        process.send_signal(signal.SIGTERM)
        process.communicate(timeout=30)
    assert process.returncode == 0


def _run_logging_to(state: Path, errors_path: Path) -> subprocess.Popen[str]:
    """``bin/connect run`` as a real process, its stderr in ``errors_path``."""
    environment = {key: value for key, value in os.environ.items() if key != "CONNECTOR_PAUSE_AT"}
    command = [str(REPOSITORY / "bin" / "connect"), "run", "--state-dir", str(state), "--poll-seconds", "0.5"]
    with errors_path.open("w") as errors:
        return subprocess.Popen(command, env=environment, stdout=subprocess.PIPE, stderr=errors, text=True)


def _dumps_naming(text: str, process: subprocess.Popen[str], errors_path: Path) -> Callable[[], bool]:
    """A condition that sends SIGUSR1 and holds once the stacks written name ``text``."""

    def named() -> bool:
        assert process.poll() is None, f"SIGUSR1 ended it ({process.returncode})"
        process.send_signal(signal.SIGUSR1)
        time.sleep(0.2)
        return text in errors_path.read_text()

    return named


def _profile_reads(standin: StandIn) -> int:
    return sum(1 for request in standin.requests() if "my/profile.json" in request.path)
