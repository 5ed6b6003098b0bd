"""A request that provably never reached Basecamp goes back to pending, not to canceled."""

from __future__ import annotations

from tests.proofs.mutation import Mutation, rule

NOT_CREATED: list[Mutation] = [
    rule(
        "not created: a request that never reached Basecamp goes back to pending, not to canceled",
        "rows.retry(connection, row.id, note, due_at, since)",
        "rows.cancel(connection, row.id, IntentState.sending, note, now)",
        "test_a_request_that_never_reached_basecamp_goes_back_to_pending_and_is_sent_once",
        "test_a_post_that_never_connects_goes_back_to_pending_and_lands_once_basecamp_is_back",
        "test_a_429_ends_in_exactly_one_message_once_basecamp_is_back",
    ),
    rule(
        "not created: a connection that never opened proves nothing was created",
        "        case RefusalCause.not_connected:\n            return notes.NOT_CONNECTED\n",
        "        case RefusalCause.not_connected:\n            return None\n",
        "test_a_connection_that_never_opened_is_retried_with_its_cause",
        "test_a_post_that_never_connects_goes_back_to_pending_and_lands_once_basecamp_is_back",
    ),
    rule(
        "not created: a request the client never wrote proves nothing was created",
        "        case RefusalCause.not_sent:\n            return notes.NOT_WRITTEN\n",
        "        case RefusalCause.not_sent:\n            return None\n",
        "test_a_request_never_written_is_retried_with_its_cause",
    ),
    rule(
        "not created: a 429 proves nothing was created",
        "case RefusalCause.answered if outcome.status == 429:",
        "case RefusalCause.answered if outcome.status == -429:",
        "test_a_429_is_retried_no_sooner_than_its_retry_after",
        "test_a_429_ends_in_exactly_one_message_once_basecamp_is_back",
    ),
    rule(
        "not created: a 408 proves nothing was created",
        "case RefusalCause.answered if outcome.status == 408:",
        "case RefusalCause.answered if outcome.status == -408:",
        "test_a_408_is_retried",
    ),
    rule(
        "not created: Basecamp's own refusal (any other 4xx) stays canceled with the refused note",
        "        case RefusalCause.answered:\n            return None\n",
        "        case RefusalCause.answered:\n            return notes.REQUEST_TIMEOUT\n",
        "test_basecamp_s_own_refusal_is_canceled_with_the_refused_note",
        "test_a_refused_request_is_canceled_with_the_note_and_never_listed",
    ),
    rule(
        "not created: a retry honours a 429's Retry-After",
        "        wait = max(wait, timedelta(seconds=min(outcome.retry_after_seconds, RETRY_BOUND.total_seconds())))\n",
        "        pass\n",
        "test_a_429_is_retried_no_sooner_than_its_retry_after",
        "test_a_429_ends_in_exactly_one_message_once_basecamp_is_back",
    ),
    rule(
        "not created: the waits between retries grow with the time spent retrying",
        "wait = min(max(tried_for, FIRST_RETRY_WAIT), LONGEST_RETRY_WAIT)",
        "wait = FIRST_RETRY_WAIT",
        "test_the_waits_grow_with_the_time_spent_retrying",
    ),
    rule(
        "not created: after 24 h of retrying it is canceled with its cause, for a person",
        "    if tried_for >= RETRY_BOUND:\n",
        "    if False:\n",
        "test_after_a_day_of_retrying_it_is_given_up_with_its_cause_for_a_person",
        "test_a_request_that_never_reaches_basecamp_for_a_day_is_given_up_for_a_person",
    ),
    rule(
        "not created: the day is counted from the first retry, kept across retries",
        "    since = now if retrying_since is None else min(retrying_since, now)\n",
        "    since = now\n",
        "test_after_a_day_of_retrying_it_is_given_up_with_its_cause_for_a_person",
        "test_a_request_that_never_reaches_basecamp_for_a_day_is_given_up_for_a_person",
    ),
    rule(
        'not created: the ledger keeps when the retries began',
        'note=note, not_before=format_timestamp(due_at), retrying_since=format_timestamp(since), sending_at=None,',
        'note=note, not_before=format_timestamp(due_at), sending_at=None,',
        'test_a_request_that_never_reaches_basecamp_for_a_day_is_given_up_for_a_person',
    ),
    rule(
        "not created: sending -> pending only with a cause proving nothing was created (the table)",
        "        only_with_notes=NOT_CREATED_NOTES,\n",
        "        only_with_notes=None,\n",
        "test_a_sending_intent_without_a_cause_proving_nothing_was_created_never_goes_back",
    ),
    rule(
        'not created: sending -> pending only with a cause proving nothing was created (generated rule)',
        '                f"({pair} = {_quote(f\'{edge.source}>{edge.target}\')} AND {_one_of(note, sorted(edge.only_with_notes))})"\n',
        '                f"({pair} = {_quote(f\'{edge.source}>{edge.target}\')})"\n',
        'test_a_sending_intent_without_such_a_cause_never_goes_back_to_pending',
    ),
    rule(
        "not created: an intent given up after a day may be resent by a person",
        "RESENDABLE_NOTES = frozenset({REFUSED_NOTE}) | GIVEN_UP_NOTES",
        "RESENDABLE_NOTES = frozenset({REFUSED_NOTE})",
        "test_a_person_may_resend_an_intent_given_up_after_a_day_unreached",
        "test_an_intent_given_up_after_a_day_unreached_may_be_sent_again_by_a_person",
    ),
    rule(
        "not created: a person's resend starts a new day of retries",
        'dict.fromkeys(("sending_at", "finished_at", "reconcile_at", "retrying_since"))',
        'dict.fromkeys(("sending_at", "finished_at", "reconcile_at"))',
        'test_a_resent_intent_counts_its_day_afresh',
    ),
]
