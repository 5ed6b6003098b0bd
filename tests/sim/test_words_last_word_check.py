"""``bin/simulate``'s check ``completion-notice-is-the-last-word`` (``tests.sim.whole.words``) finds
a completion notice claimed before a worker's word still waiting its retry, and the world reaches
the race it judges."""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Iterator
from dataclasses import replace

import pytest

from core.intent_kinds import IntentKind
from core.message_kinds import KINDS, Claim
from tests.sim.whole.run import Run, Violation
from tests.sim.whole.words import LAST_WORD

SEED_THAT_REACHES_IT = 137
"""The first seed (of 200 steps) whose world reaches the race and makes the mutant visible, found by
``bin/simulate --mutants --only 'the completion notice goes before'``. A change to the simulated
world moves it: find the new one the same way (10 before the world's token outages and ids apart)."""


@pytest.fixture(autouse=True)
def _quiet() -> Iterator[None]:
    logging.disable(logging.WARNING)
    yield
    logging.disable(logging.NOTSET)


def test_the_check_finds_a_completion_notice_that_went_before_a_workers_word(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    spec = KINDS[IntentKind.completion]
    monkeypatch.setitem(KINDS, IntentKind.completion, replace(spec, claim=lambda facts: Claim()))
    with pytest.raises(Violation) as found:
        Run(SEED_THAT_REACHES_IT, 200).play()
    assert found.value.check == LAST_WORD


def test_the_same_seed_reaches_the_words_race_and_runs_clean() -> None:
    coverage: Counter[str] = Counter()
    Run(SEED_THAT_REACHES_IT, 200, coverage).play()
    assert coverage["a worker's word fails to connect as its worker finishes"] >= 1
