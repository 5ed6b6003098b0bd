"""The whole-connector simulation in CI: a few hundred seeds, clean; a replay is the same run;
a bug injected is found and replays at the same step (``bin/simulate`` runs the nightly size).

``SIM_CI_SEEDS`` (default 600: every required path is reached and every mutant of
``bin/simulate --mutants`` found within them, the slowest at 515) seeds of 200 steps, in
chunks of ``CHUNK`` a test. The chunks
fill this process's ``COVERAGE`` and the coverage test reads it: under pytest-xdist they are
one group (``ONE_PROCESS``), run by one worker, or the coverage would be a part's.
"""

from __future__ import annotations

import logging
import os
import shutil
import threading
from collections import Counter
from collections.abc import Callable, Iterator

import pytest

from shell import connector
from shell.connector import StartParts, StartReport, settle_previous
from tests.proofs.anchors import SourceTree, StaleCatalogue
from tests.sim.whole.checks import CHECKS
from tests.sim.whole.main import REQUIRED, main
from tests.sim.whole.mutants import OWN, REPOSITORY
from tests.sim.whole.run import Run, Violation

SEEDS = int(os.environ.get("SIM_CI_SEEDS", "600"))
CHUNK = 25
COVERAGE: Counter[str] = Counter()
ONE_PROCESS = pytest.mark.xdist_group("whole-simulation-coverage")


@pytest.fixture(autouse=True)
def _quiet() -> Iterator[None]:
    logging.disable(logging.WARNING)  # errors reach the run: tests.sim.whole.connector's Failures
    yield
    logging.disable(logging.NOTSET)


@pytest.mark.slow
@ONE_PROCESS
@pytest.mark.timeout(600)
@pytest.mark.parametrize("first", range(0, SEEDS, CHUNK))
def test_seeds_run_clean(first: int) -> None:
    for seed in range(first, min(first + CHUNK, SEEDS)):
        Run(seed, 200, COVERAGE).play()  # a Violation names its seed, step and check


@pytest.mark.slow
@ONE_PROCESS
def test_every_required_path_is_reached_by_the_ci_seeds() -> None:
    if sum(COVERAGE.values()) == 0:  # run alone: count the coverage now
        for seed in range(SEEDS):
            Run(seed, 200, COVERAGE).play()
    assert [path for path in REQUIRED if COVERAGE[path] == 0] == []


def test_a_seed_replays_the_same_history() -> None:
    first, second = Run(7, 120), Run(7, 120)
    first.play()
    second.play()
    assert first.history == second.history
    assert len(first.history) > 120


def _without_recovery(parts: StartParts, deadline: float, stop: threading.Event | None = None,
                      on_step: Callable[[str], None] = lambda step: None) -> StartReport:
    return settle_previous(StartParts(parts.outbox, parts.sessions, None), deadline, stop, on_step)


def test_a_bug_is_found_and_replays_at_the_same_step(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(connector, "settle_previous", _without_recovery)  # the bug: recovery skipped
    found = []
    for _ in range(2):
        for seed in range(40):
            try:
                Run(seed, 200).play()
            except Violation as violation:
                found.append((violation.seed, violation.step, violation.check))
                break
    assert len(found) == 2, "skipping recovery went unnoticed for 40 seeds"
    assert found[0] == found[1]
    assert found[0][2] in CHECKS


def test_the_command_line_ends_with_its_verdict(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--seeds", "2", "--steps", "40"]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "simulate: seeds=2 violations=0"


def test_a_runs_first_restart_opens_the_file_anew_and_a_later_one_keeps_no_dead_transaction() -> None:
    """``tests.sim.whole.run``'s survivor: the first restart is a new connection; a later one keeps the
    dead process's connection with what it had not committed rolled back, as SQLite does for a
    killed writer."""
    run = Run(3, 10)
    try:
        run._boot()
        dead = run.connector.ledger._connection
        run._restart()
        opened = run.connector.ledger._connection
        assert opened is not dead, "the first restart opens the file anew"
        opened.execute("BEGIN IMMEDIATE")
        opened.execute("CREATE TABLE written_by_the_dead_process (x)")  # never committed
        run._restart()
        kept = run.connector.ledger._connection
        assert kept is opened, "a later restart keeps SQLite's connection"
        assert not kept.in_transaction
        assert run.truth.violations == [], "the new connector started over it"
        with run.connector.ledger.read() as connection:
            names = {row[0] for row in connection.execute("SELECT name FROM sqlite_schema")}
        assert "written_by_the_dead_process" not in names
    finally:
        run.connector.close()
        run.keeper.close()
        shutil.rmtree(run.directory, ignore_errors=True)


def test_every_injected_bug_of_the_simulation_anchors_to_one_place() -> None:
    """``bin/simulate --mutants`` applies its own bugs through the catalogue's anchoring (the catalogued
    ones are held by test_every_catalogue_entry_anchors_to_one_place_in_the_tree); one that a refactor
    left without its text would stop that run at its first line."""
    tree = SourceTree(REPOSITORY)
    stale = []
    for mutation in OWN:
        for find, replace in mutation.changes:
            try:
                tree.locate(find, replace)
            except StaleCatalogue as error:
                stale.append(f"{mutation.rule}: {error}")
    assert stale == []
