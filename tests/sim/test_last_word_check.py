"""``bin/simulate``'s check ``last-word-never-still-working`` (``tests.sim.whole.last_word``) finds
an attempt's end that ignores its still-running notice in flight, and the
world reaches the race it judges."""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Iterator

import pytest

from shell.ledger import tasks
from tests.sim.whole.last_word import CHECK
from tests.sim.whole.run import Run, Violation

SEED_THAT_REACHES_IT = 216
"""The first seed (of 200 steps) whose world reaches the race and makes the mutant visible, found by
``bin/simulate --stop-at-first`` on a copy with the mutant. A change to the simulated world moves
it: find the new one the same way."""


@pytest.fixture(autouse=True)
def _quiet() -> Iterator[None]:
    logging.disable(logging.WARNING)
    yield
    logging.disable(logging.NOTSET)


def test_the_check_finds_an_end_that_leaves_the_still_running_notice_the_last_word(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    written = tasks.completion_intent

    def blind_to_the_notice_in_flight(*arguments: object, notice_in_flight: bool = False) -> object:
        return written(*arguments, notice_in_flight=False)  # type: ignore[arg-type]

    monkeypatch.setattr(tasks, "completion_intent", blind_to_the_notice_in_flight)
    with pytest.raises(Violation) as found:
        Run(SEED_THAT_REACHES_IT, 200).play()
    assert found.value.check == CHECK


def test_the_same_seed_reaches_the_race_and_runs_clean() -> None:
    coverage: Counter[str] = Counter()
    Run(SEED_THAT_REACHES_IT, 200, coverage).play()
    assert coverage["still-running notice landed after its attempt ended"] >= 1
