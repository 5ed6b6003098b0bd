"""The rule no test held (the adopted-reply filter's indeterminate half)."""

from __future__ import annotations

from tests.proofs.mutation import Mutation, rule

SIM: list[Mutation] = [
    rule(
        "adopted reply: an indeterminate intent's words hide its message, which may exist with no receipt",
        "        if state != IntentState.canceled:\n",
        "        if state not in (IntentState.canceled, IntentState.indeterminate):\n",
        "test_an_indeterminate_notice_s_message_is_never_adopted_as_the_worker_s_reply",
    ),
]
