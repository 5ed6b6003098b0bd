"""``bin/simulate``'s checks of the connector's own stop (``a-stop-settles-its-workers-and-sends-what-is-due``,
``tests.sim.whole.rules``) and of the guard by what it did (``tests.sim.whole.guards``): pinned seeds
whose worlds reach what they judge, clean on this code (``bin/simulate --mutants`` shows each check
finding its bugs)."""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Iterator

import pytest

from tests.sim.whole.run import Run

SEED_THAT_STOPS_A_WORKER = 0
"""A seed (of 200 steps) whose stop meets a worker its dispatcher supervises and notices to flush:
the first seed ``bin/simulate --mutants`` needs for the stop's two mutants."""

SEED_THAT_ABANDONS_A_GUARD_BEFORE_ITS_TASK = 119
"""The seed that found a task row made after a person abandoned its event's guard told ``fired``
(``task-rows-agree-with-their-guard`` at step 122): the guard went out uncertain before any task
carried the event, reconciliation left it indeterminate, a person abandoned it, then the task
launched. A change to the simulated world moves it: find the new one with ``bin/simulate``."""


@pytest.fixture(autouse=True)
def _quiet() -> Iterator[None]:
    logging.disable(logging.WARNING)
    yield
    logging.disable(logging.NOTSET)


def test_the_connectors_own_stop_settles_its_workers_and_sends_their_notices() -> None:
    coverage: Counter[str] = Counter()
    Run(SEED_THAT_STOPS_A_WORKER, 200, coverage).play()  # a Violation names the check and the step
    assert coverage["stop: settled the workers it supervised"] >= 1
    assert coverage["guard: sent once its delay passed"] >= 1


def test_a_task_made_after_its_guard_was_abandoned_is_never_told_the_guard_fired() -> None:
    coverage: Counter[str] = Counter()
    Run(SEED_THAT_ABANDONS_A_GUARD_BEFORE_ITS_TASK, 200, coverage).play()
    assert coverage["guard: told rows say it never went out (abandoned)"] >= 1
