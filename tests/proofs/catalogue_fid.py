"""Fidelity: the acknowledgement rule the worker is told, the
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
        "the ledger lets a sending intent back to pending with the token's 401 as its cause (the cause the move writes)",
        '            note = "NEW.note" if edge.notes_written_by_the_move else "OLD.note"\n',
        '            note = "OLD.note"\n',
        'test_a_sending_intent_goes_back_to_pending_with_a_cause',
        'test_the_edge_rule_judges_the_cause_a_move_writes_and_the_note_a_resend_finds',
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
    rule(
        "an attempt that ends while its still-running notice is sending writes the completion notice",
        "    return completion_intent(attempt, settled, origin, now, notice_in_flight=in_flight)",
        "    return completion_intent(attempt, settled, origin, now, notice_in_flight=False)",
        "test_a_worker_that_finishes_while_the_notice_is_between_claim_and_post_leaves_the_end_the_last_word",
        "test_a_still_running_notice_in_flight_when_its_work_ends_lands_once_and_the_end_has_the_last_word",
        "test_the_same_seed_reaches_the_race_and_runs_clean",
    ),
    rule(
        "a still-running notice is in flight while it is sending, not before its claim",
        "\"SELECT 1 FROM outbox WHERE attempt_id = ? AND kind = 'still_running' AND state = 'sending' LIMIT 1\"",
        "\"SELECT 1 FROM outbox WHERE attempt_id = ? AND kind = 'still_running' AND state = 'pending' LIMIT 1\"",
        "test_a_worker_that_finishes_while_the_notice_is_between_claim_and_post_leaves_the_end_the_last_word",
        "test_a_still_running_notice_in_flight_when_its_work_ends_lands_once_and_the_end_has_the_last_word",
    ),
    rule(
        "the completion notice with no event line is the end's first line alone when a notice was in flight",
        "    if not event_lines and not notice_in_flight:",
        "    if not event_lines:",
        "test_an_attempt_whose_events_all_succeeded_with_a_reply_gets_no_notice_unless_one_was_in_flight",
        "test_the_end_with_a_notice_in_flight_writes_the_completion_intent_at_the_reply_destination",
    ),
    rule(
        "a paused step with a resume file goes on once the file exists",
        "    if resume is None:\n        threading.Event().wait()",
        "    if True:\n        threading.Event().wait()",
        "test_a_worker_that_finishes_while_the_notice_is_between_claim_and_post_leaves_the_end_the_last_word",
    ),
    rule(
        "the ledger's own time form is read at once, as the general reading reads it",
        '        return datetime.fromisoformat(text[:26] + "+00:00")',
        '        return datetime.fromisoformat(text[:23] + "+00:00")',
        "test_the_ledgers_form_reads_as_the_general_reading_does_whatever_its_last_three_digits",
    ),
    rule(
        'the claim query asks again past an intent this flush already claimed',
        'if found is not None and found.id in passed_over:',
        'if False:',
        'test_one_flush_never_claims_an_intent_twice_even_after_a_resend_mid_flush',
    ),
]
