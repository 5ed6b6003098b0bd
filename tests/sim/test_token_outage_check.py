"""``bin/simulate``'s check ``a-401-is-never-given-up`` (``tests.sim.whole.token_outage``) finds an
outbox that counts a token outage against the message, and the world reaches a day's outage
ended by a blip."""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Iterator
from datetime import datetime, timedelta

import pytest

from core.admission import BlockedReason
from core.posting import AfterRefusal, Refused, after_refusal
from tests.sim.whole.run import Run, Violation
from tests.sim.whole.token_outage import CHECK

SEED_THAT_REACHES_IT = 4
"""The first seed (of 200 steps) whose world makes the mutant visible: a 401 during a day's
token outage, then a refused connection as sending resumes. Found by ``bin/simulate --mutants
--only outage`` (the seeds it took, less one). A change to the simulated world moves it: find
the new one the same way."""


@pytest.fixture(autouse=True)
def _quiet() -> Iterator[None]:
    logging.disable(logging.WARNING)
    yield
    logging.disable(logging.NOTSET)


def test_the_check_finds_an_outbox_that_counts_a_token_outage_against_the_message(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def blind_to_the_outage(outcome: Refused, now: datetime, retrying_since: datetime | None,
                            waited_due: timedelta = timedelta(0)) -> AfterRefusal:
        return after_refusal(outcome, now, retrying_since, timedelta(0))

    monkeypatch.setattr("shell.outbox.after_refusal", blind_to_the_outage)
    with pytest.raises(Violation) as found:
        Run(SEED_THAT_REACHES_IT, 200).play()
    assert found.value.check == CHECK


def test_the_same_seed_waits_out_a_day_of_401s_and_a_blip_and_runs_clean() -> None:
    coverage: Counter[str] = Counter()
    Run(SEED_THAT_REACHES_IT, 200, coverage).play()
    assert coverage["token outage: over a day"] >= 1
    assert coverage["token outage: a create answered 401"] >= 1
    assert coverage["token outage: the first create after it met a blip"] >= 1


SEED_BLOCKED_FOR_GOOD = 2
"""The first seed whose world blocks a mention during a day's token outage (``bin/simulate
--mutants --only 'retried without end'``, the seeds it took, less one)."""


def test_the_check_finds_a_mention_a_days_401s_left_blocked_for_good(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("core.admission.RETRIED_WITHOUT_END", frozenset({BlockedReason.config_unreadable}))
    with pytest.raises(Violation) as found:
        Run(SEED_BLOCKED_FOR_GOOD, 200).play()
    assert found.value.check == CHECK
    assert "blocked by a 401 and never tried again" in str(found.value)


def test_the_same_seed_retries_that_mention_and_runs_clean() -> None:
    Run(SEED_BLOCKED_FOR_GOOD, 200).play()
