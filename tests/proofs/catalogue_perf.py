"""The outbox's claim reads, folded into fewer statements for speed
(``bin/bench outbox``), still read all they must. Same form as ``tests.proofs.catalogue``."""

from __future__ import annotations

from tests.proofs.mutation import Mutation, rule

PERF: list[Mutation] = [
    rule(
        "perf: with nothing due the hold is still asked, and a held flush says held",
        '        return DueNow(connection.execute("SELECT 1 FROM hold_marker").fetchone() is not None, None)\n',
        "        return DueNow(False, None)\n",
        "test_a_flush_under_the_hold_with_nothing_due_says_held",
    ),
    rule(
        "perf: the claim's one statement reads the task rows of the guard's event beside its record",
        "        ClaimTaskRow(_DELIVERY[values[task]], _GUARD[values[task + 1]]) for values in found if values[task] is not None\n",
        "        ClaimTaskRow(_DELIVERY[values[task]], _GUARD[values[task + 1]]) for values in found if False\n",
        "test_a_guard_whose_event_a_worker_acknowledged_is_canceled_at_claim",
    ),
    rule(
        "perf: a crash test's pause step, read once from the environment the process started with, stops it",
        "    if step != _PAUSING_AT:\n        return\n",
        "    return\n",
        "test_outbox_kill.py",
    ),
    rule(
        "perf: a guard's claim asks its event's task rows again only when its snapshot holds an armed one",
        " and row.event_id is not None and any_armed(facts):\n",
        " and row.event_id is not None:\n",
        "test_a_guard_with_no_armed_task_row_is_claimed_without_asking_the_task_rows_again",
    ),
    rule(
        "perf: the claim's snapshot names an armed task row, so the guard's claim still fires it",
        "    return any(found.guard is GuardState.armed for found in facts.task_events)\n",
        "    return False\n",
        "test_a_guard_is_reported_fired_from_its_claim",
    ),
    rule(
        "perf: the claim's partial row still carries the start of a run of retries",
        "Destination(_MESSAGE_KIND[message_kind], bucket_id, recording_id), body, stored_time(since),\n",
        "Destination(_MESSAGE_KIND[message_kind], bucket_id, recording_id), body, None,\n",
        "test_a_request_that_never_reaches_basecamp_for_a_day_is_given_up_for_a_person",
    ),
    rule(
        "perf: a guard's record and the task rows of its event come with its head, in its statement",
        "    if KINDS[kind].needs is ClaimNeeds.event:\n        join = ",
        "    if False:\n        join = ",
        "test_a_due_guard_is_claimed_posted_once_and_receipted",
        "test_a_guards_claim_reads_its_event_in_the_heads_one_statement",
    ),
    rule(
        "perf: a claim is one read: the event's reader asks nothing the head did not bring",
        "    return due.facts\n",
        '    connection.execute("SELECT 1 FROM events").fetchall()\n    return due.facts\n',
        "test_a_guards_claim_reads_its_event_in_the_heads_one_statement",
    ),
    rule(
        "perf: a head read without its event's snapshot is refused, never decided on nothing",
        "    if due.facts is None:\n",
        "    if False:\n",
        "test_a_head_read_without_its_events_snapshot_is_refused_not_claimed",
    ),
    rule(
        "perf: a move binds the state it expects as its plain word, not the enum member",
        "[_moved(expected, to, note), *values, intent_id, _WORD[expected]])",
        "[_moved(expected, to, note), *values, intent_id, expected])",
        "test_a_claim_and_its_receipt_bind_each_state_as_its_plain_word",
    ),
]
