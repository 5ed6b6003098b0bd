"""``run --metrics-file``: the file node_exporter's textfile collector reads, rewritten whole; a
directory it could never be written in refused before the start (one line, exit 3); a write that
fails later warned of once, never stopping the connector. As a real process against the stand-in,
and the writer on real files."""

from __future__ import annotations

import logging
import os
import re
import shutil
import signal
import stat
import subprocess
import time
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from core.heartbeats import STALL_AFTER
from core.metrics import ProcessFigures
from shell.basecamp.standin.server import StandIn
from shell.clock import FakeClock
from shell.errors import EXIT_CONFIG
from shell.metrics import MetricsFile, check_metrics_path, kept_in, pair_labels
from tests.status.test_status_ledger import indeterminate, intent_of
from tests.support.configured import POLL_SECONDS, REPOSITORY, configure_connector
from tests.support.disks import mounted_tmpfs, remount
from tests.support.ledger_world import LedgerWorld

CONNECT = str(REPOSITORY / "bin" / "connect")


def values(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    found = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            labels = {key: value for key, value in sample.labels.items() if key not in ("account", "agent")}
            found[sample.name.removeprefix("basecamp_connector_"), tuple(sorted(labels.items()))] = sample.value
    return found


def test_the_file_is_replaced_whole_readable_by_the_collector_and_its_stop_says_it_no_longer_runs(
    tmp_path: Path,
) -> None:
    path = tmp_path / "connector.prom"
    written = MetricsFile(path, lambda running: f"# TYPE x gauge\nx {int(running)}\n")
    written.start()
    deadline = time.monotonic() + 10
    while not path.exists() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert path.read_text() == "# TYPE x gauge\nx 1\n"
    written.stop()
    assert path.read_text() == "# TYPE x gauge\nx 0\n"
    assert stat.S_IMODE(path.stat().st_mode) == 0o644
    assert sorted(p.name for p in tmp_path.iterdir()) == ["connector.prom"]  # no temporary file left


def test_a_write_that_fails_is_warned_of_once_never_raised_and_said_again_once_it_works(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    directory = tmp_path / "textfile"
    directory.mkdir()
    written = MetricsFile(directory / "connector.prom", lambda running: "x 1\n")
    written.write(running=True)
    shutil.rmtree(directory)
    with caplog.at_level(logging.WARNING, logger="connector.run"):
        written.write(running=True)
        written.write(running=True)
        assert [r.getMessage() for r in caplog.records if "could not be written" in r.getMessage()] == [
            f"metrics: {directory / 'connector.prom'} could not be written (No such file or directory); the "
            "connector goes on, and says so once it is written again"
        ]
        directory.mkdir()
        written.write(running=True)
    assert caplog.records[-1].getMessage() == f"metrics: {directory / 'connector.prom'} is written again"
    assert (directory / "connector.prom").read_text() == "x 1\n"


def test_a_directory_missing_not_a_directory_or_read_only_is_refused_before_the_start(tmp_path: Path) -> None:
    for path, said in ((tmp_path / "missing" / "c.prom", "does not exist"),
                       (tmp_path / "c.prom" / "x.prom", "is not a directory"),
                       (tmp_path, "is a directory")):  # fmt: skip
        (tmp_path / "c.prom").touch()
        with pytest.raises(Exception, match=said) as refused:
            check_metrics_path(path)
        assert getattr(refused.value, "exit_code", None) == EXIT_CONFIG
    with mounted_tmpfs(tmp_path / "disk") as disk:
        check_metrics_path(disk / "c.prom")
        assert list(disk.iterdir()) == []  # its probe is gone
        remount(disk, "ro")
        with pytest.raises(Exception, match="is not writable") as refused:
            check_metrics_path(disk / "c.prom")
        assert getattr(refused.value, "exit_code", None) == EXIT_CONFIG


def test_the_file_shows_an_indeterminate_intent_the_oldest_pending_age_and_a_stale_loop(
    world: LedgerWorld, clock: FakeClock, tmp_path: Path
) -> None:
    world.request(1)
    world.request(2)
    indeterminate(world, intent_of(world, 2, "guard_ack"))
    clock.advance(11 * 60)
    now = clock.now()
    loops = {"intake": now, "live": now - STALL_AFTER - timedelta(seconds=1)}
    path = tmp_path / "connector.prom"
    with kept_in(path, world.ledger.path, pair_labels(1, 2), clock, loops=lambda: loops,
                 process=lambda: ProcessFigures({200: 3, 429: 1}, 4, 47, 10.0, 0.0)):  # fmt: skip
        deadline = time.monotonic() + 10
        while not path.exists() and time.monotonic() < deadline:
            time.sleep(0.01)
        found = values(path.read_text())
    assert found["outbox_indeterminate_intents", ()] == 1
    assert found["outbox_oldest_pending_age_seconds", (("kind", "guard_ack"),)] == 11 * 60 - 30
    assert (found["loop_turning", (("loop", "live"),)], found["loop_turning", (("loop", "intake"),)]) == (0, 1)
    assert found["basecamp_answers_total", (("status", "429"),)] == 1
    assert found["running", ()] == 1
    assert values(path.read_text())["running", ()] == 0


@pytest.fixture
def standin() -> Iterator[StandIn]:
    with StandIn(world="demo") as server:
        yield server


def _run(state: Path, metrics: Path, *more: str) -> subprocess.Popen[str]:
    environment = {key: value for key, value in os.environ.items() if key != "CONNECTOR_PAUSE_AT"}
    return subprocess.Popen(
        [CONNECT, "run", "--state-dir", str(state), "--poll-seconds", str(POLL_SECONDS), "--metrics-file",
         str(metrics), *more], env=environment, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip


@pytest.mark.slow
def test_a_running_connector_keeps_the_file_with_basecamps_answers_and_its_loops(
    standin: StandIn, tmp_path: Path
) -> None:
    state = configure_connector(standin, tmp_path, worker=("true",))
    metrics = tmp_path / "textfile" / "connector.prom"
    metrics.parent.mkdir()
    process = _run(state, metrics)
    try:
        assert process.stdout is not None
        assert process.stdout.readline().startswith("running ")
        deadline = time.monotonic() + 30
        while not metrics.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        text = metrics.read_text()
        found = values(text)
    finally:
        process.send_signal(signal.SIGTERM)
        _, err = process.communicate(timeout=60)
    assert process.returncode == 0, err
    assert found["running", ()] == 1
    assert found["basecamp_answers_total", (("status", "200"),)] >= 1  # who the token is, the feed
    assert 0 < found["rate_budget_used_ratio", ()] <= 1
    assert found["outbox_indeterminate_intents", ()] == 0
    last = values(metrics.read_text())
    assert last["running", ()] == 0  # written once more at the stop
    assert {labels for name, labels in last if name == "loop_turning"} >= {(("loop", "intake"),), (("loop", "outbox"),)}
    assert set(re.findall(r"^# TYPE (\S+)", text, re.MULTILINE)) == documented_metrics()


def documented_metrics() -> set[str]:
    """The metric names the README's "Metrics and alerts" names (its table and its alert rules)."""
    readme = (REPOSITORY / "README.md").read_text()
    section = readme.split("### Metrics and alerts\n", 1)[1].split("\n### ", 1)[0]
    return set(re.findall(r"\bbasecamp_connector_[a-z_]+", section))


@pytest.mark.slow
def test_a_metrics_file_in_a_missing_directory_is_one_line_and_exit_3_before_anything_is_asked(
    standin: StandIn, tmp_path: Path
) -> None:
    state = configure_connector(standin, tmp_path, worker=("true",))
    asked = len(standin.requests())
    process = _run(state, tmp_path / "nowhere" / "connector.prom")
    try:
        out, err = process.communicate(timeout=30)
    except subprocess.TimeoutExpired:  # it started (a mutant of the check): stopped, never left running
        process.kill()
        process.communicate()
        raise
    assert (process.returncode, out) == (EXIT_CONFIG, "")
    assert err.splitlines() == [f"error: --metrics-file {tmp_path / 'nowhere' / 'connector.prom'}: its directory "
                                f"{tmp_path / 'nowhere'} does not exist: not started"]
    assert len(standin.requests()) == asked  # Basecamp was not asked who the token is


@pytest.mark.slow
def test_a_shadow_runs_file_is_labelled_apart_from_the_connectors(standin: StandIn, tmp_path: Path) -> None:
    state = configure_connector(standin, tmp_path, worker=("true",))
    metrics = tmp_path / "shadow.prom"
    process = _run(state, metrics, "--shadow")
    try:
        assert process.stdout is not None
        assert process.stdout.readline().startswith("running ")
    finally:
        process.send_signal(signal.SIGTERM)
        _, err = process.communicate(timeout=60)
    assert process.returncode == 0, err
    (running,) = [s for f in text_string_to_metric_families(metrics.read_text()) for s in f.samples
                  if s.name == "basecamp_connector_running"]  # fmt: skip
    assert running.labels == {"account": str(standin.world.account_id), "agent": str(standin.world.agent.id),
                              "shadow": "true"}
