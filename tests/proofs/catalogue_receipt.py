"""The proofs of ``bin/outbox-resolve sent``'s check of a receipt: message N is read
at the intent's destination and must be the intent's before it is recorded. Same form as
``tests.proofs.catalogue``."""

from __future__ import annotations

from tests.proofs.mutation import Mutation, rule

RECEIPT: list[Mutation] = [
    # core/receipt_check.py
    rule(
        "receipt check: a message at another recording is not the intent's",
        "    if found.at_recording_id != destination.recording_id:\n",
        "    if False:\n",
        "test_a_message_that_differs_is_refused_naming_what_differed",
        "test_a_message_that_is_not_the_intents_is_refused_naming_what_differed",
    ),
    rule(
        "receipt check: someone else's message is not the intent's",
        "    if found.creator_id != agent_id:\n",
        "    if False:\n",
        "test_a_message_that_differs_is_refused_naming_what_differed",
        "test_a_message_that_is_not_the_intents_is_refused_naming_what_differed",
    ),
    rule(
        "receipt check: a message with other words is not the intent's",
        "    if message_text(found.content) != words:\n",
        "    if False:\n",
        "test_a_message_that_differs_is_refused_naming_what_differed",
        "test_a_message_that_is_not_the_intents_is_refused_naming_what_differed",
    ),
    rule(
        "receipt check: a message older than the intent's request is not the intent's",
        "    if found.created_at < since:\n",
        "    if False:\n",
        "test_a_message_that_differs_is_refused_naming_what_differed",
        "test_a_message_that_is_not_the_intents_is_refused_naming_what_differed",
    ),
    rule(
        "receipt check: a worker's own message is not the intent's, however alike the words",
        "    if found.id in worker_messages:\n",
        "    if False:\n",
        "test_a_workers_own_message_with_the_intents_words_is_refused",
        "test_a_workers_own_message_with_the_intents_words_is_refused_as_reconciliation_refuses_it",
    ),
    rule(
        "outbox-resolve sent: the receipt check is given the worker's messages the ledger names",
        "        worker_messages=worker_message_ids(row.destination.kind, workers))",
        "        worker_messages=frozenset())",
        "test_a_workers_own_message_with_the_intents_words_is_refused_as_reconciliation_refuses_it",
    ),
    rule(
        "receipt check: a body without words accepts nothing",
        "    if not words:\n        return Failure(ReceiptRefused(\n",
        "    if False:\n        return Failure(ReceiptRefused(\n",
        "test_a_body_without_words_accepts_nothing",
    ),
    # shell/cli/resolve.py; core/resolution.py; shell/basecamp/reads.py
    rule(
        "outbox-resolve sent reads message N before recording it, unless --unchecked",
        "            checked = not args.unchecked and check_receipt_at_basecamp(context, args.id, args.receipt)\n",
        "            checked = False\n",
        "test_the_agents_message_with_the_intents_words_is_recorded_as_checked",
        "test_a_message_that_is_not_the_intents_is_refused_naming_what_differed",
    ),
    rule(
        "outbox-resolve sent: --unchecked asks Basecamp nothing",
        "            checked = not args.unchecked and check_receipt_at_basecamp(context, args.id, args.receipt)\n",
        "            checked = check_receipt_at_basecamp(context, args.id, args.receipt)\n",
        "test_unchecked_records_without_asking_basecamp_and_says_so",
    ),
    rule(
        "outbox-resolve sent: Basecamp not answering is unavailable (6), not a refusal",
        "    if isinstance(read, ReadFailure) and read.kind is not ReadFailureKind.not_found:\n",
        "    if False:\n",
        "test_a_basecamp_that_does_not_answer_is_unavailable_and_nothing_changes",
    ),
    rule(
        "outbox-resolve sent: an intent the decision refuses anyway is not asked about",
        '    if row is None or "sent" not in open_decisions(row.state, row.note):\n',
        "    if row is None:\n",
        "test_an_intent_the_decision_refuses_anyway_is_not_asked_about",
    ),
    rule(
        "outbox-resolve sent: the note says whether the receipt was checked",
        "            written = notes.RESOLVED_SENT_CHECKED if checked else notes.RESOLVED_SENT_UNCHECKED\n",
        "            written = notes.RESOLVED_SENT_UNCHECKED\n",
        "test_a_receipt_read_and_checked_first_is_recorded_as_checked",
        "test_the_agents_message_with_the_intents_words_is_recorded_as_checked",
    ),
    rule(
        "a boost read alone is placed by its recording and attributed to its booster",
        '                path, person, place = f"boosts/{message_id}", "booster", "recording"\n',
        '                path, person, place = f"boosts/{message_id}", "creator", "parent"\n',
        "test_a_guards_boost_is_read_alone_and_recorded_as_checked",
    ),
]
