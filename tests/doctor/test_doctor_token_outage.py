"""``core.doctor``'s token check reads the ledger's word of a lapsed token: the
running connector's creates were refused (401, after its refresh) and wait, pending."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from core.doctor import AnsweredAs, CheckStatus, Identity, NotAsked, TokenFacts, TokenRefused, token_check
from core.posting import TokenOutage

NOW = datetime(2026, 12, 2, 12, 0, tzinfo=UTC)
AGENT = 1049715901
OUTAGE = TokenOutage(3, "2026-12-02T11:58:00.000000000Z")


@pytest.mark.parametrize(
    ("identity", "verdict"),
    [
        (TokenRefused(), CheckStatus.failing),
        (NotAsked("Basecamp did not say"), CheckStatus.failing),
        (AnsweredAs(7, "Ada"), CheckStatus.failing),
        (AnsweredAs(AGENT, "Claude"), CheckStatus.warning),
    ],
)
def test_creates_refused_for_the_token_make_the_token_check_fail_until_basecamp_answers_it(
    identity: Identity, verdict: CheckStatus
) -> None:
    check = token_check(TokenFacts("/t", outage=OUTAGE), AGENT, identity, NOW)
    assert check.status == verdict
    assert "refused (401, after its refresh) at 2026-12-02T11:58:00" in check.detail
    assert "3 message(s) wait" in check.detail


def test_without_an_outage_a_token_basecamp_answers_as_the_agent_is_not_failing() -> None:
    check = token_check(TokenFacts("/t", expires_at=NOW.replace(day=10)), AGENT, AnsweredAs(AGENT, "Claude"), NOW)
    assert check.status == CheckStatus.ok
