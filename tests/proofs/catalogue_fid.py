"""Issue 24's fidelity half (parts 4, 5, 6, 8): the acknowledgement rule the worker is told, the
demo's paced reads, a lapsed token as an outage, and the notice in flight when its reason ends.
Same form as ``tests.proofs.catalogue``."""

from __future__ import annotations

from tests.proofs.mutation import Mutation, rule

FID: list[Mutation] = [
    rule(
        "the worker is told to acknowledge only when acknowledge is true and guard_acknowledged false",
        'ACKNOWLEDGE_WHEN: tuple[tuple[str, bool], ...] = (("acknowledge", True), ("guard_acknowledged", False))',
        'ACKNOWLEDGE_WHEN: tuple[tuple[str, bool], ...] = (("guard_acknowledged", False),)',
        "test_a_worker_acknowledges_only_when_acknowledge_is_true_and_guard_acknowledged_false",
        "test_the_worker_acknowledges_as_its_prompt_says_and_no_more",
    ),
    rule(
        "the bundled worker acknowledges as its prompt says, never by a reading of its own",
        "        if acknowledgement_called_for(instruction):",
        '        if not instruction.get("guard_acknowledged"):',
        "test_the_worker_acknowledges_as_its_prompt_says_and_no_more",
    ),
    rule(
        "a demo read still answered 429 after the client's retries waits its Retry-After and asks again",
        "            while answer.status in THROTTLED:",
        "            while False:",
        "test_a_read_still_rate_limited_after_the_clients_retries_waits_each_retry_after_and_is_answered",
    ),
    rule(
        "a 401 on a create, after the one refresh, is not created: pending again, never Basecamp's refusal",
        "        case RefusalCause.answered if outcome.status == 401:\n            return notes.TOKEN_REFUSED\n",
        "",
        "test_a_401_after_the_refresh_is_the_tokens_outage_pending_at_once_and_never_a_persons_resend",
        "test_a_401_returns_the_claim_to_pending_and_nothing_more_is_claimed_until_a_read_succeeds",
        "test_a_lapsed_token_stops_sending_is_named_by_status_and_doctor_and_sending_resumes",
    ),
    rule(
        "a 401 is due again at once and never given up for a person",
        "    if cause == notes.TOKEN_REFUSED:\n        return Retry(cause, now, since)\n",
        "",
        "test_a_401_after_the_refresh_is_the_tokens_outage_pending_at_once_and_never_a_persons_resend",
        "test_a_401_returns_the_claim_to_pending_and_nothing_more_is_claimed_until_a_read_succeeds",
    ),
    rule(
        "after a 401 on a create nothing more is claimed until a read with the token succeeds",
        "        if outcome.cause is RefusalCause.not_connected or after.note == notes.TOKEN_REFUSED:",
        "        if outcome.cause is RefusalCause.not_connected:",
        "test_a_401_returns_the_claim_to_pending_and_nothing_more_is_claimed_until_a_read_succeeds",
        "test_a_lapsed_token_stops_sending_is_named_by_status_and_doctor_and_sending_resumes",
    ),
    rule(
        "the ledger lets a sending intent back to pending with the token's 401 as its cause",
        "         OR NEW.note = 'not created: Basecamp refused the token (401)'))",
        "))",
        "test_a_sending_intent_goes_back_to_pending_with_a_cause",
        "test_the_edge_trigger_knows_the_not_created_notes_by_core_s_words",
    ),
    rule(
        "status names a lapsed token from the intents waiting on it",
        "            token_outage=token_outage(connection),\n",
        "",
        "test_a_lapsed_token_stops_sending_is_named_by_status_and_doctor_and_sending_resumes",
    ),
    rule(
        "doctor's token check fails on the running connector's creates refused for the token",
        "    if token.outage is not None:\n        return _outage_check(token, token.outage, agent_id, identity)\n",
        "",
        "test_creates_refused_for_the_token_make_the_token_check_fail_until_basecamp_answers_it",
        "test_a_lapsed_token_stops_sending_is_named_by_status_and_doctor_and_sending_resumes",
    ),
]
