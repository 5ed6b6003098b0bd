"""The adopted-reply rule (with its filter of the connector's own messages) and progress_at."""

from __future__ import annotations

from tests.proofs.mutation import Mutation, rule

ADOPTED_REPLY: list[Mutation] = [
    rule(
        "adopted reply: exactly one adoptable reply is adopted, several none",
        "    if len(adoptable) != 1:\n        return None\n    (reply_id,) = adoptable\n",
        "    if not adoptable:\n        return None\n    reply_id = min(adoptable)\n",
        "test_two_replies_adopt_neither",
        "test_two_replies_at_the_destination_adopt_neither_and_the_notice_asks_a_person",
        "test_an_adopted_reply_is_the_one_message_every_filter_lets_through",
    ),
    rule(
        "adopted reply: created strictly after the row's delivery",
        "        and message.created_at > delivered_at\n",
        "        and True\n",
        "test_a_reply_at_or_before_delivery_is_not_adopted",
    ),
    rule(
        "adopted reply: created before the task's next acknowledgement",
        "        and (next_ack_at is None or message.created_at < next_ack_at)\n",
        "        and True\n",
        "test_a_reply_after_the_next_acknowledgement_is_not_adopted",
    ),
    rule(
        "adopted reply: the task's next acknowledgement is the earliest later one",
        "    return min(later, default=None)\n",
        "    return None\n",
        "test_the_next_acknowledgement_is_the_earliest_later_one_on_the_task",
    ),
    rule(
        "adopted reply: never the worker's own acknowledgement or reply",
        "        and message.id not in workers_own\n        and message.id not in lifecycle.receipts\n",
        "        and True\n        and message.id not in lifecycle.receipts\n",
        "test_the_workers_own_acknowledgement_is_not_its_reply",
    ),
    rule(
        "adopted reply: never a lifecycle message, by receipt id",
        "        and message.id not in lifecycle.receipts\n",
        "        and True\n",
        "test_a_lifecycle_message_is_never_adopted_by_receipt_or_by_words",
    ),
    rule(
        "adopted reply: never a lifecycle message, by the words of a non-canceled intent",
        "        and message.text not in lifecycle.words\n",
        "        and True\n",
        "test_a_lifecycle_message_is_never_adopted_by_receipt_or_by_words",
        "test_the_one_reply_a_worker_never_reported_is_adopted_not_the_lifecycle_notice",
    ),
    rule(
        "adopted reply: a canceled intent's words never hide a worker's reply",
        "        if state != IntentState.canceled:\n            bodies.append(str(body))\n",
        "        bodies.append(str(body))\n",
        "test_a_canceled_notice_s_words_never_hide_the_worker_s_reply",
    ),
    rule(
        "adopted reply: only an unknown, delivered row with no reply is a candidate",
        "    return row.delivered_at is not None and row.reply_id is None and row.adopted_reply_id is None\n",
        "    return row.delivered_at is not None and row.reply_id is None\n",
        "test_only_an_unknown_delivered_row_without_a_reply_is_a_candidate",
    ),
    rule(
        "adopted reply: every attempt's end is preceded by the listing for its task",
        "        replies = self._replies(launch.task_id, self._shutdown)",
        "        replies = None\n",
        "test_every_settlement_is_preceded_by_the_adopted_reply_rules_listing_for_its_task",
    ),
    rule(
        "adopted reply: recovery's settlement is preceded by the listing too",
        "            replies = self._replies(attempt.task_id, stop)\n",
        "            replies = None\n",
        "test_every_settlement_is_preceded_by_the_adopted_reply_rules_listing_for_its_task",
    ),
    rule(
        "adopted reply: adopted_reply_id is written",
        "        if reply_id is not None and adopt_reply(connection, task_id, row.event_id, reply_id) == 1:\n",
        "        if False:\n",
        "test_the_one_reply_a_worker_never_reported_is_adopted_not_the_lifecycle_notice",
    ),
    rule(
        "adopted reply: adopted in the settlement's transaction, before its completion notice",
        "    if replies is not None:\n        deliveries.adopt_listed(connection, task_id, replies)\n",
        "",
        "test_the_completion_notice_asks_no_person_about_an_event_whose_reply_was_adopted",
        "test_the_one_reply_a_worker_never_reported_is_adopted_not_the_lifecycle_notice",
    ),
    rule(
        "adopted reply: the completion notice asks no person about an event whose reply was adopted",
        "        case EventOutcome.unknown | EventOutcome.none if event.adopted_reply_id is not None:\n",
        "        case EventOutcome.unknown | EventOutcome.none if False:\n",
        "test_an_unknown_event_whose_reply_was_adopted_is_named_without_asking_a_person",
        "test_the_completion_notice_asks_no_person_about_an_event_whose_reply_was_adopted",
    ),
    rule(
        "adopted reply: the notice reads the adopted reply back from the settled rows",
        "adopted_reply_id=adopted, ",
        "adopted_reply_id=None, ",
        "test_the_completion_notice_asks_no_person_about_an_event_whose_reply_was_adopted",
    ),
    rule(
        "adopted reply: a row with a reported outcome is not listed for",
        "    return row.outcome not in (EventOutcome.succeeded, EventOutcome.failed) and _unanswered(row)\n",
        "    return _unanswered(row)\n",
        "test_only_a_row_that_may_become_a_candidate_is_listed_for",
    ),
    rule(
        "progress: a worker's report stamps its attempt's progress_at",
        '        "UPDATE attempts SET progress_at = ? WHERE task_id = ? AND state <> \'ended\'"\n',
        '        "UPDATE attempts SET progress_at = progress_at WHERE ? <> \'\' AND task_id = ? AND state <> \'ended\'"\n',
        "test_a_workers_reports_stamp_its_attempts_progress_at_most_every_thirty_seconds",
        "test_a_still_running_notice_after_a_report_says_when_the_worker_last_progressed",
    ),
    rule(
        "progress: progress_at moves at most every 30 s",
        '        " AND (progress_at IS NULL OR progress_at <= ?)",\n',
        '        " AND (progress_at IS NULL OR progress_at <= ? OR 1)",\n',
        "test_a_workers_reports_stamp_its_attempts_progress_at_most_every_thirty_seconds",
    ),
]
