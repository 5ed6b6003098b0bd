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

SEED_THAT_ABANDONS_A_GUARD_BEFORE_ITS_TASK = 435
"""The seed that found a task row made after a person abandoned its event's guard told ``fired``
(``task-rows-agree-with-their-guard``; seed 119 before the world's token outages moved it, now
435, the seed ``bin/simulate --mutants --only 'joining after'`` needs less one): the guard went out uncertain before any task
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


SEED_THAT_HOLDS_A_FIRED_GUARD = 268
"""The seed that found a hold canceling a guard whose claim had fired its rows (``task-rows-agree-
with-their-guard`` at step 136): the guard met a 401 in a token outage after its claim, went back
to pending, and the hold canceled it as one that never went out."""

SEED_THAT_STOPS_BEHIND_A_WORD_IN_DOUBT = 384
"""A seed whose stop finds a task's words and completion held back behind an earlier word in doubt
(step 113): the stop's check counts them waiting, not due and left unclaimed."""


def test_a_hold_never_cancels_a_guard_whose_claim_fired_its_rows() -> None:
    Run(SEED_THAT_HOLDS_A_FIRED_GUARD, 200).play()


def test_a_stop_leaves_words_held_back_behind_one_in_doubt_as_they_were() -> None:
    coverage: Counter[str] = Counter()
    Run(SEED_THAT_STOPS_BEHIND_A_WORD_IN_DOUBT, 200, coverage).play()
    assert coverage["stopped and started"] >= 1


SEED_THAT_STOPS_AFTER_THE_WORD_LANDS = 1722
"""A seed whose stop's one flush passed a completion notice over while the word before it waited,
then sent that word (step 98): the notice is looked at again in the same flush, not left for the
next start."""


def test_a_stops_flush_sends_a_completion_once_the_word_it_waited_for_has_gone() -> None:
    Run(SEED_THAT_STOPS_AFTER_THE_WORD_LANDS, 200).play()
