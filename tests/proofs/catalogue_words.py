"""The proofs of a worker's words through the connector: the intents the tools
write, the Markdown's allowlist, the outbox recording a landed id, and the urgency of the words."""

from __future__ import annotations

from tests.proofs.mutation import Mutation, rule

WORDS: list[Mutation] = [
    rule(
        "words: ack_dispatch's text is written as an intent with the move to delivered",
        "        self._words_and_progress(connection, task_id, event_id, decision.words)\n\n    def _speak(",
        "        self._words_and_progress(connection, task_id, event_id, None)\n\n    def _speak(",
        "test_an_acknowledgement_in_a_few_words_is_a_boost_written_with_the_move_to_delivered",
    ),
    rule(
        "words: an acknowledgement that fits a boost is a boost on the recording that asked",
        "    if len(words) <= BOOST_LIMIT and \"\\n\" not in words and record.recording_id > 0:",
        "    if False:",
        "test_an_acknowledgement_in_a_few_words_is_a_boost_written_with_the_move_to_delivered",
    ),
    rule(
        "words: a comment's Markdown is rendered to Basecamp's rich text",
        "    body = render_markdown(words) if message_kind is MessageKind.comment else words\n",
        "    body = words\n",
        "test_a_longer_acknowledgement_is_a_comment_in_basecamps_rich_text",
    ),
    rule(
        "words: a repeated note is the same message, not another",
        "    if any(spoken.key == words.key for spoken in row.words):",
        "    if False:",
        "test_notes_are_one_message_per_text_bounded_per_event_and_end_at_completion",
    ),
    rule(
        "words: notes are bounded per event",
        "    if notes >= MAX_NOTES:",
        "    if False:",
        "test_notes_are_one_message_per_text_bounded_per_event_and_end_at_completion",
    ),
    rule(
        "words: a message over its bound is refused with the bound",
        "    if len(words) > MAX_MESSAGE_CHARACTERS:",
        "    if False:",
        "test_too_long_or_empty_words_are_refused_with_the_bound_and_nothing_is_written",
    ),
    rule(
        "words: a guard that fired leaves the worker's acknowledgement unposted",
        "        worker_words.GUARD_FIRED if row.guard == GuardState.fired",
        "        worker_words.GUARD_FIRED if False",
        "test_a_guard_that_already_fired_leaves_the_workers_acknowledgement_unposted",
    ),
    rule(
        "words: other words for an acknowledgement already given are a second acknowledgement",
        "        if spoken.body == words.body:\n            return Success(Acknowledge(write=False, ack_id=None))\n"
        "        return refused(",
        "        if True:\n            return Success(Acknowledge(write=False, ack_id=None))\n"
        "        return refused(",
        "test_a_repeated_call_is_one_message_and_other_words_are_a_second_acknowledgement",
    ),
    rule(
        "words: the call waits for the outbox and answers the message's id",
        "        if spoken is None or settled(spoken):\n            return receipt\n        clock",
        "        if True:\n            return receipt\n        clock",
        "test_the_call_answers_the_messages_id_when_the_outbox_posts_it_within_the_wait",
    ),
    rule(
        "words: a call reads back the words of its own event and task, not the ids swapped",
        'connection.execute(_WORDS + " ORDER BY id", (event_id, task_id)))',
        'connection.execute(_WORDS + " ORDER BY id", (task_id, event_id)))',
        "test_a_call_reads_back_the_words_of_its_own_event_and_task_not_the_ids_swapped",
    ),
    rule(
        "words: a landed worker message is recorded on its own task's row of its event, not the ids swapped",
        "    changed = connection.execute(sql, (receipt_id, task_id, event_id)).rowcount",
        "    changed = connection.execute(sql, (receipt_id, event_id, task_id)).rowcount",
        "test_the_outbox_posts_each_once_and_records_its_id_as_the_events_ack_and_reply",
        "test_reconciliation_adopting_a_workers_reply_records_it_as_the_reply",
        "test_a_person_marking_a_workers_reply_sent_records_it_as_the_reply",
    ),
    rule(
        "words: a reply on its way is the worker's reply of that task's row, joined event to event and task to task",
        '" AND o.task_id = te.task_id AND o.kind = \'worker_reply\' AND o.state <> \'canceled\')"',
        '" AND o.task_id = te.event_id AND o.kind = \'worker_reply\' AND o.state <> \'canceled\')"',
        "test_a_reply_on_its_way_is_a_reply_to_the_completion_notice",
        also=(("EXISTS (SELECT 1 FROM outbox o WHERE o.event_id = te.event_id", "EXISTS (SELECT 1 FROM outbox o WHERE o.event_id = te.task_id"),),
    ),
    rule(
        "words: a landed worker message is recorded as the event's ack_id or reply_id",
        "    deliveries.record_worker_message(connection, row.kind, row.task_id, row.event_id, receipt_id)",
        "    pass",
        "test_the_outbox_posts_each_once_and_records_its_id_as_the_events_ack_and_reply",
        "test_the_workers_words_are_posted_once_each_and_answered_with_their_ids",
    ),
    rule(
        "words: reconciliation's adoption records the worker's id too",
        "                    landed(connection, current, receipt_id, notes.ADOPTED, now)",
        "                    rows.record_receipt(connection, current.id, receipt_id, notes.ADOPTED, now)",
        "test_reconciliation_adopting_a_workers_reply_records_it_as_the_reply",
        "test_the_connector_killed_after_basecamp_created_the_reply_adopts_it_and_posts_nothing",
    ),
    rule(
        "words: a person's sent records the worker's id too",
        "        deliveries.record_worker_message(connection, row.kind, row.task_id, row.event_id, move.receipt_id)",
        "        pass",
        "test_a_person_marking_a_workers_reply_sent_records_it_as_the_reply",
    ),
    rule(
        "words: a reply on its way is a reply to the completion notice",
        "        case EventOutcome.succeeded if event.reply_on_its_way:\n            return None\n",
        "",
        "test_a_reply_on_its_way_is_a_reply_to_the_completion_notice",
    ),
    rule(
        "words: an ack id is written later only as its own worker intent's receipt (migration 15)",
        "       AND event_id = NEW.event_id AND receipt_id = NEW.ack_id))",
        "       AND event_id = NEW.event_id))",
        "test_an_ack_id_is_recorded_only_as_its_own_worker_intents_receipt",
    ),
    rule(
        "words: a worker's words name the task row they report on (migration 15)",
        " AND NOT EXISTS (SELECT 1 FROM task_events WHERE task_id = NEW.task_id AND event_id = NEW.event_id)",
        " AND 0",
        "test_a_workers_words_name_the_task_row_they_report_on",
    ),
    rule(
        "words: the outbox's kinds name the worker's three (the vocabulary is IntentKind)",
        '        ("outbox", "kind", values(IntentKind)),\n',
        '        ("outbox", "kind", values(IntentKind)[:4]),\n',
        'test_a_workers_words_name_the_task_row_they_report_on',
        'test_the_generated_vocabularies_are_the_migrations_lists',
    ),
    rule(
        "words: a worker's note and reply share one urgency tier, oldest first",
        "    IntentKind.worker_note: KindSpec(\"the worker's note\", 2, ClaimNeeds.words,",
        "    IntentKind.worker_note: KindSpec(\"the worker's note\", 5, ClaimNeeds.words,",
        "test_the_outbox_posts_each_once_and_records_its_id_as_the_events_ack_and_reply",
        "test_a_workers_words_go_after_the_guard_and_before_the_connectors_notices",
    ),
    rule(
        "words: a worker's acknowledgement is as urgent as the guard",
        "    IntentKind.worker_ack: KindSpec(\"the worker's acknowledgement\", 0, ClaimNeeds.words,",
        "    IntentKind.worker_ack: KindSpec(\"the worker's acknowledgement\", 2, ClaimNeeds.words,",
        "test_a_workers_words_go_after_the_guard_and_before_the_connectors_notices",
    ),
    rule(
        "words: the adopted-reply rule never adopts a worker's words the connector posted",
        "        receipts, bodies = outbox.lifecycle_at(connection, destination)",
        "        receipts, bodies = frozenset(), []",
        "test_the_adopted_reply_rule_never_adopts_a_workers_words_the_connector_posted",
    ),
    rule(
        "rich text: the worker's text is escaped, never markup",
        "        elif not edge:\n            out.append(_escape(str(token.content)))",
        "        elif not edge:\n            out.append(str(token.content))",
        "test_html_the_worker_writes_is_text_not_markup",
    ),
    rule(
        "rich text: a link keeps its href only for http(s) and mailto",
        "    return value if value.lower().startswith(LINK_SCHEMES) else None",
        "    return value",
        "test_a_link_to_anything_but_the_web_or_mail_is_text",
    ),
    rule(
        "rich text: every heading is Basecamp's one heading, h1",
        '"heading": "h1",',
        '"heading": "h2",',
        "test_every_tag_written_is_on_the_allowlist_and_only_a_link_has_an_attribute",
        "test_markdown_becomes_basecamps_rich_text",
    ),
    rule(
        "the last word: a worker's word or the completion notice waits while an earlier word of its task has not landed",
        "    return HoldBack() if facts.earlier_words_waiting else Claim()\n",
        "    return Claim()\n",
        "test_a_note_waiting_its_retry_as_the_attempt_ends_lands_before_the_completion_notice",
        "test_an_acknowledgement_waiting_its_retry_lands_before_the_reply",
        "test_a_word_or_completion_waits_while_an_earlier_word_of_its_task_has_not_landed",
    ),
    rule(
        "the last word: only an earlier word of the same task holds one back",
        "AND task_id = ? AND id < ?\"",
        "AND task_id <> ? AND id < ?\"",
        "test_the_claim_reads_whether_an_earlier_word_of_the_same_task_has_not_landed",
    ),
    rule(
        "the last word: a word in doubt (sending) has not landed",
        "\"SELECT 1 FROM outbox WHERE state IN ('pending', 'sending') AND task_id",
        "\"SELECT 1 FROM outbox WHERE state IN ('pending') AND task_id",
        "test_the_claim_reads_whether_an_earlier_word_of_the_same_task_has_not_landed",
    ),
    rule(
        "the last word: a later word holds nothing back",
        "AND task_id = ? AND id < ?\"",
        "AND task_id = ? AND id <> ?\"",
        "test_the_claim_reads_whether_an_earlier_word_of_the_same_task_has_not_landed",
    ),
    rule(
        "the last word: a word held back counts toward no flush limit",
        "            taken += result is not SendResult.held_back\n",
        "            taken += 1\n",
        "test_a_word_held_back_counts_toward_no_flush_limit",
    ),
    rule(
        "a reply that could not be posted: its refusal or give-up writes the ended attempt's completion notice",
        "                        tasks.read_completion_again(connection, row.task_id, now)\n",
        "                        pass\n",
        "test_a_reply_basecamp_refuses_after_the_attempt_ended_is_named_by_a_completion_notice",
        "test_a_reply_given_up_after_the_attempt_ended_is_named_by_a_completion_notice",
        "test_a_reply_refused_while_the_completion_waits_is_named_in_it",
    ),
    rule(
        "a reply that could not be posted: a completion notice still pending is rewritten to name it",
        "ON CONFLICT (intent_key) DO UPDATE SET body = excluded.body WHERE outbox.state = 'pending'\"",
        "ON CONFLICT (intent_key) DO NOTHING\"",
        "test_a_reply_refused_while_the_completion_waits_is_named_in_it",
    ),
    rule(
        "a reply that could not be posted: a completion notice already sent keeps its words",
        "ON CONFLICT (intent_key) DO UPDATE SET body = excluded.body WHERE outbox.state = 'pending'\"",
        "ON CONFLICT (intent_key) DO UPDATE SET body = excluded.body\"",
        "test_a_completion_notice_already_sent_is_never_rewritten",
    ),
    rule(
        "a reply that could not be posted: the completion notice says so of the event",
        "        case EventOutcome.succeeded if event.reply_not_posted:\n"
        "            return f\"Event {identifier}: succeeded, but its reply could not be posted.\"\n",
        "",
        "test_a_success_whose_reply_could_not_be_posted_is_named_so_and_asks_nothing",
        "test_a_reply_basecamp_refuses_after_the_attempt_ended_is_named_by_a_completion_notice",
    ),
    rule(
        "a reply that could not be posted: the settlement's read-back sees a reply refused or given up",
        "reply_on_its_way=bool(on_its_way), reply_not_posted=bool(not_made),",
        "reply_on_its_way=bool(on_its_way), reply_not_posted=False,",
        "test_a_reply_basecamp_refuses_after_the_attempt_ended_is_named_by_a_completion_notice",
        also=(("                        row.reply_on_its_way, row.reply_not_posted)",
               "                        row.reply_on_its_way)"),),
    ),
    rule(
        "a reply that could not be posted: a person's resend of it reads the waiting completion notice again",
        "row.task_id is not None:\n        tasks.read_completion_again(connection, row.task_id, now)",
        "row.task_id is not None:\n        pass",
        "test_a_refused_reply_a_person_resends_is_taken_out_of_the_completion_notice_still_waiting",
    ),
    rule(
        "a reply that could not be posted: a completion notice already written stays a notice, read again",
        "    in_flight = written or snapshots.still_running_in_flight(connection, attempt_id)",
        "    in_flight = snapshots.still_running_in_flight(connection, attempt_id)",
        "test_a_refused_reply_a_person_resends_is_taken_out_of_the_completion_notice_still_waiting",
    ),
]
