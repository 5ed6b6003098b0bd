"""``bin/connect doctor``'s inbox check: whether Basecamp serves the agent's inbox to this token.

Rules:
1. ``available`` is ok: intake's inbox lane is its backstop for what is addressed to the agent.
2. ``not_for_principal`` (a 403: Basecamp serves the inbox to agent principals only) is a warning,
   not failing: the connector runs as it did before the inbox, hearing by the feed and the live
   lane alone, so an event Basecamp brakes, or one past a stale feed position, can go unheard.
3. ``failing`` (the inbox did not answer, or answered what cannot be read) is a warning too: run
   starts and retries it; a token not asked (Basecamp refused it or did not answer) is a warning
   that says so. Pure, like ``core.doctor``.
"""

from __future__ import annotations

from core.doctor import Check, CheckStatus
from core.intake_status import InboxVerdict

NAME = "inbox"


def inbox_check(verdict: InboxVerdict | None, why: str = "") -> Check:
    """Rules 1 to 3; ``None``: not asked."""
    match verdict:
        case InboxVerdict.available:
            return Check(NAME, CheckStatus.ok, "available to this token: what is addressed to the agent is"
                         " heard even when the feed does not bring it")  # fmt: skip
        case InboxVerdict.not_for_principal:
            return Check(
                NAME, CheckStatus.warning,
                "Basecamp serves no inbox to this token's principal (403: agents only)",
                "intake hears by the feed and the live lane alone: a braked event, or one past a stale"
                " feed position, can go unheard; give the connector an agent principal's token",
            )  # fmt: skip
        case InboxVerdict.failing:
            return Check(NAME, CheckStatus.warning, f"the inbox could not be read: {why}",
                         "run starts and reads it again; see bin/connect status")  # fmt: skip
        case None:
            return Check(NAME, CheckStatus.warning, f"not asked: {why or 'the token was not usable'}",
                         "fix the token check first")  # fmt: skip
